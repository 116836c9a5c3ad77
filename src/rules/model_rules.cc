#include "rules/model_rules.h"

#include <onnx/defs/schema.h>

#include <algorithm>
#include <future>
#include <map>
#include <set>
#include <string_view>
#include <tuple>
#include <vector>

#include "graph/contrib_schemas.h"
#include "graph/control_flow.h"
#include "graph/graph_path.h"
#include "graph/helper_thread.h"
#include "graph/proto_access.h"
#include "graph/shape_inference.h"
#include "io/tensor_data.h"
#include "ops/slice_bounds.h"
#include "rnnstate/error.h"
#include "rules/op_rules.h"
#include "rules/schema_rules.h"
#include "rules/structure_rules.h"
#include "rules/view_rules.h"
#include "values/constant_value.h"

namespace rnnstate {

namespace {

/// The rules of one kind of state owner, checked on every owner of that kind in the model: the first
/// broken rule as "GRAPH: OWNER: RULE", or "". A producer of states (analysis.cc's kStateProducers)
/// whose owners have rules of their own adds its check here.
using OwnerRules = std::string (*)(const ModelIndex&);

constexpr OwnerRules kOwnerRules[] = {FirstOpRuleViolation};

/// The type a control-flow operand must have: a Loop's trip count (input 0) int64, its condition (input
/// 1) and an If's condition bool. onnx's shape inference with type checks (its full_check) and ONNX
/// Runtime refuse other types; without type checks onnx passes them (a Loop whose trip count is a float
/// was rewritten without a warning). "" when the node's operands are of their types or unknown.
std::string ControlOperandRule(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node) {
  struct Operand {
    const char* op;
    int slot;
    const char* what;
    int32_t type;
  };
  static const Operand kOperands[] = {{"Loop", 0, "trip count", onnx::TensorProto::INT64},
                                      {"Loop", 1, "condition", onnx::TensorProto::BOOL},
                                      {"If", 0, "condition", onnx::TensorProto::BOOL}};
  if (!IsOnnxDomain(node.domain())) return "";
  for (const Operand& operand : kOperands) {
    if (node.op_type() != operand.op || node.input_size() <= operand.slot || node.input(operand.slot).empty()) continue;
    const std::string& name = node.input(operand.slot);
    const onnx::TypeProto* type = index.TypeOf(path, name);
    if (type == nullptr || !type->has_tensor_type() || type->tensor_type().elem_type() == 0) continue;
    const int32_t elem = type->tensor_type().elem_type();
    if (elem == operand.type) continue;
    return std::string("its ") + operand.what + " '" + name + "' has element type " + DataTypeName(elem) + "; " +
           operand.op + " takes " + DataTypeName(operand.type);
  }
  return "";
}

/// The first control-flow operand of the wrong type, at any depth, as "GRAPH: NODE: RULE", or "".
std::string FirstControlOperandViolation(const ModelIndex& index) {
  const onnx::ModelProto& model = index.model();
  std::string found;
  GraphPath root;
  ForEachGraph(model.graph(), root, [&](const GraphPath& path, const onnx::GraphProto& graph) {
    for (int n = 0; found.empty() && n < graph.node_size(); ++n) {
      if (std::string rule = ControlOperandRule(index, path, graph.node(n)); !rule.empty()) {
        found = GraphPathString(model, path) + ": " + DescribeNode(model, path, n) + ": " + rule;
      }
    }
  });
  return found;
}

/// The versions a model (or a function) imports, by domain ("" for ai.onnx).
class Imports {
 public:
  explicit Imports(const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports) {
    for (const auto& import : imports)
      versions_[IsOnnxDomain(import.domain()) ? "" : import.domain()] = import.version();
  }
  /// A function's imports, falling back to the model's for a domain it does not import.
  Imports(const Imports& model, const onnx::FunctionProto& function) : Imports(function.opset_import()) {
    versions_.insert(model.versions_.begin(), model.versions_.end());
  }
  int64_t Of(const std::string& domain) const {
    auto found = versions_.find(IsOnnxDomain(domain) ? "" : domain);
    return found == versions_.end() ? 0 : found->second;
  }

