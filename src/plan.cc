#include "rnnstate/plan.h"

#include <map>
#include <set>

#include "rnnstate/naming.h"
#include "rnnstate/proto_access.h"

namespace rnnstate {

namespace {

/// Opset that introduced Expand, needed to broadcast a zero default to a dynamic batch.
constexpr int64_t kExpandOpset = 8;

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

/// Graph path strings after unnamed nodes got their names, so that metadata written now still matches
/// the model after the rewrite (where node indices have moved).
class PathNamer {
 public:
  PathNamer(const onnx::ModelProto& model, const std::map<std::pair<GraphPath, int>, std::string>& names)
      : model_(model), names_(names) {}

  std::string Name(const GraphPath& path) const {
    std::string out = "main";
    GraphPath prefix;
    for (const auto& step : path) {
      const onnx::GraphProto* graph = ResolveGraph(model_, prefix);
      auto renamed = names_.find({prefix, step.node});
      out += "/" + (renamed != names_.end() ? renamed->second : NodeLabel(graph->node(step.node), step.node));
      out += ":" + step.attribute;
      if (step.list_index >= 0) out += "[" + std::to_string(step.list_index) + "]";
      prefix.push_back(step);
    }
    return out;
  }

 private:
  const onnx::ModelProto& model_;
  const std::map<std::pair<GraphPath, int>, std::string>& names_;
};

/// Plans the states of the selected nodes.
class StatePlanner {
 public:
  StatePlanner(const ModelIndex& index, const Analysis& analysis, const PlanOptions& options, NameAllocator& names,
               Plan& plan)
      : index_(index),
        analysis_(analysis),
        options_(options),
        names_(names),
        dim_names_(index.used_dim_params()),
        plan_(plan) {}

  void PlanNode(const NodeAnalysis& node, const std::string& node_name, const std::string& graph_name) {
    stem_ = NodeStem(node_name);
    for (const auto& state : node.states) PlanState(node.node, state, node_name, graph_name);
  }

 private:
  void PlanState(const RecurrentNode& node, const StateAnalysis& state, const std::string& node_name,
                 const std::string& graph_name) {
    StateEdit edit;
    edit.graph = node.graph;
    edit.node = node.node;
    edit.node_name = node_name;
    edit.graph_name = graph_name;
    edit.kind = state.kind;
    edit.site = state.site;
    edit.elem_type = node.elem_type;
    edit.original = state.origin.value;
    edit.final_value = state.final_state.value;
    edit.site_value = state.final_state.value;
    edit.streamable = node.streamable;
    const char* kind = StateKindName(state.kind);

    if (state.exposed && state.recorded >= 0) {
      PlanRecorded(edit, analysis_.recorded_pairs[state.recorded]);
      return;
    }
    if (state.stacked && state.exposed) {
      PlanStacked(edit, *state.stacked);
      return;
    }
    std::string reason = state.thread_problem;
    if (reason.empty() && !planned_sites_.insert({state.site.graph, state.site.node, state.site.input_slot}).second) {
      reason = "its state is carried by the same variable as another state";
    }
    if (reason.empty()) reason = PlanInput(node, state, edit);
    if (reason.empty()) reason = ScanStateProblem(state, edit);
    if (!reason.empty()) {
      plan_.skipped.push_back({node.graph_name, node_name, kind, reason});
      return;
    }
    PlanOutput(node, state, edit);
    Record(edit);
  }

  /// An already exposed, recorded state: unchanged, except that required mode drops its default.
  void PlanRecorded(StateEdit& edit, const StatePair& pair) {
    edit.input = pair.input;
    edit.output = pair.output;
    edit.optional = pair.optional;
    edit.streamable = pair.streamable;
    edit.rows = pair.rows;
    KeepExposed(edit);
  }

  /// A state the model exposes stacked: the graph stays as it is; the pair names the rows.
  void PlanStacked(StateEdit& edit, const StackedExposure& stacked) {
    edit.input = stacked.input;
    edit.output = stacked.output;
    edit.rows = stacked.rows;
    edit.optional = index_.graph(GraphPath{}).initializers.count(stacked.input) > 0;
    KeepExposed(edit);
  }

  /// Records an exposed state unchanged, except that required mode drops the input's default.
  void KeepExposed(StateEdit& edit) {
    edit.input_action = InputAction::kKeep;
    edit.output_action = OutputAction::kKeep;
    const GraphIndex& main = index_.graph(GraphPath{});
    if (options_.mode == StateInputMode::kRequired && main.initializers.count(edit.input)) {
      edit.input_action = InputAction::kDropDefault;
      edit.optional = false;
    }
    Record(edit);
  }

