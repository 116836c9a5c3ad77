#pragma once
/// \file
/// The only code that mutates a model. Executes a Plan made for exactly this model.

#include <onnx/onnx_pb.h>

#include "rewrite/plan.h"

namespace rnnstate {

/// Applies `plan` to `model` (the model the plan was made from). Throws Error(kInternal) if the plan
/// does not fit the model.
void ApplyPlan(const Plan& plan, onnx::ModelProto& model);

}  // namespace rnnstate