 private:
  std::map<std::string, int64_t> versions_;
};

/// True when the model defines a function of the node's domain and op_type.
bool IsModelFunction(const onnx::ModelProto& model, const onnx::NodeProto& node) {
  const auto& functions = model.functions();
  return std::any_of(functions.begin(), functions.end(), [&](const onnx::FunctionProto& f) {
    return IsOnnxDomain(f.domain()) == IsOnnxDomain(node.domain()) &&
           (IsOnnxDomain(f.domain()) || f.domain() == node.domain()) && f.name() == node.op_type();
  });
}

/// The schema a node is judged by, or nullptr: an ai.onnx operator at the opsets rnnstate supports
/// (kMinOpset and newer: an older model is refused as unsupported, exit 4) that onnx 1.12 knows (a newer
/// opset may have operators and attributes it does not know: valid, only not fully checked); ONNX
/// Runtime's DynamicQuantizeLSTM (contrib_schemas.h). `unknown` is set for an ai.onnx node of such an
/// opset that is no operator of it and no function of the model.
const onnx::OpSchema* JudgingSchema(const onnx::ModelProto& model, const onnx::NodeProto& node, int64_t opset,
                                    bool* unknown) {
  *unknown = false;
  if (!IsOnnxDomain(node.domain())) {
    return FindRecurrentOp(node)
               ? onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset), node.domain())
               : nullptr;
  }
  const int64_t known = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at(onnx::ONNX_DOMAIN).second;
  if (opset < kMinOpset || opset > known) return nullptr;
  const onnx::OpSchema* schema = OnnxSchemaAt(node.op_type(), opset);
  *unknown = schema == nullptr && !IsModelFunction(model, node);
  return schema;
}

/// JudgingSchema of every node of one model, found once per domain, operator and opset.
class JudgingSchemas {
 public:
  explicit JudgingSchemas(const onnx::ModelProto& model) : model_(model) {}
  const onnx::OpSchema* Of(const onnx::NodeProto& node, int64_t opset, bool* unknown) {
    auto [known, fresh] = found_.try_emplace(Key{node.domain(), node.op_type(), opset});
    if (fresh) known->second.schema = JudgingSchema(model_, node, opset, &known->second.unknown);
    *unknown = known->second.unknown;
    return known->second.schema;
  }

 private:
  // Views into the model, which outlives this: a look-up copies no string (one per node at any depth).
  using Key = std::tuple<std::string_view, std::string_view, int64_t>;
  struct Found {
    const onnx::OpSchema* schema = nullptr;
    bool unknown = false;
  };
  const onnx::ModelProto& model_;
  std::map<Key, Found> found_;
};

/// The first rule `node` breaks on its own (without types), in the order docs/validation.md lists them.
std::string NodeViolation(JudgingSchemas& schemas, const onnx::NodeProto& node, const Imports& imports) {
  const int64_t opset = imports.Of(node.domain());
  if (IsOnnxDomain(node.domain()) && node.op_type().empty()) return "the node has no op_type";
  bool unknown = false;
  const onnx::OpSchema* schema = schemas.Of(node, opset, &unknown);
  if (unknown) return OpsetText("", opset) + " has no operator '" + node.op_type() + "'";
  const RecurrentOp* op = FindRecurrentOp(node);
  if (schema == nullptr && op == nullptr && !IsOnnxDomain(node.domain())) return "";  // not rnnstate's to judge
  if (std::string rule = AttributeFormViolation(node); !rule.empty()) return rule;
  if (op != nullptr) {
    if (std::string rule = OpRuleViolationWithoutTypes(node, *op, opset); !rule.empty()) return rule;
  }
  const SchemaViolation by_schema = schema ? SchemaRuleViolation(node, *schema, opset) : SchemaViolation{};
  if (!by_schema.attributes.empty()) return by_schema.attributes;
  if (std::string rule = ContainerRuleViolation(node, ContainerKindOf(node, imports.Of(""))); !rule.empty()) {
    return rule;
  }
  return by_schema.arity;
}

