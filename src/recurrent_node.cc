#include "recurrent_node.h"

#include <algorithm>

#include "proto_access.h"

namespace rnnstate {

namespace {

std::string InputOrEmpty(const onnx::NodeProto& node, int slot) {
  return slot >= 0 && slot < node.input_size() ? node.input(slot) : std::string();
}

std::string OutputOrEmpty(const onnx::NodeProto& node, int slot) {
  return slot >= 0 && slot < node.output_size() ? node.output(slot) : std::string();
}

/// The graph a node lives in, with its index, for type lookups through enclosing scopes.
struct Scope {
  const ModelIndex& model;
  const GraphPath& path;
  const onnx::TypeProto* TypeOf(const std::string& name) const { return model.TypeOf(path, name); }
};

/// Dimension `axis` of a declared or inferred tensor type, or unknown.
Dim DimOf(const Scope& graph, const std::string& name, int axis) {
  Dim dim;
  const onnx::TypeProto* type = name.empty() ? nullptr : graph.TypeOf(name);
  if (type == nullptr || !type->has_tensor_type() || !type->tensor_type().has_shape()) return dim;
  const auto& shape = type->tensor_type().shape();
  if (axis >= shape.dim_size()) return dim;
  const auto& d = shape.dim(axis);
  if (d.has_dim_value())
    dim.value = d.dim_value();
  else if (d.has_dim_param())
    dim.param = d.dim_param();
  return dim;
}

int32_t ElemTypeOf(const Scope& graph, const std::string& name) {
  const onnx::TypeProto* type = name.empty() ? nullptr : graph.TypeOf(name);
  if (type == nullptr || !type->has_tensor_type()) return 0;
  return type->tensor_type().elem_type();
}

/// "a, b or c" (`last` "and": "a, b and c").
template <typename T, typename Text>
std::string ListText(const std::vector<T>& items, Text&& text, const char* last = " or ") {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    out += std::string(i == 0 ? "" : i + 1 == items.size() ? last : ", ") + text(items[i]);
  }
  return out;
}

/// Why attribute `a` is not of `type` ("" when it is, or when the attribute does not say).
std::string WrongAttributeType(const onnx::AttributeProto& a, onnx::AttributeProto::AttributeType type,
                               const char* what) {
  if (a.type() == onnx::AttributeProto::UNDEFINED || a.type() == type) return "";
  return "attribute '" + a.name() + "' is not " + what;
}

std::string InputRuleViolation(const onnx::NodeProto& node, const RecurrentOp& op) {
  int needed = 0;
  for (int slot : op.required_slots) needed = std::max(needed, slot + 1);
  if (node.input_size() < needed) {
    return "has " + std::to_string(node.input_size()) + " input" + (node.input_size() == 1 ? "" : "s") + ", but " +
           node.op_type() + " requires " +
           ListText(
               op.required_slots, [&](int slot) { return InputName(op, slot); }, " and ");
  }
  for (int slot : op.required_slots) {
    if (node.input(slot).empty()) return "required input " + InputName(op, slot) + " is empty";
  }
  return "";
}

std::string AttributeRuleViolation(const onnx::NodeProto& node, const RecurrentOp& op) {
  if (const auto* a = FindAttribute(node, "direction")) {
    if (auto wrong = WrongAttributeType(*a, onnx::AttributeProto::STRING, "a string"); !wrong.empty()) return wrong;
    if (std::find(op.directions.begin(), op.directions.end(), a->s()) == op.directions.end()) {
      return "unknown direction '" + a->s() + "' (" + node.op_type() + " takes " +
             ListText(op.directions, [](std::string_view d) { return std::string(d); }) + ")";
    }
  }
  if (const auto* a = FindAttribute(node, "hidden_size")) {
    if (auto wrong = WrongAttributeType(*a, onnx::AttributeProto::INT, "an integer"); !wrong.empty()) return wrong;
    if (a->i() <= 0) return "hidden_size " + std::to_string(a->i()) + " is not positive";
  }
  if (const auto* a = op.has_layout ? FindAttribute(node, "layout") : nullptr) {
    if (auto wrong = WrongAttributeType(*a, onnx::AttributeProto::INT, "an integer"); !wrong.empty()) return wrong;
    if (a->i() != 0 && a->i() != 1) {
      return "unknown layout " + std::to_string(a->i()) + " (" + node.op_type() + " takes 0 or 1)";
    }
  }
  return "";
}

std::string TypeRuleViolation(const onnx::NodeProto& node, const RecurrentOp& op, const Scope& graph) {
  for (int slot : op.float_slots) {
    const std::string name = InputOrEmpty(node, slot);
    const onnx::TypeProto* type = name.empty() ? nullptr : graph.TypeOf(name);
    if (type == nullptr || type->value_case() == onnx::TypeProto::VALUE_NOT_SET) continue;
    const std::string input = "input " + InputName(op, slot) + " '" + name + "'";
    if (!type->has_tensor_type()) return input + " is not a tensor";
    const int32_t elem_type = type->tensor_type().elem_type();
    if (elem_type == onnx::TensorProto::UNDEFINED) continue;
    if (std::find(op.float_types.begin(), op.float_types.end(), elem_type) == op.float_types.end()) {
      return input + " has element type " + DataTypeName(elem_type) + "; " + node.op_type() + " takes " +
             ListText(op.float_types, DataTypeName);
    }
  }
  return "";
}

/// The first rule of `op`'s spec that `node` breaks, or "".
std::string NodeRuleViolation(const onnx::NodeProto& node, const RecurrentOp& op, const Scope& graph) {
  if (std::string rule = InputRuleViolation(node, op); !rule.empty()) return rule;
  if (std::string rule = AttributeRuleViolation(node, op); !rule.empty()) return rule;
  return TypeRuleViolation(node, op, graph);
}

/// Reads direction, hidden size and layout (a node that breaks a rule of its spec has a `problem`
/// already: the values read here are then not used).
void ReadAttributes(const onnx::NodeProto& node, const RecurrentOp& op, RecurrentNode& out) {
  if (const auto* a = FindAttribute(node, "direction")) out.direction = a->s();
  if (out.direction.empty()) out.direction = "forward";
  if (out.direction == "bidirectional") out.num_directions = 2;
  if (const auto* a = FindAttribute(node, "hidden_size")) out.hidden_size = a->i();
  if (op.has_layout) {
    if (const auto* a = FindAttribute(node, "layout")) out.layout = a->i();
  }
}

/// Fills hidden size, element type and batch from shapes where attributes do not say.
void ReadShapes(const onnx::NodeProto& node, const RecurrentOp& op, const Scope& graph, RecurrentNode& out) {
  const std::string initial_h = InputOrEmpty(node, op.initial_h_slot);
  const std::string y_h = OutputOrEmpty(node, op.y_h_slot);
  const int batch_axis = out.layout == 1 ? 0 : 1;
  if (out.hidden_size < 0) {
    for (const HiddenSizeSource& source : op.hidden_from) {
      Dim from = DimOf(graph, InputOrEmpty(node, source.slot), source.axis);
      if (from.fixed()) {
        out.hidden_size = from.value / source.divisor;
        break;
      }
    }
  }
  const std::string w = op.float_weights ? InputOrEmpty(node, op.w_slot) : "";
  const std::string r = op.float_weights ? InputOrEmpty(node, op.r_slot) : "";
  for (const std::string& name : {out.x, w, r, initial_h, y_h}) {
    if (out.elem_type == 0) out.elem_type = ElemTypeOf(graph, name);
  }
  out.batch = DimOf(graph, out.x, batch_axis);
  if (!out.batch.fixed() && out.batch.param.empty()) {
    for (const std::string& name : {initial_h, y_h}) {
      Dim candidate = DimOf(graph, name, batch_axis);
      if (candidate.fixed() || !candidate.param.empty()) {
        out.batch = candidate;
        break;
      }
    }
  }
}

void JudgeStreaming(RecurrentNode& out) {
  if (out.direction != "forward") {
    out.not_streamable_reason = out.direction + ": the final state needs the whole sequence";
  } else if (out.has_sequence_lens) {
    out.not_streamable_reason = "sequence_lens: chunks would need per-chunk lengths";
  } else {
    out.streamable = true;
  }
}

RecurrentNode Describe(const onnx::NodeProto& node, const RecurrentOp& op, int index, const GraphIndex& graph,
                       const ModelIndex& model_index) {
  RecurrentNode out;
  out.graph = graph.path;
  out.node = index;
  out.graph_name = GraphPathString(model_index.model(), graph.path);
  out.unnamed = node.name().empty();
  out.name = NodeLabel(node, index);
  out.op = node.op_type();
  out.x = InputOrEmpty(node, op.x_slot);
  out.has_sequence_lens = !InputOrEmpty(node, op.sequence_lens_slot).empty();
  const Scope scope{model_index, graph.path};
  // Commands refuse such a model before analysis (FirstOpRuleViolation); this keeps the analysis of an
  // unchecked model (a test, a library caller) from rewriting the node.
  out.problem = NodeRuleViolation(node, op, scope);
  ReadAttributes(node, op, out);
  ReadShapes(node, op, scope, out);
  JudgeStreaming(out);
  out.streaming_caveat = op.streaming_caveat;
  if (out.problem.empty() && out.x.empty()) out.problem = "input X is missing";
  if (out.problem.empty() && out.hidden_size <= 0) {
    out.problem = "hidden size unknown: no hidden_size attribute and no shape for R or W";
  }
  if (out.problem.empty() && out.elem_type == 0) out.problem = "element type unknown: no type for X, W or R";
  return out;
}

/// The state of `node` that enters at `initial_slot` and leaves at `final_slot`.
RecurrentState StateOf(const RecurrentNode& node, StateKind kind, int initial_slot, int final_slot,
                       const char* initial_name, const char* final_name) {
  RecurrentState state;
  state.owner = node.owner();
  state.kind = kind;
  state.initial_slot = initial_slot;
  state.final_slot = final_slot;
  state.initial_name = initial_name;
  state.final_name = final_name;
  state.elem_type = node.elem_type;
  const Dim directions{node.num_directions, ""}, hidden{node.hidden_size, ""};
  state.batch_axis = node.layout == 1 ? 0 : 1;
  if (node.layout == 1) {
    state.shape = {node.batch, directions, hidden};
    state.axis_names = {"batch", "num_directions", "hidden_size"};
  } else {
    state.shape = {directions, node.batch, hidden};
    state.axis_names = {"num_directions", "batch", "hidden_size"};
  }
  state.batch_source = BatchSource{node.x, node.layout == 1 ? 0 : 1};
  state.streamable = node.streamable;
  state.not_streamable_reason = node.not_streamable_reason;
  state.problem = node.problem;
  return state;
}

/// Calls `visit(path, graph_index, graph, n, op)` for every node of a table operator, in graph order.
template <typename Visit>
void ForEachOpNode(const ModelIndex& index, Visit visit) {
  for (const auto& [path, graph_index] : index.graphs()) {
    const onnx::GraphProto* graph = ResolveGraph(index.model(), path);
    if (graph == nullptr) continue;
    for (int n = 0; n < graph->node_size(); ++n) {
      if (const RecurrentOp* op = FindRecurrentOp(graph->node(n))) visit(path, graph_index, *graph, n, *op);
    }
  }
}

}  // namespace

