#include "rnnstate/recurrent_node.h"

#include "rnnstate/proto_access.h"

namespace rnnstate {

std::string Dim::ToString() const {
  if (fixed()) return std::to_string(value);
  return param.empty() ? "?" : param;
}

std::string ShapeText(const std::vector<Dim>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? "," : "") + shape[i].ToString();
  return out + "]";
}

const char* StateKindName(StateKind kind) { return kind == StateKind::kHidden ? "h" : "c"; }
const char* InitialStateSlotName(StateKind kind) { return kind == StateKind::kHidden ? "initial_h" : "initial_c"; }
const char* FinalStateSlotName(StateKind kind) { return kind == StateKind::kHidden ? "Y_h" : "Y_c"; }
int InitialStateSlot(StateKind kind) { return kind == StateKind::kHidden ? 5 : 6; }
int FinalStateSlot(StateKind kind) { return kind == StateKind::kHidden ? 1 : 2; }

bool IsRecurrentNode(const onnx::NodeProto& node) {
  if (!IsOnnxDomain(node.domain())) return false;
  const std::string& op = node.op_type();
  return op == "RNN" || op == "GRU" || op == "LSTM";
}

std::vector<Dim> RecurrentNode::StateShape() const {
  Dim d{num_directions, ""};
  Dim h{hidden_size, ""};
  if (layout == 1) return {batch, d, h};
  return {d, batch, h};
}

namespace {

std::string InputOrEmpty(const onnx::NodeProto& node, int slot) {
  return slot < node.input_size() ? node.input(slot) : std::string();
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
  if (d.has_dim_value()) dim.value = d.dim_value();
  else if (d.has_dim_param()) dim.param = d.dim_param();
  return dim;
}

int32_t ElemTypeOf(const Scope& graph, const std::string& name) {
  const onnx::TypeProto* type = name.empty() ? nullptr : graph.TypeOf(name);
  if (type == nullptr || !type->has_tensor_type()) return 0;
  return type->tensor_type().elem_type();
}

/// Gates per op, to derive hidden_size from W when the attribute is missing.
int64_t GateCount(const std::string& op) { return op == "LSTM" ? 4 : op == "GRU" ? 3 : 1; }

void ReadAttributes(const onnx::NodeProto& node, RecurrentNode& out) {
  if (const auto* a = FindAttribute(node, "direction")) out.direction = a->s();
  if (out.direction.empty()) out.direction = "forward";
  if (out.direction == "bidirectional") out.num_directions = 2;
  else if (out.direction != "forward" && out.direction != "reverse") out.problem = "unknown direction '" + out.direction + "'";
  if (const auto* a = FindAttribute(node, "hidden_size")) out.hidden_size = a->i();
  if (const auto* a = FindAttribute(node, "layout")) out.layout = a->i();
  if (out.layout != 0 && out.layout != 1) out.problem = "unknown layout " + std::to_string(out.layout);
}

/// Fills hidden size, element type and batch from shapes where attributes do not say.
void ReadShapes(const onnx::NodeProto& node, const Scope& graph, RecurrentNode& out) {
  const std::string w = InputOrEmpty(node, 1), r = InputOrEmpty(node, 2);
  const std::string initial_h = InputOrEmpty(node, 5);
  const std::string y_h = node.output_size() > 1 ? node.output(1) : std::string();
  int batch_axis = out.layout == 1 ? 0 : 1;
  int state_batch_axis = out.layout == 1 ? 0 : 1;
  if (out.hidden_size < 0) {
    Dim from_r = DimOf(graph, r, 2);
    Dim from_w = DimOf(graph, w, 1);
    if (from_r.fixed()) out.hidden_size = from_r.value;
    else if (from_w.fixed()) out.hidden_size = from_w.value / GateCount(out.op);
  }
  for (const std::string& name : {out.x, w, r, initial_h, y_h}) {
    if (out.elem_type == 0) out.elem_type = ElemTypeOf(graph, name);
  }
  out.batch = DimOf(graph, out.x, batch_axis);
  if (!out.batch.fixed() && out.batch.param.empty()) {
    for (const std::string& name : {initial_h, y_h}) {
      Dim candidate = DimOf(graph, name, state_batch_axis);
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

RecurrentNode Describe(const onnx::NodeProto& node, int index, const GraphIndex& graph,
                       const ModelIndex& model_index) {
  const onnx::ModelProto& model = model_index.model();
  RecurrentNode out;
  out.graph = graph.path;
  out.node = index;
  out.graph_name = GraphPathString(model, graph.path);
  out.unnamed = node.name().empty();
  out.name = NodeLabel(node, index);
  out.op = node.op_type();
  out.x = InputOrEmpty(node, 0);
  out.has_sequence_lens = !InputOrEmpty(node, 4).empty();
  out.states = {StateKind::kHidden};
  if (out.op == "LSTM") out.states.push_back(StateKind::kCell);
  ReadAttributes(node, out);
  ReadShapes(node, Scope{model_index, graph.path}, out);
  JudgeStreaming(out);
  if (out.problem.empty() && out.x.empty()) out.problem = "input X is missing";
  if (out.problem.empty() && out.hidden_size <= 0) {
    out.problem = "hidden size unknown: no hidden_size attribute and no shape for R or W";
  }
  if (out.problem.empty() && out.elem_type == 0) out.problem = "element type unknown: no type for X, W or R";
  return out;
}

}  // namespace

std::vector<RecurrentNode> FindRecurrentNodes(const ModelIndex& index) {
  std::vector<RecurrentNode> found;
  for (const auto& [path, graph_index] : index.graphs()) {
    const onnx::GraphProto* graph = ResolveGraph(index.model(), path);
    if (graph == nullptr) continue;
    for (int n = 0; n < graph->node_size(); ++n) {
      if (IsRecurrentNode(graph->node(n))) found.push_back(Describe(graph->node(n), n, graph_index, index));
    }
  }
  return found;
}

}  // namespace rnnstate