/// The first node of `nodes` (and of their subgraphs, parents first) that breaks a rule, as
/// "WHERE: NODE: RULE"; `where` spells graph paths as GraphPathString does.
std::string FirstNodeViolation(JudgingSchemas& schemas,
                               const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes,
                               const std::string& where, const Imports& imports) {
  for (int n = 0; n < nodes.size(); ++n) {
    if (std::string rule = NodeViolation(schemas, nodes.Get(n), imports); !rule.empty()) {
      return where + ": " + DescribeNode(nodes.Get(n), n) + ": " + rule;
    }
  }
  for (int n = 0; n < nodes.size(); ++n) {
    for (const auto& attribute : nodes.Get(n).attribute()) {
      if (!attribute.has_g() && attribute.graphs_size() == 0) continue;  // no scope to name
      const std::string sub = where + "/" + NodeLabel(nodes.Get(n), n) + ":" + attribute.name();
      if (attribute.has_g()) {
        if (auto found = FirstNodeViolation(schemas, attribute.g().node(), sub, imports); !found.empty()) return found;
      }
      for (int i = 0; i < attribute.graphs_size(); ++i) {
        const std::string listed = sub + "[" + std::to_string(i) + "]";
        if (auto found = FirstNodeViolation(schemas, attribute.graphs(i).node(), listed, imports); !found.empty()) {
          return found;
        }
      }
    }
  }
  return "";
}

/// "local.F" ("F" for a function of the default domain): a function as messages name it.
std::string FunctionName(const onnx::FunctionProto& function) {
  return (function.domain().empty() ? "" : function.domain() + ".") + function.name();
}

/// The model's functions that `nodes` (and their subgraphs, at any depth) call, as indices into
/// model.functions(): every function of the called domain and name (a duplicate must not hide a cycle).
void CollectCalls(const onnx::ModelProto& model, const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes,
                  std::vector<int>& callees) {
  for (const auto& node : nodes) {
    for (int f = 0; f < model.functions_size(); ++f) {
      const onnx::FunctionProto& function = model.functions(f);
      const bool same_domain =
          IsOnnxDomain(function.domain()) ? IsOnnxDomain(node.domain()) : function.domain() == node.domain();
      if (same_domain && function.name() == node.op_type() &&
          std::find(callees.begin(), callees.end(), f) == callees.end()) {
        callees.push_back(f);
      }
    }
    for (const auto& attribute : node.attribute()) {
      if (attribute.has_g()) CollectCalls(model, attribute.g().node(), callees);
      for (const auto& graph : attribute.graphs()) CollectCalls(model, graph.node(), callees);
    }
  }
}

/// The first of the model's functions that calls itself, directly or through others, called or not (ONNX:
/// "model-local functions must not be recursive"; onnx 1.12's shape inference and ONNX Runtime recurse
/// without end on such a call and crash), as "function 'local.F' calls itself (local.F -> local.G ->
/// local.F)", or "". Iterative, so that a long chain of calls cannot exhaust the stack here.
std::string RecursiveFunction(const onnx::ModelProto& model) {
  const int count = model.functions_size();
  std::vector<std::vector<int>> calls(count);
  for (int f = 0; f < count; ++f) CollectCalls(model, model.functions(f).node(), calls[f]);
  enum class Visit { kNew, kOnPath, kDone };
  std::vector<Visit> state(count, Visit::kNew);
  for (int root = 0; root < count; ++root) {
    if (state[root] != Visit::kNew) continue;
    std::vector<std::pair<int, size_t>> path = {{root, 0}};  // function, next callee to follow
    state[root] = Visit::kOnPath;
    while (!path.empty()) {
      auto& [function, next] = path.back();
      if (next == calls[function].size()) {
        state[function] = Visit::kDone;
        path.pop_back();
        continue;
      }
      const int callee = calls[function][next++];
      if (state[callee] == Visit::kOnPath) {
        auto start = std::find_if(path.begin(), path.end(), [&](const auto& step) { return step.first == callee; });
        std::string cycle;
        for (auto step = start; step != path.end(); ++step)
          cycle += FunctionName(model.functions(step->first)) + " -> ";
        return "function '" + FunctionName(model.functions(callee)) + "' calls itself (" + cycle +
               FunctionName(model.functions(callee)) + "): a model's functions must not be recursive";
      }
      if (state[callee] == Visit::kNew) {
        state[callee] = Visit::kOnPath;
        path.emplace_back(callee, 0);
      }
    }
  }
  return "";
}

