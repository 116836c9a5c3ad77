#include "find/loop_recurrence.h"

#include <algorithm>
#include <set>

#include "exposure/exposure.h"
#include "graph/control_flow.h"
#include "graph/graph_edit.h"
#include "graph/proto_access.h"
#include "loops/axis_trace.h"
#include "loops/carried_variables.h"
#include "loops/loop_streaming.h"
#include "rnnstate/metadata.h"
#include "states/state_origin.h"
#include "values/constant_value.h"
#include "values/shape_eval.h"

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

/// What the main graph's inputs tell every loop state of the model (read once per model).
struct MainInputs {
  std::set<std::string> known;         ///< the dim params the data inputs declare (the names a caller knows)
  std::set<std::string> state_inputs;  ///< of a rewritten model: the inputs its recorded pairs feed
};

MainInputs ReadMainInputs(const ModelIndex& index, const std::vector<StatePair>& recorded) {
  MainInputs inputs;
  const GraphIndex& main = index.graph(GraphPath{});
  for (const auto& input : index.model().graph().input()) {
    if (main.initializers.count(input.name()) || !input.type().has_tensor_type()) continue;
    for (const auto& d : input.type().tensor_type().shape().dim()) {
      if (d.has_dim_param() && !d.dim_param().empty()) inputs.known.insert(d.dim_param());
    }
  }
  for (const StatePair& pair : recorded) inputs.state_inputs.insert(pair.input);
  return inputs;
}

/// The shape of a carried variable from the types of its values (rank fixed by the first shaped one):
/// per axis a fixed size if any has one, else a name a main-graph input declares, else any name
/// (onnx's inference invents `unk__N` names that the exporter's declarations of the body know better).
std::vector<Dim> MergedShape(const std::vector<const onnx::TypeProto*>& types, const std::set<std::string>& known,
                             bool* ranked) {
  std::vector<Dim> shape;
  *ranked = false;
  for (const onnx::TypeProto* type : types) {
    if (type == nullptr || !type->has_tensor_type() || !type->tensor_type().has_shape()) continue;
    const auto& dims = type->tensor_type().shape().dim();
    if (!*ranked) {
      shape.assign(dims.size(), Dim{});
      *ranked = true;
    }
    if (dims.size() != static_cast<int>(shape.size())) continue;
    for (int i = 0; i < dims.size(); ++i) {
      Dim& dim = shape[i];
      if (dim.fixed()) continue;
      if (dims[i].has_dim_value() && dims[i].dim_value() >= 0) {
        dim = Dim{dims[i].dim_value(), ""};
      } else if (dims[i].has_dim_param() && !dims[i].dim_param().empty() &&
                 (dim.param.empty() || (!known.count(dim.param) && known.count(dims[i].dim_param())))) {
        dim.param = dims[i].dim_param();
      }
    }
  }
  return shape;
}

/// The dim of main-graph input `axis`, as declared (unknown when unnamed).
Dim DeclaredInputDim(const ModelIndex& index, const InputAxis& axis) {
  const onnx::TypeProto* type = index.TypeOf(GraphPath{}, axis.input);
  if (type == nullptr || !type->has_tensor_type() || axis.axis >= type->tensor_type().shape().dim_size()) return Dim{};
  const auto& d = type->tensor_type().shape().dim(static_cast<int>(axis.axis));
  if (d.has_dim_value() && d.dim_value() >= 0) return Dim{d.dim_value(), ""};
  return Dim{-1, d.dim_param()};
}

/// The first main-graph input other than `except` that declares the dim `param`, as a batch source.
std::optional<BatchSource> InputDeclaring(const ModelIndex& index, const std::string& param,
                                          const std::string& except) {
  const GraphIndex& main_index = index.graph(GraphPath{});
  for (const auto& input : index.model().graph().input()) {
    if (input.name() == except || main_index.initializers.count(input.name()) || !input.type().has_tensor_type()) {
      continue;
    }
    const auto& dims = input.type().tensor_type().shape().dim();
    for (int axis = 0; axis < dims.size(); ++axis) {
      if (!param.empty() && dims[axis].dim_param() == param) return BatchSource{input.name(), axis};
    }
  }
  return std::nullopt;
}