std::string FirstOpRuleViolation(const ModelIndex& index) {
  std::string first;
  ForEachOpNode(index, [&](const GraphPath& path, const GraphIndex&, const onnx::GraphProto& graph, int n,
                           const RecurrentOp& op) {
    if (!first.empty()) return;
    if (std::string rule = NodeRuleViolation(graph.node(n), op, Scope{index, path}); !rule.empty()) {
      first = GraphPathString(index.model(), path) + ": " + DescribeNode(index.model(), path, n) + ": " + rule;
    }
  });
  return first;
}

void FindOpStates(const ModelIndex& index, std::vector<RecurrentNode>* nodes, std::vector<RecurrentState>* states) {
  ForEachOpNode(index, [&](const GraphPath&, const GraphIndex& graph_index, const onnx::GraphProto& graph, int n,
                           const RecurrentOp& op) {
    nodes->push_back(Describe(graph.node(n), op, n, graph_index, index));
    const RecurrentNode& node = nodes->back();
    states->push_back(StateOf(node, StateKind::kHidden, op.initial_h_slot, op.y_h_slot, "initial_h", "Y_h"));
    if (op.has_cell()) {
      states->push_back(StateOf(node, StateKind::kCell, op.initial_c_slot, op.y_c_slot, "initial_c", "Y_c"));
    }
  });
}

}  // namespace rnnstate
