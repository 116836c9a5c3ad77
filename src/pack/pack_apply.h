#pragma once
/// \file
/// Executes a PackPlan (see pack_plan.h): the unpacking nodes go first in the main graph, the packing
/// nodes last; the states' own inputs, their defaults and their outputs leave the graph's interface, the
/// packed inputs and outputs take their place. The metadata is written by the caller.

#include <onnx/onnx_pb.h>

#include "graph/naming.h"
#include "pack/pack_plan.h"

namespace rnnstate {

/// Applies `plan` to `model` (the model it was planned from). Small helper constants (axes, sizes,
/// shapes) are named from `names`, the allocator the plan was made with; nodes from `node_names`.
void ApplyPack(const PackPlan& plan, onnx::ModelProto& model, NameAllocator& names, NameAllocator& node_names);

}  // namespace rnnstate