  void Record(StateEdit& edit) {
    plan_.pairs.push_back(StatePair{edit.input, edit.output, edit.node_name, edit.graph_name,
                                    StateKindName(edit.kind), edit.optional, edit.streamable, edit.rows});
    plan_.edits.push_back(std::move(edit));
  }

  std::string NewName(const std::string& pattern, StateKind kind, const RecurrentNode& node) {
    return names_.Allocate(ExpandNameTemplate(pattern, stem_, StateKindName(kind), node.op));
  }

  /// Decides the input side; returns a skip reason or "".
  std::string PlanInput(const RecurrentNode& node, const StateAnalysis& state, StateEdit& edit) {
    const StateOrigin& origin = state.origin;
    const bool required = options_.mode == StateInputMode::kRequired;
    const bool main_site = state.site.graph.empty();
    edit.shape = DeclaredShape(node);
    edit.optional = !required;

    bool is_input = origin.kind == StateOrigin::Kind::kGraphInput || origin.kind == StateOrigin::Kind::kDefaultedInput;
    if (is_input && main_site && origin.other_consumers == 0) {
      // Already fed by its own graph input: keep the user's name and default.
      edit.input = origin.value;
      edit.slot_value = origin.value;
      edit.input_action = InputAction::kReuseInput;
      edit.optional = origin.kind == StateOrigin::Kind::kDefaultedInput;
      if (required && edit.optional) {
        edit.input_action = InputAction::kDropDefault;
        edit.optional = false;
      }
      // No input is declared; edit.shape (from the node) declares the output, which has Y's shape.
      return "";
    }
    if (origin.kind == StateOrigin::Kind::kUndefined) return "its initial state '" + origin.value + "' is never defined";

    edit.input_action = InputAction::kNewInput;
    edit.input = NewName(options_.input_template, state.kind, node);
    edit.slot_value = edit.input;
    if (required) return "";

    switch (origin.kind) {
      case StateOrigin::Kind::kInitializer: {
        const GraphIndex& graph = index_.graph(origin.value_graph);
        const onnx::TensorProto& tensor =
            ResolveGraph(index_.model(), origin.value_graph)->initializer(graph.initializers.at(origin.value));
        // The initializer becomes the input's default as it is: it must have the state's shape.
        std::vector<Dim> expected = node.StateShape();
        bool fits = tensor.dims_size() == static_cast<int>(expected.size());
        for (int i = 0; fits && i < tensor.dims_size(); ++i) {
          fits = tensor.dims(i) >= 0 && (!expected[i].fixed() || expected[i].value == tensor.dims(i));
        }
        if (!fits) {
          std::string dims;
          for (auto d : tensor.dims()) dims += (dims.empty() ? "" : ",") + std::to_string(d);
          return "initializer '" + origin.value + "' has shape [" + dims + "], not the state shape " +
                 ShapeText(expected);
        }
        bool movable = main_site && origin.value_graph.empty() && origin.other_consumers == 0;
        edit.default_kind = movable ? DefaultKind::kMoveInitializer : DefaultKind::kCopyInitializer;
        edit.default_source = origin.value_graph;
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
      case StateOrigin::Kind::kSubgraphInput:
        if (origin.zero) return PlanZeroDefault(node, state, edit);
        return PlanSelectOriginal(node, edit);
      case StateOrigin::Kind::kUndefined: break;
    }
    return "unknown origin";
  }

  std::string PlanZeroDefault(const RecurrentNode& node, const StateAnalysis& state, StateEdit& edit) {
    std::vector<Dim> shape = node.StateShape();
    const size_t batch_axis = node.layout == 1 ? 0 : 1;
    if (node.batch.fixed()) {
      std::vector<int64_t> dims;
      for (const auto& d : shape) dims.push_back(d.value);
      const std::optional<uint64_t> bytes = DenseTensorBytes(edit.elem_type, dims);
      if (bytes && *bytes <= kMaxZeroDefaultBytes) {
        edit.default_kind = DefaultKind::kZeros;
        edit.default_dims = dims;
        return "";
      }
      // Too large to store: broadcast [D,1,H] zeros to the batch of X, as for a dynamic batch. The
      // input's batch is then declared symbolic ([D,1,H] must be a valid value of it).
      auto [name, fresh] = batch_params_.try_emplace({node.graph, node.node});
      if (fresh) name->second = dim_names_.Allocate("batch");
      edit.shape[batch_axis] = Dim{-1, name->second};
      shape[batch_axis] = Dim{-1, ""};
    }
    // A carried site has no X to take the batch from: select the original zeros instead.
    if (state.site.carried) return PlanSelectOriginal(node, edit);
    if (index_.onnx_opset() < kExpandOpset) {
      return "a zero default broadcast to the batch needs Expand (opset 8); use --state-inputs required";
    }
    for (const auto& d : shape) edit.default_dims.push_back(d.fixed() ? d.value : 1);
    const std::optional<uint64_t> bytes = DenseTensorBytes(edit.elem_type, edit.default_dims);
    if (!bytes || *bytes > kMaxZeroDefaultBytes) {
      edit.default_dims.clear();
      return "hidden_size " + std::to_string(node.hidden_size) + " makes even a [D,1,H] zero default over " +
             std::to_string(kMaxZeroDefaultBytes >> 20) + " MiB; use --state-inputs required";
    }
    edit.default_kind = DefaultKind::kBroadcastZeros;
    edit.broadcast = BroadcastFor(node);
    edit.default_graph = plan_.broadcasts[edit.broadcast].graph;
    edit.slot_value = names_.Allocate(edit.input + ".expanded");
    return "";
  }

  std::string PlanSelectOriginal(const RecurrentNode& node, StateEdit& edit) {
    if (edit.original.empty()) return "no original value to select";
    edit.default_kind = DefaultKind::kSelectOriginal;
    edit.default_graph = index_.Resolve(edit.site.graph, edit.original).graph;
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
    auto key = std::make_pair(node.graph, node.node);
    if (auto it = broadcasts_.find(key); it != broadcasts_.end()) return it->second;
    BroadcastShapeNames b;
    // Where X is defined: often the main graph even for a node deep in an If or Loop.
    b.graph = index_.Resolve(node.graph, node.x).graph;
    b.node = node.node;
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
    int id = static_cast<int>(plan_.broadcasts.size()) - 1;
    broadcasts_[key] = id;
    return id;
  }

  /// A Scan carries its state variables with one fixed shape, so the state threaded out through a Scan
  /// must start at its full shape. A default of another shape ([D,1,H] to broadcast, or empty to select
  /// the original) is fine where the effective state is visible; when it is computed only inside the
  /// Scan's body, the Scan would receive the raw default and ONNX Runtime rejects the run.
  std::string ScanStateProblem(const StateAnalysis& state, const StateEdit& edit) const {
    bool partial = edit.default_kind == DefaultKind::kBroadcastZeros || edit.default_kind == DefaultKind::kSelectOriginal;
    for (const auto& level : state.levels) {
      if (partial && level.op == "Scan" && !Encloses(edit.default_graph, level.graph)) {
        return "its default can only be computed inside the Scan body, and a Scan needs a state of fixed shape; "
               "use --state-inputs required (feed zeros on the first call)";
      }
    }
    return "";
  }

  void PlanOutput(const RecurrentNode& node, const StateAnalysis& state, StateEdit& edit) {
    if (state.site.graph.empty()) {
      if (state.final_state.value.empty()) {
        edit.output_action = OutputAction::kNameSlot;
        edit.output = NewName(options_.output_template, state.kind, node);
        edit.site_value = edit.output;
      } else if (state.final_state.graph_output) {
        edit.output_action = OutputAction::kReuseOutput;
        edit.output = state.final_state.value;
      } else {
        edit.output_action = OutputAction::kIdentity;
        edit.output = NewName(options_.output_template, state.kind, node);
      }
      return;
    }
    edit.output_action = OutputAction::kThreaded;
    edit.output = NewName(options_.output_template, state.kind, node);
    if (state.final_state.value.empty()) edit.site_value = names_.Allocate(edit.output + ".final");
    for (size_t i = 0; i < state.levels.size(); ++i) {
      const ThreadLevel& level = state.levels[i];
      ThreadStep step;
      step.level = level;
      std::string stem = edit.output + "." + NodeStem(NodeLabel(
          ResolveGraph(index_.model(), level.graph)->node(level.node), level.node));
      step.inner_value = names_.Allocate(stem + "." + level.attribute + "_out");
      if (level.op == "Loop" || level.op == "Scan") step.carried_input = names_.Allocate(stem + ".carried_in");
      if (level.op == "If") {
        step.other_attribute = level.attribute == "then_branch" ? "else_branch" : "then_branch";
        step.other_value = names_.Allocate(stem + "." + step.other_attribute + "_out");
      }
      step.outer_value = i + 1 == state.levels.size() ? edit.output : names_.Allocate(stem + ".out");
      edit.threads.push_back(std::move(step));
    }
  }

  const ModelIndex& index_;
  const Analysis& analysis_;
  const PlanOptions& options_;
  NameAllocator& names_;
  NameAllocator dim_names_;  // dim_param names of symbolic batches this plan declares
  std::map<std::pair<GraphPath, int>, std::string> batch_params_;  // per node: its h and c share one
  Plan& plan_;
  std::string stem_;
  std::map<std::pair<GraphPath, int>, int> broadcasts_;
  std::set<std::tuple<GraphPath, int, int>> planned_sites_;
};

/// Keeps the recorded pairs of a node that is not rewritten this time (filtered out or skipped).
void KeepRecordedPairs(const Analysis& analysis, const NodeAnalysis& node, Plan& plan) {
  for (const auto& state : node.states) {
    if (state.recorded >= 0 && state.exposed) plan.pairs.push_back(analysis.recorded_pairs[state.recorded]);
  }
}

/// Unnamed recurrent nodes, and unnamed containers on the way to them, get stable names.
void NameUnnamedNodes(const ModelIndex& index, const Analysis& analysis, const PlanOptions& options,
                      NameAllocator& names, std::map<std::pair<GraphPath, int>, std::string>& out) {
  auto name = [&](const GraphPath& path, int node) {
    const onnx::NodeProto& proto = ResolveGraph(index.model(), path)->node(node);
    if (proto.name().empty() && !out.count({path, node})) out[{path, node}] = names.Allocate(NodeLabel(proto, node));
  };
  for (const auto& node : analysis.nodes) {
    const RecurrentNode& n = node.node;
    if (!Selected(options, n) || !n.problem.empty()) continue;
    GraphPath prefix;
    for (const auto& step : n.graph) {
      name(prefix, step.node);
      prefix.push_back(step);
    }
    name(n.graph, n.node);
  }
}

}  // namespace

std::string StateEdit::Describe() const {
  const std::string at_rows = RowRangeText(rows);
  std::string in;
  switch (input_action) {
    case InputAction::kKeep: in = "input '" + input + "'" + at_rows + " (already exposed)"; break;
    case InputAction::kReuseInput: in = "input '" + input + "' (existing graph input)"; break;
    case InputAction::kDropDefault: in = "input '" + input + "'" + at_rows + " (default removed: required)"; break;
    case InputAction::kNewInput: {
      in = "new input '" + input + "' " + ShapeText(shape);
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
  if (site.carried) in += ", fed to the loop-carried variable";
  std::string out;
  switch (output_action) {
    case OutputAction::kKeep: out = "output '" + output + "'" + at_rows + " (already exposed)"; break;
    case OutputAction::kReuseOutput: out = "output '" + output + "' (existing graph output)"; break;
    case OutputAction::kNameSlot: out = "new output '" + output + "'"; break;
    case OutputAction::kIdentity: out = "new output '" + output + "' (Identity of '" + final_value + "')"; break;
    case OutputAction::kThreaded: {
      out = "new output '" + output + "' threaded out through";
      for (const auto& step : threads) {
        out += " " + step.level.op + (step.level.op == "If" ? " (output)" : " (carried variable)");
      }
      break;
    }
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

const StateEdit* Plan::FindEdit(const RecurrentNode& node, StateKind kind) const {
  for (const auto& edit : edits) {
    if (edit.graph == node.graph && edit.node == node.node && edit.kind == kind) return &edit;
  }
  return nullptr;
}

const SkippedState* Plan::FindSkip(const RecurrentNode& node, StateKind kind) const {
  for (const auto& skip : skipped) {
    if (skip.graph == node.graph_name && skip.node == node.name &&
        (skip.kind.empty() || skip.kind == StateKindName(kind))) {
      return &skip;
    }
  }
  return nullptr;
}

Plan MakePlan(const ModelIndex& index, const Analysis& analysis, const PlanOptions& options) {
  // Validate templates up front so that a typo fails before any work.
  ExpandNameTemplate(options.input_template, "n", "h", "LSTM");
  ExpandNameTemplate(options.output_template, "n", "h", "LSTM");

  Plan plan;
  NameAllocator names(index.used_names());
  std::map<std::pair<GraphPath, int>, std::string> node_names;
  NameUnnamedNodes(index, analysis, options, names, node_names);
  PathNamer path_namer(index.model(), node_names);
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
    auto renamed = node_names.find({n.graph, n.node});
    std::string name = renamed != node_names.end() ? renamed->second : n.name;
    planner.PlanNode(node, name, path_namer.Name(n.graph));
  }
  // Name only nodes that matter for an edit that changes something, so re-runs change nothing.
  bool edits_change = false;
  for (const auto& edit : plan.edits) {
    edits_change |= edit.input_action != InputAction::kKeep || edit.output_action != OutputAction::kKeep;
  }
  if (edits_change) {
    for (const auto& [where, name] : node_names) plan.node_names.push_back({where, name});
  }
  plan.metadata_changes = !analysis.metadata_error.empty() || plan.pairs != analysis.recorded_pairs;
  return plan;
}

}  // namespace rnnstate
