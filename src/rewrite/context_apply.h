#pragma once
/// \file
/// Executes the context edits of a plan (context_plan.h), in two steps around the state edits, which
/// address nodes by their index in the model as it was planned: first the readers of each value are
/// redirected to the concatenation (no node moves), then the new inputs, defaults, nodes and outputs are
/// added (nodes at the front of the value's graph: they read only its inputs and their own constants).

#include <onnx/onnx_pb.h>

#include <vector>

#include "rewrite/context_plan.h"

namespace rnnstate {

/// Step 1: every planned reader of each new context reads the concatenation instead of the value (its
/// inputs and its subgraphs' reads). Run before anything moves the model's nodes. Throws Error(kInternal)
/// when the plan does not fit the model.
void RedirectContextReaders(const std::vector<ContextEdit>& contexts, onnx::ModelProto& model);

/// Step 2: the context inputs and their defaults (or their removal, required mode), the Concat and Slice
/// nodes, and the context outputs.
void AddContextStates(const std::vector<ContextEdit>& contexts, onnx::ModelProto& model);

}  // namespace rnnstate