/// The state's batch: the axis whose length its initial value takes from a main-graph input (the batch
/// of the data, as exporters compute zeros: `ConstantOfShape(Concat(Gather(Shape(x), 1), [H]))`), a
/// dynamic one first, that is not an axis the loop walks; else the first symbolic dim a main-graph
/// input declares too. Every other axis must be fixed or a dim a main-graph input declares, or the
/// state gets a problem: a caller could not know what to feed. `own`: the graph input the initial value
/// is read from element by element ("" when none): the authors' state input, like a rewritten model's.
void FindBatch(const ModelIndex& index, const std::string& initial, const std::string& own, const GraphPath& graph,
               const std::vector<TimeRef>& times, const MainInputs& inputs, RecurrentState& state) {
  const std::set<std::string>& known = inputs.known;
  std::vector<std::optional<InputAxis>> traced(state.shape.size());
  const GraphIndex& main_index = index.graph(GraphPath{});
  int chosen = -1;
  for (size_t i = 0; i < state.shape.size(); ++i) {
    traced[i] = TraceAxis(index, graph, initial, static_cast<int64_t>(i));
    if (!traced[i]) continue;
    // The state fed by its own graph input (a rewritten model, the input broadcast to the batch unless
    // required mode fed it directly): a fixed dim of that input says nothing about the data's batch (a symbolic
    // one is looked up in the data inputs below), but it is the state's size on that axis (kept in
    // `traced`).
    // So does the authors' state input the value is read from: were it taken for the data, the batch
    // would change once a rewrite records that input as a state (and its own check refute the pair).
    const bool own_input = traced[i]->input == initial || traced[i]->input == own ||
                           main_index.initializers.count(traced[i]->input) ||
                           inputs.state_inputs.count(traced[i]->input);
    if (own_input && DeclaredInputDim(index, *traced[i]).fixed()) continue;
    const bool walked = std::any_of(times.begin(), times.end(), [&](const TimeRef& t) {
      return t.input == traced[i]->input && t.axis == traced[i]->axis;
    });
    if (walked) {
      traced[i].reset();
      continue;
    }
    const bool dynamic = !DeclaredInputDim(index, *traced[i]).fixed();
    if (chosen < 0 || (dynamic && DeclaredInputDim(index, *traced[chosen]).fixed())) chosen = static_cast<int>(i);
  }
  if (chosen >= 0) {
    state.batch_axis = chosen;
    state.batch_source = BatchSource{traced[chosen]->input, traced[chosen]->axis};
    state.shape[chosen] = DeclaredInputDim(index, *traced[chosen]);
    // The state's own initial value fed as a graph input: take the batch from the data instead.
    const std::string& input = traced[chosen]->input;
    if (input == initial || input == own) {
      if (auto other = InputDeclaring(index, state.shape[chosen].param, input)) state.batch_source = *other;
    }
  } else {
    for (size_t i = 0; i < state.shape.size() && state.batch_axis < 0; ++i) {
      if (state.shape[i].fixed() || !known.count(state.shape[i].param)) continue;
      if (auto source = InputDeclaring(index, state.shape[i].param, "")) {
        state.batch_axis = static_cast<int>(i);
        state.batch_source = *source;
      }
    }
  }
  if (state.batch_axis >= 0) state.axis_names[state.batch_axis] = "batch";
  for (size_t i = 0; i < state.shape.size(); ++i) {
    Dim& dim = state.shape[i];
    if (static_cast<int>(i) == state.batch_axis || dim.fixed()) continue;
    // Traced, the data's own dim (a body's declared names can be stale: TorchScript writes [seq, batch]
    // for a [batch, 4] state); else a name a data input declares.
    if (traced[i]) {
      const Dim declared = DeclaredInputDim(index, *traced[i]);
      if (declared.fixed() || !declared.param.empty()) {
        dim = declared;
        continue;
      }
    }
    if (known.count(dim.param)) continue;
    state.problem = "axis " + std::to_string(i) + " of carried '" + state.variable + "' " + ShapeText(state.shape) +
                    " has a size no data input declares (" + dim.ToString() + "): a caller could not know what to feed";
    return;
  }
}

/// True when `name` (seen from `path`) is provably zeros: a Constant, an initializer or an input's default
/// of zeros, through Identity and Cast.
bool KnownZero(const ModelIndex& index, const GraphPath& path, std::string name) {
  GraphPath graph = path;
  for (int depth = 0; depth < 16; ++depth) {
    if (const std::optional<ConstantValue> constant = FindConstant(index, graph, name)) return KnownAllZero(*constant);
    const ResolvedName resolved = index.Resolve(graph, name);
    if (resolved.producer.kind == Producer::Kind::kDefaultedInput) {
      // An input whose default is zeros (a rewritten model's state input): feeding zeros is the default.
      const onnx::TensorProto* initializer = FindInitializer(*ResolveGraph(index.model(), resolved.graph), name);
      return initializer != nullptr && KnownAllZero(*initializer);
    }
    if (resolved.node == nullptr || !IsOnnxOp(*resolved.node, {"Identity", "Cast"}) || resolved.node->input_size() == 0)
      return false;
    graph = resolved.graph;
    name = resolved.node->input(0);
  }
  return false;
}

