#include "loop_recurrence.h"

#include "carried_variables.h"
#include "loop_streaming.h"
#include "proto_access.h"
#include "state_origin.h"

namespace rnnstate {

namespace {

/// The Loop/Scan inputs that carry a recurrent operator's state (LocateSite's way up).
CarrierSlots OperatorCarriers(const ModelIndex& index, const std::vector<RecurrentState>& states) {
  CarrierSlots slots;
  for (const RecurrentState& state : states) {
    const std::vector<StateSite> chain = CarrierChain(index, state);
    for (size_t i = 1; i < chain.size(); ++i) slots.insert({chain[i].graph, chain[i].node, chain[i].input_slot});
  }
  return slots;
}

/// Merges the known dims of `type` into `shape` (rank fixed by the first shaped type): an unknown dim
/// takes the new one, a symbolic one a fixed one.
void MergeShape(const onnx::TypeProto* type, std::vector<Dim>* shape, bool* ranked) {
  if (type == nullptr || !type->has_tensor_type() || !type->tensor_type().has_shape()) return;
  const auto& dims = type->tensor_type().shape().dim();
  if (!*ranked) {
    shape->assign(dims.size(), Dim{});
    *ranked = true;
  }
  if (dims.size() != static_cast<int>(shape->size())) return;
  for (int i = 0; i < dims.size(); ++i) {
    Dim& dim = (*shape)[i];
    if (dims[i].has_dim_value() && !dim.fixed())
      dim = Dim{dims[i].dim_value(), ""};
    else if (dims[i].has_dim_param() && !dim.fixed() && dim.param.empty())
      dim.param = dims[i].dim_param();
  }
}

/// The first symbolic dim of `state` that a main-graph input also has: the batch, read from that input.
void FindBatch(const ModelIndex& index, RecurrentState& state) {
  const onnx::GraphProto& main = index.model().graph();
  const GraphIndex& main_index = index.graph(GraphPath{});
  for (size_t i = 0; i < state.shape.size(); ++i) {
    if (state.shape[i].fixed() || state.shape[i].param.empty()) continue;
    for (const auto& input : main.input()) {
      if (main_index.initializers.count(input.name()) || !input.type().has_tensor_type()) continue;
      const auto& dims = input.type().tensor_type().shape().dim();
      for (int axis = 0; axis < dims.size(); ++axis) {
        if (dims[axis].dim_param() != state.shape[i].param) continue;
        state.batch_axis = static_cast<int>(i);
        state.batch_source = BatchSource{input.name(), axis};
        state.axis_names[i] = "batch";
        return;
      }
    }
  }
}

RecurrentState StateOf(const ModelIndex& index, const LoopAnatomy& loop, const CarriedInfo& info,
                       const StateOwner& owner, const LoopVerdict& verdict) {
  const onnx::NodeProto& node = ResolveGraph(index.model(), loop.graph)->node(loop.node);
  RecurrentState state;
  state.owner = owner;
  state.kind = StateKind::kCarried;
  state.variable = info.body_input;
  state.initial_slot = info.slots.node_input;
  state.final_slot = info.slots.node_output;
  state.initial_name = "carried '" + info.body_input + "'";
  state.final_name = "final '" + info.body_input + "'";
  const std::string& final_value =
      info.slots.node_output < node.output_size() ? node.output(info.slots.node_output) : "";
  // The loop's own values first: the body's declarations are the exporter's and can be stale.
  const std::pair<const GraphPath*, std::string> sources[] = {{&loop.graph, final_value},
                                                              {&loop.graph, node.input(info.slots.node_input)},
                                                              {&loop.body, info.body_output},
                                                              {&loop.body, info.body_input}};
  bool ranked = false;
  for (const auto& [graph, name] : sources) {
    if (name.empty()) continue;
    const onnx::TypeProto* type = index.TypeOf(*graph, name);
    if (state.elem_type == 0 && type && type->has_tensor_type()) state.elem_type = type->tensor_type().elem_type();
    MergeShape(type, &state.shape, &ranked);
  }
  for (size_t i = 0; i < state.shape.size(); ++i) state.axis_names.push_back("dim" + std::to_string(i));
  FindBatch(index, state);
  state.streamable = verdict.streamable;
  state.not_streamable_reason = verdict.reason;
  if (!ranked)
    state.problem = "the shape of carried '" + info.body_input + "' is unknown (no declared or inferred type)";
  if (state.elem_type == 0) state.problem = "the type of carried '" + info.body_input + "' is unknown";
  return state;
}

RecurrentNode Describe(const ModelIndex& index, const LoopAnatomy& loop, const LoopVerdict& verdict) {
  const onnx::NodeProto& node = ResolveGraph(index.model(), loop.graph)->node(loop.node);
  RecurrentNode out;
  out.graph = loop.graph;
  out.node = loop.node;
  out.graph_name = GraphPathString(index.model(), loop.graph);
  out.unnamed = node.name().empty();
  out.name = NodeLabel(node, loop.node);
  out.op = node.op_type();
  out.direction = "forward";
  out.streamable = verdict.streamable;
  out.not_streamable_reason = verdict.reason;
  out.walk = verdict.walk.empty() ? "a loop over a hand-written cell" : verdict.walk;
  return out;
}

StateNote NoteOf(StateNote::Kind kind, const StateOwner& owner, std::string variable, std::string reason) {
  StateNote note;
  note.kind = kind;
  note.owner = owner;
  note.variable = std::move(variable);
  note.reason = std::move(reason);
  return note;
}

/// Scan-8's state variables (after its sequence_lens): noted, not rewritten.
void NoteScan8(const ModelIndex& index, const GraphPath& path, int n, Findings* found) {
  const onnx::NodeProto& node = ResolveGraph(index.model(), path)->node(n);
  const onnx::GraphProto* body = GraphAttribute(node, "body");
  if (body == nullptr) return;
  const StateOwner owner{path, n, GraphPathString(index.model(), path), NodeLabel(node, n), node.op_type()};
  for (int k = 0; k + 1 < ScanStateCount(node) && k < body->input_size(); ++k) {
    found->notes.push_back(NoteOf(StateNote::Kind::kUnclassified, owner, body->input(k).name(),
                                  "a Scan-8 state variable: rnnstate does not rewrite Scan-8 (opset 8, batch axis)"));
  }
}

/// The Loop or Scan whose body holds the graph at `path` (innermost), described, or "".
std::string EnclosingLoop(const ModelIndex& index, const GraphPath& path) {
  for (size_t depth = path.size(); depth > 0; --depth) {
    if (path[depth - 1].attribute != "body") continue;
    const GraphPath parent(path.begin(), path.begin() + static_cast<std::ptrdiff_t>(depth) - 1);
    return DescribeNode(index.model(), parent, path[depth - 1].node);
  }
  return "";
}

}  // namespace

void FindLoopStates(const ModelIndex& index, Findings* found) {
  const CarrierSlots op_carriers = OperatorCarriers(index, found->states);
  for (const auto& [path, graph_index] : index.graphs()) {
    const onnx::GraphProto* graph = ResolveGraph(index.model(), path);
    if (graph == nullptr) continue;
    for (int n = 0; n < graph->node_size(); ++n) {
      const onnx::NodeProto& node = graph->node(n);
      if (ContainerKindOf(node, index.onnx_opset()) == ContainerKind::kScan8) NoteScan8(index, path, n, found);
      const std::optional<LoopAnatomy> loop = ReadLoop(index, path, n, op_carriers);
      if (!loop) continue;
      const StateOwner owner{path, n, GraphPathString(index.model(), path), NodeLabel(node, n), node.op_type()};
      // A loop inside another loop's body starts over on every outer iteration: what persists from step to
      // step is what the outer loop carries (a variable of its own, computed through this one).
      const std::string outer = EnclosingLoop(index, path);
      bool recurs = false;
      for (const CarriedInfo& info : loop->carried) {
        if (info.role == CarriedRole::kState && !outer.empty()) {
          found->notes.push_back(NoteOf(
              StateNote::Kind::kNotState, owner, info.body_input,
              "recurs within one iteration of " + outer + ", which restarts it; that loop carries what persists"));
        } else if (info.role == CarriedRole::kState) {
          recurs = true;
        } else if (info.role != CarriedRole::kOpState) {
          const auto kind =
              info.role == CarriedRole::kUnclassified ? StateNote::Kind::kUnclassified : StateNote::Kind::kNotState;
          found->notes.push_back(NoteOf(kind, owner, info.body_input, info.why));
        }
      }
      if (!recurs) continue;
      const LoopVerdict verdict = JudgeLoop(index, *loop);
      found->nodes.push_back(Describe(index, *loop, verdict));
      for (const CarriedInfo& info : loop->carried) {
        if (info.role == CarriedRole::kState) found->states.push_back(StateOf(index, *loop, info, owner, verdict));
      }
      const RecurrentState& first = found->states.back();
      RecurrentNode& described = found->nodes.back();
      described.elem_type = first.elem_type;
      if (first.batch_axis >= 0) described.batch = first.shape[first.batch_axis];
      described.x = first.batch_source.value;
    }
  }
}

}  // namespace rnnstate
