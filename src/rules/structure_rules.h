#pragma once
/// \file
/// The structure every model must have, input or rewritten: each value defined once and before it is
/// read, in its scope or an enclosing one; unique graph inputs and outputs. Checked on every input model
/// (model_rules.h) and on every rewrite before onnx's own checks (validate/validate.h).

#include <onnx/onnx_pb.h>

#include <string>

namespace rnnstate {

/// Only the structural part of ValidateRewritten, returning the first problem as "GRAPH: PROBLEM" or "":
/// a name read before anything defines it (undefined, or nodes out of order / in a cycle), a name defined
/// twice in one graph, a duplicate graph input or output, a graph output nothing defines. Also run on
/// every input model (model_rules.h).
std::string StructuralProblem(const onnx::ModelProto& model);

}  // namespace rnnstate
