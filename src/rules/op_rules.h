#pragma once
/// \file
/// The rules of the recurrent operators' spec, read from their rows of the operator table (recurrent_ops.h):
/// required inputs, attribute values (`direction`, `hidden_size`, `layout` and the opset that has it,
/// `activations`), the element types of each type constraint and the shapes the hidden size and the
/// direction fix. model_rules runs them on every node of a table operator before any analysis (a node
/// that breaks one makes the model invalid); recurrent_node runs them again so that an unchecked model
/// (a test, a library caller) never has such a node rewritten.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <string>

#include "graph/model_index.h"
#include "states/recurrent_ops.h"

namespace rnnstate {

/// The declared or inferred type of a name where the node is, or nullptr when unknown.
using TypeLookup = std::function<const onnx::TypeProto*(const std::string& name)>;

/// The first rule of `op`'s spec that `node` breaks without looking at types, as the rule's text ("hidden_size
/// 0 is not positive"), or "". `opset` is the version of `op`'s domain that the node's model or function
/// imports (0 when unknown: opset-dependent rules are then not checked).
std::string OpRuleViolationWithoutTypes(const onnx::NodeProto& node, const RecurrentOp& op, int64_t opset);

/// The first rule about the types and shapes of `node`'s inputs that it breaks: element types of the type
/// constraints, and the shapes of X, W, R, B, the initial states and P for the hidden size (the attribute,
/// else read from the weights as the analysis reads it) and the number of directions. Unknown types and
/// dimensions break no rule.
std::string OpRuleViolationOfTypes(const onnx::NodeProto& node, const RecurrentOp& op, const TypeLookup& type_of);

/// Both: the first rule `node` breaks, or "".
std::string OpRuleViolation(const onnx::NodeProto& node, const RecurrentOp& op, int64_t opset,
                            const TypeLookup& type_of);

/// The version of `op`'s domain that `model` imports (0 when it imports none).
int64_t OpsetOf(const onnx::ModelProto& model, const RecurrentOp& op);

/// The first node of a table operator in the indexed model's graphs whose types or shapes break a rule
/// (OpRuleViolationOfTypes), as "GRAPH: OP 'label': RULE" (e.g. "main: LSTM 'lstm': input R 'R' has shape
/// [1,16,4], but ..."), or "". The rules without types are checked before indexing (model_rules).
std::string FirstOpRuleViolation(const ModelIndex& index);

}  // namespace rnnstate
