#include "model_rules.h"

#include <onnx/defs/schema.h>

#include <algorithm>

#include "control_flow.h"
#include "graph_path.h"
#include "recurrent_node.h"
#include "rewrite.h"
#include "rnnstate/error.h"
#include "validate.h"
#include "view_rules.h"

namespace rnnstate {

namespace {

/// The rules of one kind of state owner, checked on every owner of that kind in the model: the first
/// broken rule as "GRAPH: OWNER: RULE", or "". A producer of states (analysis.cc's kStateProducers)
/// whose owners have rules of their own adds its check here.
using OwnerRules = std::string (*)(const ModelIndex&);

constexpr OwnerRules kOwnerRules[] = {FirstOpRuleViolation};

int64_t OnnxOpset(const onnx::ModelProto& model) {
  int64_t opset = 0;
  for (const auto& import : model.opset_import()) {
    if (IsOnnxDomain(import.domain())) opset = import.version();
  }
  return opset;
}

/// The first node of the default domain that is no operator of the model's ai.onnx opset and no function
/// the model defines. Judged only at the opsets rnnstate supports (kMinOpset and newer: an older model is
/// refused as unsupported, exit 4) that onnx 1.12 knows (a newer opset may have operators it does not
/// know: valid, only not fully checked).
std::string FirstUnknownOperator(const onnx::ModelProto& model) {
  const int64_t opset = OnnxOpset(model);
  const int64_t known = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at(onnx::ONNX_DOMAIN).second;
  if (opset < kMinOpset || opset > known) return "";
  std::string found;
  GraphPath path;
  ForEachGraph(model.graph(), path, [&](const GraphPath& at, const onnx::GraphProto& graph) {
    for (int n = 0; found.empty() && n < graph.node_size(); ++n) {
      const onnx::NodeProto& node = graph.node(n);
      if (!IsOnnxDomain(node.domain())) continue;
      if (onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset), "") != nullptr) continue;
      const auto& functions = model.functions();
      if (std::any_of(functions.begin(), functions.end(), [&](const onnx::FunctionProto& f) {
            return IsOnnxDomain(f.domain()) && f.name() == node.op_type();
          })) {
        continue;
      }
      found = GraphPathString(model, at) + ": " + DescribeNode(model, at, n) + ": ai.onnx opset " +
              std::to_string(opset) + " has no operator '" + node.op_type() + "'";
    }
  });
  return found;
}

std::string FirstContainerViolation(const onnx::ModelProto& model) {
  const int64_t opset = OnnxOpset(model);
  std::string found;
  GraphPath path;
  ForEachGraph(model.graph(), path, [&](const GraphPath& at, const onnx::GraphProto& graph) {
    for (int n = 0; found.empty() && n < graph.node_size(); ++n) {
      const onnx::NodeProto& node = graph.node(n);
      if (std::string rule = ContainerRuleViolation(node, ContainerKindOf(node, opset)); !rule.empty()) {
        found = GraphPathString(model, at) + ": " + DescribeNode(model, at, n) + ": " + rule;
      }
    }
  });
  return found;
}

}  // namespace

std::string FirstStructuralViolation(const onnx::ModelProto& model) {
  if (std::string problem = StructuralProblem(model); !problem.empty()) return problem;
  if (std::string problem = FirstUnknownOperator(model); !problem.empty()) return problem;
  return FirstContainerViolation(model);
}

std::string FirstOwnerViolation(const ModelIndex& index) {
  for (OwnerRules rules : kOwnerRules) {
    if (std::string problem = rules(index); !problem.empty()) return problem;
  }
  return "";
}

ModelIndex IndexValidModel(const onnx::ModelProto& model) {
  if (std::string problem = FirstStructuralViolation(model); !problem.empty()) {
    throw Error(ExitCode::kBadInput, "invalid model: " + problem);
  }
  ModelIndex index(model);
  for (auto rules : {FirstOwnerViolation, FirstViewRuleViolation}) {
    if (std::string problem = rules(index); !problem.empty()) {
      throw Error(ExitCode::kBadInput, "invalid model: " + problem);
    }
  }
  return index;
}

}  // namespace rnnstate
