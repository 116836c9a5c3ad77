#include "find/recurrent_node.h"

#include <algorithm>

#include "graph/proto_access.h"
#include "rules/op_rules.h"

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
  else if (d.has_dim_param() && !IsInventedDimName(d.dim_param()))
    dim.param = d.dim_param();
  return dim;
}

int32_t ElemTypeOf(const Scope& graph, const std::string& name) {
  const onnx::TypeProto* type = name.empty() ? nullptr : graph.TypeOf(name);
  if (type == nullptr || !type->has_tensor_type()) return 0;
  return type->tensor_type().elem_type();
}

/// Reads direction, hidden size and layout (a node that breaks a rule of its spec has a `problem`
/// already: the values read here are then not used).
void ReadAttributes(const onnx::NodeProto& node, const RecurrentOp& op, int64_t opset, RecurrentNode& out) {
  if (const auto* a = FindAttribute(node, "direction")) out.direction = a->s();
  if (out.direction.empty()) out.direction = "forward";
  if (out.direction == "bidirectional") out.num_directions = 2;
  if (const auto* a = FindAttribute(node, "hidden_size")) out.hidden_size = a->i();
  if (op.has_layout && opset >= op.layout_since) {
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
                       const ModelIndex& model_index, bool types_checked) {
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
  const int64_t opset = OpsetOf(model_index.model(), op);
  // Commands refuse such a model before analysis (model_rules); this keeps the analysis of an unchecked
  // model (a test, a library caller) from rewriting the node. The rules of the operands' types are the
  // costly part (with 10,000 owners, 59M instructions): not run twice on an index that passed them.
  out.problem = types_checked
                    ? OpRuleViolationWithoutTypes(node, op, opset)
                    : OpRuleViolation(node, op, opset, [&](const std::string& name) { return scope.TypeOf(name); });
  ReadAttributes(node, op, opset, out);
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

void FindOpStates(const ModelIndex& index, std::vector<RecurrentNode>* nodes, std::vector<RecurrentState>* states,
                  bool types_checked) {
  // Counted first: with thousands of owners, vectors grown by doubling would move every record several
  // times and touch twice the memory they keep (a node is 440 bytes, a state 416).
  size_t owners = 0, slots = 0;
  ForEachOpNode(index, [&](const GraphPath&, const GraphIndex&, const onnx::GraphProto&, int, const RecurrentOp& op) {
    ++owners;
    slots += op.has_cell() ? 2 : 1;
  });
  nodes->reserve(nodes->size() + owners);
  states->reserve(states->size() + slots);
  ForEachOpNode(index, [&](const GraphPath&, const GraphIndex& graph_index, const onnx::GraphProto& graph, int n,
                           const RecurrentOp& op) {
    nodes->push_back(Describe(graph.node(n), op, n, graph_index, index, types_checked));
    const RecurrentNode& node = nodes->back();
    states->push_back(StateOf(node, StateKind::kHidden, op.initial_h_slot, op.y_h_slot, "initial_h", "Y_h"));
    if (op.has_cell()) {
      states->push_back(StateOf(node, StateKind::kCell, op.initial_c_slot, op.y_c_slot, "initial_c", "Y_c"));
    }
  });
}

}  // namespace rnnstate
