#include "rnnstate/plan.h"

#include "rnnstate/naming.h"

namespace rnnstate {

namespace {

/// Opset that introduced Expand, needed to broadcast a zero default to a dynamic batch.
constexpr int64_t kExpandOpset = 8;

std::string ShapeString(const std::vector<Dim>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? "," : "") + shape[i].ToString();
  return out + "]";
}

bool Selected(const PlanOptions& options, const RecurrentNode& node) {
  if (!options.node_filter) return true;
  return std::regex_search(node.name, *options.node_filter) ||
         std::regex_search(node.graph_name + "/" + node.name, *options.node_filter);
}

/// The state shape with a symbolic batch named after X's batch dimension, or "batch".
std::vector<Dim> DeclaredShape(const RecurrentNode& node) {
  std::vector<Dim> shape = node.StateShape();
  Dim& batch = shape[node.layout == 1 ? 0 : 1];
  if (!batch.fixed() && batch.param.empty()) batch.param = "batch";
  return shape;
}

/// Plans one state that is not exposed yet. Returns false (and records why) when it cannot be done.
class StatePlanner {
 public:
  StatePlanner(const ModelIndex& index, const Analysis& analysis, const PlanOptions& options, NameAllocator& names,
               Plan& plan)
      : index_(index), analysis_(analysis), options_(options), names_(names), plan_(plan) {}

  void PlanNode(const NodeAnalysis& node, const std::string& node_name) {
    broadcast_ = -1;
    stem_ = NodeStem(node_name);
    for (const auto& state : node.states) PlanState(node, state, node_name);
  }

 private:
  void PlanState(const NodeAnalysis& node_analysis, const StateAnalysis& state, const std::string& node_name) {
    const RecurrentNode& node = node_analysis.node;
    StateEdit edit;
    edit.graph = node.graph;
    edit.node = node.node;
    edit.node_name = node_name;
    edit.graph_name = node.graph_name;
    edit.kind = state.kind;
    edit.slot_in = InitialStateSlot(state.kind);
    edit.slot_out = FinalStateSlot(state.kind);
    edit.elem_type = node.elem_type;
    edit.original = state.origin.value;
    edit.final_value = state.final_state.value;
    edit.streamable = node.streamable;
    const char* kind = StateKindName(state.kind);

    if (state.exposed && state.recorded >= 0) {
      PlanRecorded(edit, analysis_.recorded_pairs[state.recorded]);
      return;
    }
    std::string reason = PlanInput(node, state, edit);
    if (!reason.empty()) {
      plan_.skipped.push_back({node.graph_name, node_name, kind, reason});
      return;
    }
    PlanOutput(state, edit);
    Record(edit);
  }

  /// An already exposed, recorded state: unchanged, except that required mode drops its default.
  void PlanRecorded(StateEdit& edit, const StatePair& pair) {
    edit.input = pair.input;
    edit.output = pair.output;
    edit.input_action = InputAction::kKeep;
    edit.output_action = OutputAction::kKeep;
    edit.optional = pair.optional;
    edit.streamable = pair.streamable;
    const GraphIndex& main = index_.graph(GraphPath{});
    if (options_.mode == StateInputMode::kRequired && main.initializers.count(pair.input)) {
      edit.input_action = InputAction::kDropDefault;
      edit.optional = false;
    }
    Record(edit);
  }

  void Record(StateEdit& edit) {
    plan_.pairs.push_back(StatePair{edit.input, edit.output, edit.node_name, edit.graph_name,
                                    StateKindName(edit.kind), edit.optional, edit.streamable});
    plan_.edits.push_back(std::move(edit));
  }

  std::string NewName(const std::string& pattern, StateKind kind, const RecurrentNode& node) {
    return names_.Allocate(ExpandNameTemplate(pattern, stem_, StateKindName(kind), node.op));
  }

