#pragma once
/// \file
/// Part of stage 6 (ApplyPlan): the nodes and initializers that computed a replaced initial state, removed
/// once nothing reads them.

#include <set>
#include <string>

#include <onnx/onnx_pb.h>

namespace rnnstate {

/// Removes the nodes (and initializers) of `graph` that computed the values `dropped` (initial states
/// a rewrite replaced) and are now unused, following their reads back. Starts only from the replaced
/// values, so dead code the model already had is left alone.
void PruneDropped(onnx::GraphProto& graph, const std::set<std::string>& dropped);

}  // namespace rnnstate