RecurrentState StateOf(const ModelIndex& index, const LoopAnatomy& loop, const CarriedInfo& info,
                       const StateOwner& owner, const LoopVerdict& verdict, const MainInputs& inputs) {
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
  std::vector<const onnx::TypeProto*> types;
  // Zeros the graph computes have the shape of their computation, first: the fixed sizes the
  // declarations may not know (or may know wrongly), and the data's dim names.
  onnx::TypeProto computed;
  if (const std::optional<SymShape> filled = FilledShape(index, loop.graph, node.input(info.slots.node_input))) {
    auto* shape = computed.mutable_tensor_type()->mutable_shape();
    for (const SymDim& d : *filled) {
      auto* dim = shape->add_dim();
      if (d.fixed()) dim->set_dim_value(d.value);
      if (!d.fixed() && !d.name.empty()) dim->set_dim_param(d.name);
    }
    types.push_back(&computed);
  }
  for (const auto& [graph, name] : sources) {
    if (name.empty()) continue;
    const onnx::TypeProto* type = index.TypeOf(*graph, name);
    if (state.elem_type == 0 && type && type->has_tensor_type()) state.elem_type = type->tensor_type().elem_type();
    types.push_back(type);
  }
  bool ranked = false;
  state.shape = MergedShape(types, inputs.known, &ranked);
  for (size_t i = 0; i < state.shape.size(); ++i) state.axis_names.push_back("dim" + std::to_string(i));
  const ReadTrace read = TraceRead(index, state);
  FindBatch(index, node.input(info.slots.node_input), read.place ? read.place->tensor : "", loop.graph, verdict.times,
            inputs, state);
  state.streamable = verdict.streamable;
  state.not_streamable_reason = verdict.reason;
  // An initial value other than zeros is selected by an empty feed (along the batch, or axis 0): a
  // scalar has no axis to be empty along.
  if (ranked && state.shape.empty() && !KnownZero(index, loop.graph, node.input(info.slots.node_input))) {
    state.problem = "carried '" + info.body_input +
                    "' is a scalar whose initial value is not zeros: no empty feed can stand for its default";
  }
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
  if (verdict.fixed) out.time_axis_option = verdict.fixed->time.Text();
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
  const onnx::GraphProto* body = GraphAttribute(node, kBody);
  if (body == nullptr) return;
  const StateOwner owner{path, n, GraphPathString(index.model(), path), NodeLabel(node, n), node.op_type()};
  for (int k = 0; k < ScanBodyStateCount(ContainerKind::kScan8, node) && k < body->input_size(); ++k) {
    found->notes.push_back(NoteOf(StateNote::Kind::kUnclassified, owner, body->input(k).name(),
                                  "a Scan-8 state variable: rnnstate does not rewrite Scan-8 (opset 8, batch axis)"));
  }
}

/// The Loop or Scan whose body holds the graph at `path` (innermost), described, or "".
std::string EnclosingLoop(const ModelIndex& index, const GraphPath& path) {
  for (size_t depth = path.size(); depth > 0; --depth) {
    if (path[depth - 1].attribute != kBody) continue;
    const GraphPath parent(path.begin(), path.begin() + static_cast<std::ptrdiff_t>(depth) - 1);
    return DescribeNode(index.model(), parent, path[depth - 1].node);
  }
  return "";
}

}  // namespace

void FindLoopStates(const ModelIndex& index, const std::set<std::string>& refused_time_axes,
                    const std::vector<StatePair>& recorded, Findings* found) {
  const CarrierSlots op_carriers = OperatorCarriers(index, found->states);
  const MainInputs inputs = ReadMainInputs(index, recorded);
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
      const LoopVerdict verdict = JudgeLoop(index, *loop, refused_time_axes);
      found->nodes.push_back(Describe(index, *loop, verdict));
      const size_t begin = found->states.size();
      for (const CarriedInfo& info : loop->carried) {
        if (info.role == CarriedRole::kState)
          found->states.push_back(StateOf(index, *loop, info, owner, verdict, inputs));
      }
      // A loop exposed in part streams nothing: when one state cannot be rewritten, none is.
      std::string problem;
      for (size_t k = begin; k < found->states.size() && problem.empty(); ++k) {
        if (!found->states[k].problem.empty())
          problem = "carried '" + found->states[k].variable + "' cannot be exposed (" + found->states[k].problem + ")";
      }
      for (size_t k = begin; k < found->states.size() && !problem.empty(); ++k) {
        if (found->states[k].problem.empty()) found->states[k].problem = problem;
      }
      // The node line shows the first state with a batch (the loop's states share the data's batch).
      RecurrentNode& described = found->nodes.back();
      described.elem_type = found->states[begin].elem_type;
      for (size_t k = begin; k < found->states.size(); ++k) {
        const RecurrentState& state = found->states[k];
        if (state.batch_axis < 0) continue;
        described.batch = state.shape[state.batch_axis];
        described.x = state.batch_source.value;
        break;
      }
    }
  }
}

}  // namespace rnnstate