  /// Decides the input side; returns a skip reason or "".
  std::string PlanInput(const RecurrentNode& node, const StateAnalysis& state, StateEdit& edit) {
    const StateOrigin& origin = state.origin;
    const bool required = options_.mode == StateInputMode::kRequired;
    edit.shape = DeclaredShape(node);
    edit.optional = !required;

    bool is_input = origin.kind == StateOrigin::Kind::kGraphInput || origin.kind == StateOrigin::Kind::kDefaultedInput;
    if (is_input && origin.other_consumers == 0) {
      // Already fed by its own graph input: keep the user's name and default.
      edit.input = origin.value;
      edit.slot_value = origin.value;
      edit.input_action = InputAction::kReuseInput;
      edit.optional = origin.kind == StateOrigin::Kind::kDefaultedInput;
      if (required && edit.optional) {
        edit.input_action = InputAction::kDropDefault;
        edit.optional = false;
      }
      const onnx::TypeProto* type = index_.graph(node.graph).TypeOf(origin.value);
      if (type != nullptr && type->has_tensor_type() && type->tensor_type().has_shape()) {
        edit.shape.clear();
        for (const auto& d : type->tensor_type().shape().dim()) {
          edit.shape.push_back(Dim{d.has_dim_value() ? d.dim_value() : -1, d.dim_param()});
        }
      }
      return "";
    }

    edit.input_action = InputAction::kNewInput;
    edit.input = NewName(options_.input_template, state.kind, node);
    edit.slot_value = edit.input;
    if (required) return "";

    switch (origin.kind) {
      case StateOrigin::Kind::kInitializer: {
        const GraphIndex& graph = index_.graph(node.graph);
        const onnx::TensorProto& tensor =
            ResolveGraph(index_.model(), node.graph)->initializer(graph.initializers.at(origin.value));
        edit.default_kind = origin.other_consumers == 0 ? DefaultKind::kMoveInitializer : DefaultKind::kCopyInitializer;
        edit.shape.clear();
        for (auto d : tensor.dims()) {
          edit.shape.push_back(Dim{d, ""});
          edit.default_dims.push_back(d);
        }
        return "";
      }
      case StateOrigin::Kind::kAbsent:
      case StateOrigin::Kind::kComputed:
      case StateOrigin::Kind::kGraphInput:
      case StateOrigin::Kind::kDefaultedInput:
        if (origin.zero) return PlanZeroDefault(node, edit);
        return PlanSelectOriginal(node, edit);
      case StateOrigin::Kind::kOuterScope:
        return "initial state comes from an enclosing graph (not supported yet)";
    }
    return "unknown origin";
  }

  std::string PlanZeroDefault(const RecurrentNode& node, StateEdit& edit) {
    std::vector<Dim> shape = node.StateShape();
    if (node.batch.fixed()) {
      edit.default_kind = DefaultKind::kZeros;
      for (const auto& d : shape) edit.default_dims.push_back(d.value);
      return "";
    }
    if (index_.onnx_opset() < kExpandOpset) {
      return "dynamic batch needs Expand (opset 8) for a zero default; use --state-inputs required";
    }
    edit.default_kind = DefaultKind::kBroadcastZeros;
    for (const auto& d : shape) edit.default_dims.push_back(d.fixed() ? d.value : 1);
    edit.broadcast = BroadcastFor(node);
    edit.slot_value = names_.Allocate(edit.input + ".expanded");
    return "";
  }

  std::string PlanSelectOriginal(const RecurrentNode& node, StateEdit& edit) {
    edit.default_kind = DefaultKind::kSelectOriginal;
    std::vector<Dim> shape = DeclaredShape(node);
    int batch_position = node.layout == 1 ? 0 : 1;
    if (shape[batch_position].fixed()) shape[batch_position] = Dim{-1, "batch"};
    edit.shape = shape;
    for (const auto& d : node.StateShape()) edit.default_dims.push_back(d.fixed() ? d.value : 0);
    edit.default_dims[batch_position] = 0;  // an empty tensor means "not fed"
    edit.size_value = names_.Allocate(edit.input + ".size");
    edit.zero_value = names_.Allocate(edit.input + ".zero");
    edit.is_empty_value = names_.Allocate(edit.input + ".is_empty");
    edit.then_value = names_.Allocate(edit.input + ".original");
    edit.else_value = names_.Allocate(edit.input + ".fed");
    edit.slot_value = names_.Allocate(edit.input + ".selected");
    return "";
  }

  /// The shape computation for `node`, created once and shared by its states.
  int BroadcastFor(const RecurrentNode& node) {
    if (broadcast_ >= 0) return broadcast_;
    BroadcastShapeNames b;
    b.x = node.x;
    b.batch_axis = node.layout == 1 ? 0 : 1;
    b.batch_position = node.layout == 1 ? 0 : 1;
    b.num_directions = node.num_directions;
    b.hidden_size = node.hidden_size;
    b.shape_of_x = names_.Allocate(stem_ + ".x_shape");
    b.batch_index = names_.Allocate(stem_ + ".batch_axis");
    b.batch = names_.Allocate(stem_ + ".batch");
    b.directions = names_.Allocate(stem_ + ".num_directions");
    b.hidden = names_.Allocate(stem_ + ".hidden_size");
    b.state_shape = names_.Allocate(stem_ + ".state_shape");
    plan_.broadcasts.push_back(std::move(b));
    broadcast_ = static_cast<int>(plan_.broadcasts.size()) - 1;
    return broadcast_;
  }

