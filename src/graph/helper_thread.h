#pragma once
/// \file
/// Work a stage starts beside its own (onnx's checker on the input, a structural copy, the index's
/// structure, freeing the index): on a thread of its own where the model is large enough for the overlap
/// to pay for starting one, else deferred to the thread that waits for it. On the zoo of small models a
/// thread cost more than the work it carried: five a file, each a clone, a stack touched afresh and a
/// futex wake, about a third of a `rewrite -j 1` run's CPU time spent in the kernel.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <future>
#include <utility>

namespace rnnstate {

/// Nodes, at any depth, from which a model's helper work runs on a thread of its own. Below it the work
/// (onnx's checker at a few thousand instructions a node, a copy, an index) takes about as long as
/// starting and joining a thread.
inline constexpr int64_t kNodesWorthAThread = 256;

/// True when `model` holds at least kNodesWorthAThread nodes, counted at any depth (stops counting there).
bool WorthAThread(const onnx::ModelProto& model);

/// std::async of `work`: std::launch::async when WorthAThread(model), else std::launch::deferred — run by
/// the future's get() or wait() on the thread that calls it, and not at all when neither is called. The
/// work must only read what stays unchanged until then.
template <typename Work>
auto StartBeside(const onnx::ModelProto& model, Work&& work) {
  return std::async(WorthAThread(model) ? std::launch::async : std::launch::deferred, std::forward<Work>(work));
}

}  // namespace rnnstate
