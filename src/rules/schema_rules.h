#pragma once
/// \file
/// The rules of onnx's operator schemas for one node — what onnx's checker (OpSchema::Verify) and ONNX
/// Runtime refuse when they load a model: an attribute the operator does not define at the model's opset,
/// an attribute of the wrong type, too many or too few inputs or outputs, an empty required input, a
/// required attribute missing. Said in rnnstate's words (docs/validation.md), one rule per message.

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>

namespace rnnstate {

/// The rules of an attribute's form that need no schema, for any node rnnstate judges: no attribute
/// given twice, every attribute with a type. The first broken one ("attribute 'hidden_size' is given
/// twice", "attribute 'hidden_size' has no type"), or "".
std::string AttributeFormViolation(const onnx::NodeProto& node);

/// What `schema` (the operator's at `opset` of its domain) finds wrong with `node`, in two parts that
/// model_rules reports on either side of the control-flow rules (control_flow.h), so that a missing
/// `else_branch` is said as such rather than as a missing required attribute.
struct SchemaViolation {
  /// An attribute the schema does not define ("attribute 'layout' is not defined by LSTM at ai.onnx
  /// opset 7 (only from opset 14)"), or one of another type ("attribute 'then_branch' is not a graph").
  std::string attributes;
  /// Inputs or outputs out of the schema's range ("has 4 outputs, but LSTM takes 0 to 3"), an empty
  /// required input or output, a required attribute missing; or onnx's own words for anything else
  /// OpSchema::Verify refuses.
  std::string arity;
};

/// Runs OpSchema::Verify on `node`; when it refuses the node, says why (SchemaViolation). Both parts are
/// empty when Verify accepts the node.
SchemaViolation SchemaRuleViolation(const onnx::NodeProto& node, const onnx::OpSchema& schema, int64_t opset);

/// "ai.onnx opset 14", "com.microsoft opset 1": a domain and version as messages name them.
std::string OpsetText(const std::string& domain, int64_t opset);

}  // namespace rnnstate
