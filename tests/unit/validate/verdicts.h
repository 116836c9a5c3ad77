#pragma once
/// \file
/// For the validation's fault-injection tests: ValidateRewritten's verdict as a string ("" when a model
/// passes, else the error it gives), and the faults more than one file injects.

#include <onnx/onnx_pb.h>

#include <string>

#include "rnnstate/error.h"
#include "test_names.h"
#include "validate/validate.h"

namespace rnnstate::testing {

/// Gives `node` an attribute no schema has ("no_such_attribute"): a fault onnx's checker refuses.
inline void AddUnknownAttribute(onnx::NodeProto& node) {
  onnx::AttributeProto* bogus = node.add_attribute();
  bogus->set_name("no_such_attribute");
  bogus->set_type(onnx::AttributeProto::INT);
  bogus->set_i(1);
}

/// ValidateRewritten's verdict on `model` (the region first, as a rewrite runs it): "" or the error; with
/// " [the validation changed the model]" after it when the model it validated (a copy of `model`, which it
/// infers in place) did not end as it began.
inline std::string ValidationVerdict(const onnx::ModelProto& model, const ValidationBaseline& baseline) {
  onnx::ModelProto validated = model;
  std::string verdict;
  try {
    ValidateRewritten(validated, baseline);
  } catch (const Error& e) {
    verdict = e.what();
  }
  if (validated.SerializeAsString() != model.SerializeAsString()) verdict += " [the validation changed the model]";
  return verdict;
}

/// The verdict with the region left out (onnx's checker and inference on the whole model).
inline std::string WholeValidationVerdict(const onnx::ModelProto& model, ValidationBaseline baseline) {
  baseline.input = InferredModel{};
  return ValidationVerdict(model, baseline);
}

}  // namespace rnnstate::testing

namespace rnnstate::test_names {

using testing::AddUnknownAttribute;
using testing::ValidationVerdict;
using testing::WholeValidationVerdict;

}  // namespace rnnstate::test_names