/// The first function defined twice (the same domain and name: a call could not say which), or "".
std::string DuplicateFunction(const onnx::ModelProto& model) {
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& function : model.functions()) {
    const std::string domain = IsOnnxDomain(function.domain()) ? "" : function.domain();
    if (!seen.emplace(domain, function.name()).second) {
      return "function '" + FunctionName(function) + "' is defined twice: a model's functions must differ in " +
             "domain or name";
    }
  }
  return "";
}

}  // namespace

std::string FirstStructuralViolation(const onnx::ModelProto& model, InlineTensors inline_tensors) {
  // First: everything after it (onnx's checker, its shape inference) follows function calls.
  if (std::string problem = DuplicateFunction(model); !problem.empty()) return problem;
  if (std::string problem = RecursiveFunction(model); !problem.empty()) return problem;
  if (std::string problem = StructuralProblem(model); !problem.empty()) return problem;
  // A model handed over in memory (the library) has its tensors checked here, where a placeholder is not
  // judged. One opened from a file (model_io.h) had them checked then, the payloads left in it by their
  // length there (kCheckedWhenOpened): not again, a walk over every tensor (74M instructions at 10,000
  // LSTMs).
  const auto raw_size = [](const onnx::TensorProto& tensor) {
    return PayloadUnknown(tensor) ? std::nullopt : std::optional<uint64_t>(tensor.raw_data().size());
  };
  if (inline_tensors == InlineTensors::kCheck) {
    if (std::string problem = FirstInlineDataProblem(model, raw_size); !problem.empty()) return problem;
  }
  RegisterContribSchemas();
  const Imports imports(model.opset_import());
  JudgingSchemas schemas(model);
  if (std::string problem = FirstNodeViolation(schemas, model.graph().node(), "main", imports); !problem.empty()) {
    return problem;
  }
  // Function bodies are not rewritten, but an operator in one is as invalid as in the graph.
  for (const onnx::FunctionProto& function : model.functions()) {
    const std::string where = "function '" + FunctionName(function) + "'";
    if (std::string problem = FirstNodeViolation(schemas, function.node(), where, Imports(imports, function));
        !problem.empty()) {
      return problem;
    }
  }
  return "";
}

std::string FirstOwnerViolation(const ModelIndex& index) {
  for (OwnerRules rules : kOwnerRules) {
    if (std::string problem = rules(index); !problem.empty()) return problem;
  }
  return "";
}

namespace {

/// The index of `model` from `copy`; where Slices' bounds are computed by nodes onnx's inference does not
/// follow but the analysis evaluates (ComputedSliceOperands), indexed again from a copy in which those
/// bounds are constants, so that the shapes after the Slices are known. Models without such Slices are
/// indexed once.
ModelIndex IndexWithKnownSlices(const onnx::ModelProto& model, OwnedCopy copy) {
  ModelIndex first(model, std::move(copy));
  const std::vector<KnownValue> known = ComputedSliceOperands(first);
  if (known.empty()) return first;
  OwnedCopy bound = MakeStructuralCopy(model);
  BindKnownValues(*bound.model, known);
  return ModelIndex(model, std::move(bound));
}

}  // namespace

ModelIndex IndexValidModel(const onnx::ModelProto& model, const std::function<void()>& structure_valid,
                           InlineTensors inline_tensors) {
  // The copy shape inference works on only reads the model (it infers nothing): made on another thread
  // while the rules are checked. Inference itself waits for their verdict.
  std::future<OwnedCopy> copy = StartBeside(model, [&model] { return MakeStructuralCopy(model); });
  if (std::string problem = FirstStructuralViolation(model, inline_tensors); !problem.empty()) {
    throw Error(ExitCode::kBadInput, "invalid model: " + problem);
  }
  if (structure_valid) structure_valid();
  ModelIndex index = IndexWithKnownSlices(model, copy.get());
  // A view operator's broken axes first: the wrong shapes they pass on would otherwise be blamed on the
  // recurrent node that reads them.
  for (auto rules : {FirstControlOperandViolation, FirstViewRuleViolation, FirstOwnerViolation}) {
    if (std::string problem = rules(index); !problem.empty()) {
      throw Error(ExitCode::kBadInput, "invalid model: " + problem);
    }
  }
  return index;
}

}  // namespace rnnstate