  void PlanOutput(const StateAnalysis& state, StateEdit& edit) {
    const RecurrentNode* node = nullptr;
    for (const auto& n : analysis_.nodes) {
      if (n.node.graph == edit.graph && n.node.node == edit.node) node = &n.node;
    }
    if (state.final_state.value.empty()) {
      edit.output_action = OutputAction::kNameSlot;
      edit.output = NewName(options_.output_template, state.kind, *node);
    } else if (state.final_state.graph_output && edit.graph.empty()) {
      edit.output_action = OutputAction::kReuseOutput;
      edit.output = state.final_state.value;
    } else {
      edit.output_action = OutputAction::kIdentity;
      edit.output = NewName(options_.output_template, state.kind, *node);
    }
  }

  const ModelIndex& index_;
  const Analysis& analysis_;
  const PlanOptions& options_;
  NameAllocator& names_;
  Plan& plan_;
  std::string stem_;
  int broadcast_ = -1;
};

/// Keeps the recorded pairs of a node that is not rewritten this time (filtered out or skipped).
void KeepRecordedPairs(const Analysis& analysis, const NodeAnalysis& node, Plan& plan) {
  for (const auto& state : node.states) {
    if (state.recorded >= 0 && state.exposed) plan.pairs.push_back(analysis.recorded_pairs[state.recorded]);
  }
}

}  // namespace

std::string StateEdit::Describe() const {
  std::string in;
  switch (input_action) {
    case InputAction::kKeep: in = "input '" + input + "' (already exposed)"; break;
    case InputAction::kReuseInput: in = "input '" + input + "' (existing graph input)"; break;
    case InputAction::kDropDefault: in = "input '" + input + "' (default removed: required)"; break;
    case InputAction::kNewInput: {
      in = "new input '" + input + "' " + ShapeString(shape);
      switch (default_kind) {
        case DefaultKind::kNone: in += " (required)"; break;
        case DefaultKind::kZeros: in += " (default: zeros)"; break;
        case DefaultKind::kBroadcastZeros: in += " (default: zeros broadcast to the batch of X)"; break;
        case DefaultKind::kMoveInitializer: in += " (default: initializer '" + original + "')"; break;
        case DefaultKind::kCopyInitializer: in += " (default: copy of initializer '" + original + "')"; break;
        case DefaultKind::kSelectOriginal: in += " (default: the original computation of '" + original + "')"; break;
      }
    }
  }
  std::string out;
  switch (output_action) {
    case OutputAction::kKeep: out = "output '" + output + "' (already exposed)"; break;
    case OutputAction::kReuseOutput: out = "output '" + output + "' (existing graph output)"; break;
    case OutputAction::kNameSlot: out = "new output '" + output + "'"; break;
    case OutputAction::kIdentity: out = "new output '" + output + "' (Identity of '" + final_value + "')"; break;
  }
  return in + "; " + out;
}

bool Plan::ChangesModel() const {
  if (!node_names.empty() || metadata_changes) return true;
  for (const auto& edit : edits) {
    if (edit.input_action != InputAction::kKeep || edit.output_action != OutputAction::kKeep) return true;
  }
  return false;
}

Plan MakePlan(const ModelIndex& index, const Analysis& analysis, const PlanOptions& options) {
  // Validate templates up front so that a typo fails before any work.
  ExpandNameTemplate(options.input_template, "n", "h", "LSTM");
  ExpandNameTemplate(options.output_template, "n", "h", "LSTM");

  Plan plan;
  NameAllocator names(index.used_names());
  StatePlanner planner(index, analysis, options, names, plan);
  for (const auto& node : analysis.nodes) {
    const RecurrentNode& n = node.node;
    if (!Selected(options, n)) {
      KeepRecordedPairs(analysis, node, plan);
      continue;
    }
    if (!n.problem.empty()) {
      plan.skipped.push_back({n.graph_name, n.name, "", n.problem});
      KeepRecordedPairs(analysis, node, plan);
      continue;
    }
    if (!n.graph.empty()) {
      plan.skipped.push_back({n.graph_name, n.name, "", "recurrent nodes inside subgraphs are not supported yet"});
      KeepRecordedPairs(analysis, node, plan);
      continue;
    }
    std::string name = n.name;
    if (n.unnamed) {
      name = names.Allocate(n.name);
      plan.node_names.push_back({{n.graph, n.node}, name});
    }
    planner.PlanNode(node, name);
  }
  plan.metadata_changes = !analysis.metadata_error.empty() || plan.pairs != analysis.recorded_pairs;
  return plan;
}

}  // namespace rnnstate
