#pragma once
/// \file
/// The state tensors a runtime carries for a model, read from its `rnnstate` metadata alone: one per
/// packed value, or one per distinct state input (the rows of a stacked tensor are one tensor). What
/// `rnnstate export` turns into a serving runtime's configuration.

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "rnnstate/metadata.h"
#include "rnnstate/packed_metadata.h"

namespace rnnstate {

/// One tensor fed as input and returned as output, call after call.
struct StateTensor {
  std::string input;
  std::string output;
  std::string dtype;
  std::vector<MetaDim> shape;
  int64_t batch_axis = -1;
  bool sequence = false;                ///< a packed Sequence<Tensor>, not a tensor
  std::vector<std::string> empty_init;  ///< the state inputs (members) whose default is not zeros
  bool streamable = true;
  bool optional = false;  ///< the input has a default (an initializer of its name)
  /// The state inputs (members) that do not stream (bidirectional, reverse, sequence_lens).
  std::vector<std::string> not_streamable;
  /// The model's own tensor of several states (rows or regions of it), kept in its layout by
  /// --state-layout batch-first.
  bool stacked = false;
};

/// One warning per state tensor holding states that do not stream: carried from one call (request) to
/// the next, they give other results than one full run. `runtime` names what carries them.
std::vector<std::string> NotStreamableWarnings(const std::vector<StateTensor>& tensors, const std::string& runtime);

/// The state tensors of `model`. Throws Error(kBadInput) for invalid metadata or pairs without the
/// contract fields, Error(kUnsupported) for a model without recorded pairs.
std::vector<StateTensor> StateTensorsOf(const onnx::ModelProto& model);

}  // namespace rnnstate
