#pragma once
/// \file
/// One verdict for every command: the rules of the ONNX spec a model must keep before rnnstate reads it.
/// `rewrite` (also --dry-run), `report` and `check`, and the library façade, all index a model through
/// IndexValidModel, so that they refuse the same models with the same message (exit 3). The rules and
/// their messages are listed in docs/validation.md; what is valid but not supported (another
/// domain, an opset onnx 1.12 does not know, sequence_lens, opset < 7) is not judged here.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <string>

#include "graph/model_index.h"
#include "rnnstate/options.h"

namespace rnnstate {

/// Oldest ai.onnx opset supported: LSTM/GRU/RNN-7 introduced today's signature.
inline constexpr int64_t kMinOpset = 7;

/// The first rule `model` breaks that can be checked without indexing it, as "GRAPH: WHAT: RULE", or "":
/// its structure (StructuralProblem: names defined before use and once, graph outputs defined), then
/// every node of the default domain at any depth, in the graph and in the model's functions (GRAPH
/// "function 'local.F'"): an op_type, an operator its ai.onnx opset has, attributes given once and
/// typed, the rules of the recurrent operators that need no types (op_rules.h), the attributes, inputs
/// and outputs onnx's schema allows (schema_rules.h; judged at the opsets onnx 1.12 knows), and for
/// control flow what ContainerRuleViolation requires (If branches, Loop and Scan bodies, inputs).
/// ONNX Runtime's DynamicQuantizeLSTM is judged by its schema and its row of the operator table; other
/// domains are not judged. The values of inline tensors (tensor_data.h) are checked with `kCheck` only.
std::string FirstStructuralViolation(const onnx::ModelProto& model,
                                     InlineTensors inline_tensors = InlineTensors::kCheck);

/// The first rule a state owner of the indexed model breaks, or "": each kind of owner contributes its
/// rules (see kOwnerRules in model_rules.cc; today the type and shape rules of op_rules.h).
std::string FirstOwnerViolation(const ModelIndex& index);

/// Indexes `model` once it is known to be valid. Throws Error(kBadInput, "invalid model: " + the first
/// violation): structure and containers are checked before the index is built (so onnx shape inference
/// never runs on a broken graph), the rules of every state owner and of the view operators
/// (view_rules.h) after (they read inferred types). `structure_valid`, when given, is called once the
/// structure and containers passed, before the index is built (work that may start from there on).
/// `inline_tensors` as FirstStructuralViolation's.
ModelIndex IndexValidModel(const onnx::ModelProto& model, const std::function<void()>& structure_valid = {},
                           InlineTensors inline_tensors = InlineTensors::kCheck);

}  // namespace rnnstate
