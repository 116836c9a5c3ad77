// MakePlan (declared in plan.h): decides every edit of a rewrite from the analysis.

#include <map>
#include <set>

#include "naming.h"
#include "owner_names.h"
#include "plan.h"
#include "proto_access.h"

namespace rnnstate {

namespace {

/// Opset that introduced Expand, needed to broadcast a zero default to a dynamic batch.
constexpr int64_t kExpandOpset = 8;

/// The state shape with a symbolic batch named after X's batch dimension, or "batch".
std::vector<Dim> DeclaredShape(const RecurrentState& state) {
  std::vector<Dim> shape = state.shape;
  if (state.batch_axis >= 0) {
    Dim& batch = shape[state.batch_axis];
    if (!batch.fixed() && batch.param.empty()) batch.param = "batch";
  }
  return shape;
}

/// "hidden_size 64": the fixed axes of a state, for messages about its size.
std::string FixedAxesText(const RecurrentState& state) {
  std::string text;
  for (size_t i = 0; i < state.shape.size(); ++i) {
    if (static_cast<int>(i) == state.batch_axis || !state.shape[i].fixed() || state.shape[i].value <= 1) continue;
    text += (text.empty() ? "" : ", ") + state.axis_names[i] + " " + std::to_string(state.shape[i].value);
  }
  return text.empty() ? "its shape" : text;
}

/// Plans the selected states, one at a time.
class StatePlanner {
 public:
  StatePlanner(const ModelIndex& index, const Analysis& analysis, const PlanOptions& options, NameAllocator& names,
               const PathNamer& path_namer, Plan& plan)
      : index_(index),
        analysis_(analysis),
        options_(options),
        names_(names),
        dim_names_(index.used_dim_params()),
        path_namer_(path_namer),
        plan_(plan) {}

  void PlanState(const StateAnalysis& analyzed) {
    const RecurrentState& state = analyzed.state;
    StateEdit edit;
    edit.key = state.key();
    edit.owner_name = path_namer_.OwnerName(state.owner);
    edit.graph_name = path_namer_.Name(state.owner.graph);
    edit.kind = state.kind_name();
    edit.op = state.owner.op;
    edit.site = analyzed.site;
    edit.elem_type = state.elem_type;
    edit.original = analyzed.origin.value;
    edit.final_value = analyzed.final_state.value;
    edit.streamable = state.streamable;
    stem_ = NodeStem(edit.owner_name);

    if (analyzed.exposed && analyzed.recorded >= 0)
      return PlanRecorded(edit, analysis_.recorded_pairs[analyzed.recorded]);
    if (analyzed.stacked && analyzed.exposed) return PlanStacked(edit, *analyzed.stacked);
    std::string reason = analyzed.thread_problem;
    const StateSite& site = analyzed.site;
    if (reason.empty() && !planned_sites_.insert({site.graph, site.node, site.input_slot}).second) {
      reason = "its state is carried by the same variable as another state";
    }
    if (reason.empty()) reason = PlanInput(analyzed, edit);
    if (reason.empty()) reason = ScanStateProblem(analyzed, edit);
    if (!reason.empty()) {
      plan_.skipped.push_back({state.key(), state.owner.graph_name, edit.owner_name, edit.kind, reason});
      return;
    }
    PlanOutput(analyzed, edit);
    Record(edit);
  }

 private:
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
    edit.input_edit = KeepInput{};
    edit.output_edit = KeepOutput{};
    const GraphIndex& main = index_.graph(GraphPath{});
    if (options_.mode == StateInputMode::kRequired && main.initializers.count(edit.input)) {
      edit.input_edit = DropDefault{};
      edit.optional = false;
    }
    Record(edit);
  }

  void Record(StateEdit& edit) {
    plan_.pairs.push_back(StatePair{edit.input, edit.output, edit.owner_name, edit.graph_name, edit.kind, edit.optional,
                                    edit.streamable, edit.rows});
    plan_.edits.push_back(std::move(edit));
  }

  std::string NewName(const std::string& pattern, const StateEdit& edit) {
    return names_.Allocate(ExpandNameTemplate(pattern, stem_, edit.kind, edit.op));
  }

  /// Decides the input side; returns a skip reason or "".
  std::string PlanInput(const StateAnalysis& analyzed, StateEdit& edit) {
    const RecurrentState& state = analyzed.state;
    const StateOrigin& origin = analyzed.origin;
    const bool required = options_.mode == StateInputMode::kRequired;
    const bool main_site = analyzed.site.graph.empty();
    edit.shape = DeclaredShape(state);
    edit.optional = !required;

    bool is_input = origin.kind == StateOrigin::Kind::kGraphInput || origin.kind == StateOrigin::Kind::kDefaultedInput;
    if (is_input && main_site && origin.other_consumers == 0) {
      // Already fed by its own graph input: keep the user's name and default.
      edit.input = origin.value;
      edit.input_edit = ReuseInput{};
      edit.optional = origin.kind == StateOrigin::Kind::kDefaultedInput;
      if (required && edit.optional) {
        edit.input_edit = DropDefault{};
        edit.optional = false;
      }
      // No input is declared; edit.shape (from the state) declares the output, which has its shape.
      return "";
    }
    if (origin.kind == StateOrigin::Kind::kUndefined)
      return "its initial state '" + origin.value + "' is never defined";

    edit.input = NewName(options_.input_template, edit);
    NewInput input{NoDefault{}, edit.input, GraphPath{}};
    std::string reason;
    if (!required) {
      switch (origin.kind) {
        case StateOrigin::Kind::kInitializer:
          reason = PlanInitializerDefault(analyzed, edit, input);
          break;
        case StateOrigin::Kind::kAbsent:
        case StateOrigin::Kind::kComputed:
        case StateOrigin::Kind::kGraphInput:
        case StateOrigin::Kind::kDefaultedInput:
        case StateOrigin::Kind::kSubgraphInput:
          reason = origin.zero ? PlanZeroDefault(analyzed, edit, input) : PlanSelectOriginal(state, edit, input);
          break;
        case StateOrigin::Kind::kUndefined:
          reason = "unknown origin";
          break;
      }
    }
    edit.input_edit = std::move(input);
    return reason;
  }

  /// The initializer becomes the input's default as it is: it must have the state's shape.
  std::string PlanInitializerDefault(const StateAnalysis& analyzed, StateEdit& edit, NewInput& input) {
    const StateOrigin& origin = analyzed.origin;
    const GraphIndex& graph = index_.graph(origin.value_graph);
    const onnx::TensorProto& tensor =
        ResolveGraph(index_.model(), origin.value_graph)->initializer(graph.initializers.at(origin.value));
    const std::vector<Dim>& expected = analyzed.state.shape;
    bool fits = tensor.dims_size() == static_cast<int>(expected.size());
    for (int i = 0; fits && i < tensor.dims_size(); ++i) {
      fits = tensor.dims(i) >= 0 && (!expected[i].fixed() || expected[i].value == tensor.dims(i));
    }
    if (!fits) {
      std::string dims;
      for (auto d : tensor.dims()) dims += (dims.empty() ? "" : ",") + std::to_string(d);
      return "initializer '" + origin.value + "' has shape [" + dims + "], not the state shape " + ShapeText(expected);
    }
    InitializerDefault initializer;
    initializer.move = analyzed.site.graph.empty() && origin.value_graph.empty() && origin.other_consumers == 0;
    initializer.source = origin.value_graph;
    edit.shape.clear();
    for (auto d : tensor.dims()) {
      edit.shape.push_back(Dim{d, ""});
      initializer.dims.push_back(d);
    }
    input.default_value = std::move(initializer);
    return "";
  }

  std::string PlanZeroDefault(const StateAnalysis& analyzed, StateEdit& edit, NewInput& input) {
    const RecurrentState& state = analyzed.state;
    std::vector<Dim> shape = state.shape;
    const int batch_axis = state.batch_axis;
    if (batch_axis >= 0 && state.shape[batch_axis].fixed()) {
      std::vector<int64_t> dims;
      for (const auto& d : shape) dims.push_back(d.value);
      const std::optional<uint64_t> bytes = DenseTensorBytes(edit.elem_type, dims);
      if (bytes && *bytes <= kMaxZeroDefaultBytes) {
        input.default_value = ZerosDefault{dims};
        return "";
      }
      // Too large to store: broadcast [D,1,H] zeros to the batch of X, as for a dynamic batch. The
      // input's batch is then declared symbolic ([D,1,H] must be a valid value of it).
      auto [name, fresh] = batch_params_.try_emplace({state.owner.graph, state.owner.node});
      if (fresh) name->second = dim_names_.Allocate("batch");
      edit.shape[batch_axis] = Dim{-1, name->second};
      shape[batch_axis] = Dim{-1, ""};
    }
    // A carried site has no X to take the batch from: select the original zeros instead.
    if (analyzed.site.carried) return PlanSelectOriginal(state, edit, input);
    if (index_.onnx_opset() < kExpandOpset) {
      return "a zero default broadcast to the batch needs Expand (opset 8); use --state-inputs required";
    }
    BroadcastZerosDefault broadcast;
    for (const auto& d : shape) broadcast.dims.push_back(d.fixed() ? d.value : 1);
    const std::optional<uint64_t> bytes = DenseTensorBytes(edit.elem_type, broadcast.dims);
    if (!bytes || *bytes > kMaxZeroDefaultBytes) {
      std::vector<Dim> dims;
      for (int64_t d : broadcast.dims) dims.push_back(Dim{d, ""});
      return FixedAxesText(state) + " makes even a " + ShapeText(dims) + " zero default over " +
             std::to_string(kMaxZeroDefaultBytes >> 20) + " MiB; use --state-inputs required";
    }
    broadcast.broadcast = BroadcastFor(state);
    input.default_graph = plan_.broadcasts[broadcast.broadcast].graph;
    input.slot_value = names_.Allocate(edit.input + ".expanded");
    input.default_value = std::move(broadcast);
    return "";
  }

  std::string PlanSelectOriginal(const RecurrentState& state, StateEdit& edit, NewInput& input) {
    if (edit.original.empty()) return "no original value to select";
    SelectOriginalDefault select;
    input.default_graph = index_.Resolve(edit.site.graph, edit.original).graph;
    std::vector<Dim> shape = DeclaredShape(state);
    if (state.batch_axis >= 0 && shape[state.batch_axis].fixed()) shape[state.batch_axis] = Dim{-1, "batch"};
    edit.shape = shape;
    for (const auto& d : state.shape) select.dims.push_back(d.fixed() ? d.value : 0);
    if (state.batch_axis >= 0) select.dims[state.batch_axis] = 0;  // an empty tensor means "not fed"
    select.size_value = names_.Allocate(edit.input + ".size");
    select.zero_value = names_.Allocate(edit.input + ".zero");
    select.is_empty_value = names_.Allocate(edit.input + ".is_empty");
    select.then_value = names_.Allocate(edit.input + ".original");
    select.else_value = names_.Allocate(edit.input + ".fed");
    input.slot_value = names_.Allocate(edit.input + ".selected");
    input.default_value = std::move(select);
    return "";
  }

  /// The shape computation for the owner of `state`, created once and shared by its states.
  int BroadcastFor(const RecurrentState& state) {
    auto key = std::make_pair(state.owner.graph, state.owner.node);
    if (auto it = broadcasts_.find(key); it != broadcasts_.end()) return it->second;
    BroadcastShapeNames b;
    // Where X is defined: often the main graph even for a node deep in an If or Loop.
    b.graph = index_.Resolve(state.owner.graph, state.batch_source.value).graph;
    b.x = state.batch_source.value;
    b.batch_axis = state.batch_source.axis;
    b.batch_position = state.batch_axis;
    b.shape_of_x = names_.Allocate(stem_ + ".x_shape");
    b.batch_index = names_.Allocate(stem_ + ".batch_axis");
    b.batch = names_.Allocate(stem_ + ".batch");
    for (size_t i = 0; i < state.shape.size(); ++i) {
      if (static_cast<int>(i) == state.batch_axis) continue;
      b.fixed_dims.emplace_back(state.shape[i].value, names_.Allocate(stem_ + "." + state.axis_names[i]));
    }
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
  std::string ScanStateProblem(const StateAnalysis& analyzed, const StateEdit& edit) const {
    const NewInput* input = std::get_if<NewInput>(&edit.input_edit);
    if (input == nullptr) return "";
    bool partial = std::holds_alternative<BroadcastZerosDefault>(input->default_value) ||
                   std::holds_alternative<SelectOriginalDefault>(input->default_value);
    for (const auto& level : analyzed.levels) {
      if (partial && level.kind == ContainerKind::kScan9 && !Encloses(input->default_graph, level.graph)) {
        return "its default can only be computed inside the Scan body, and a Scan needs a state of fixed shape; "
               "use --state-inputs required (feed zeros on the first call)";
      }
    }
    return "";
  }

  void PlanOutput(const StateAnalysis& analyzed, StateEdit& edit) {
    const FinalState& final_state = analyzed.final_state;
    if (analyzed.site.graph.empty()) {
      if (final_state.value.empty()) {
        edit.output_edit = NameSlot{};
        edit.output = NewName(options_.output_template, edit);
      } else if (final_state.graph_output) {
        edit.output_edit = ReuseOutput{};
        edit.output = final_state.value;
      } else {
        edit.output_edit = IdentityOutput{};
        edit.output = NewName(options_.output_template, edit);
      }
      return;
    }
    ThreadedOutput threaded;
    edit.output = NewName(options_.output_template, edit);
    threaded.site_value = final_state.value.empty() ? names_.Allocate(edit.output + ".final") : final_state.value;
    for (size_t i = 0; i < analyzed.levels.size(); ++i) {
      const ThreadLevel& level = analyzed.levels[i];
      ThreadStep step;
      step.level = level;
      std::string stem = edit.output + "." +
                         NodeStem(NodeLabel(ResolveGraph(index_.model(), level.graph)->node(level.node), level.node));
      step.inner_value = names_.Allocate(stem + "." + level.attribute + "_out");
      if (level.kind != ContainerKind::kIf) step.carried_input = names_.Allocate(stem + ".carried_in");
      if (level.kind == ContainerKind::kIf) {
        step.other_attribute = level.attribute == "then_branch" ? "else_branch" : "then_branch";
        step.other_value = names_.Allocate(stem + "." + step.other_attribute + "_out");
      }
      step.outer_value = i + 1 == analyzed.levels.size() ? edit.output : names_.Allocate(stem + ".out");
      threaded.steps.push_back(std::move(step));
    }
    edit.output_edit = std::move(threaded);
  }

  const ModelIndex& index_;
  const Analysis& analysis_;
  const PlanOptions& options_;
  NameAllocator& names_;
  NameAllocator dim_names_;  // dim_param names of symbolic batches this plan declares
  const PathNamer& path_namer_;
  std::map<std::pair<GraphPath, int>, std::string> batch_params_;  // per owner: its states share one
  Plan& plan_;
  std::string stem_;
  std::map<std::pair<GraphPath, int>, int> broadcasts_;
  std::set<std::tuple<GraphPath, int, int>> planned_sites_;
};

}  // namespace

Plan MakePlan(const ModelIndex& index, const Analysis& analysis, const PlanOptions& options) {
  // Validate templates up front so that a typo fails before any work.
  ExpandNameTemplate(options.input_template, "n", "h", "LSTM");
  ExpandNameTemplate(options.output_template, "n", "h", "LSTM");

  Plan plan;
  NameAllocator names(index.used_names());
  const NodeNames node_names = NameUnnamedNodes(index, analysis, options, names);
  PathNamer path_namer(index.model(), node_names);
  StatePlanner planner(index, analysis, options, names, path_namer, plan);
  std::set<StateKey> skipped_owners;
  for (const auto& analyzed : analysis.states) {
    const RecurrentState& state = analyzed.state;
    const bool recorded = analyzed.recorded >= 0 && analyzed.exposed;
    if (!Selected(options, state)) {
      // Not rewritten this time: its recorded pair stays.
      if (recorded) plan.pairs.push_back(analysis.recorded_pairs[analyzed.recorded]);
      continue;
    }
    if (!state.problem.empty()) {
      StateKey owner{state.owner.graph, state.owner.node, -1};
      if (skipped_owners.insert(owner).second) {
        plan.skipped.push_back({owner, state.owner.graph_name, state.owner.name, "", state.problem});
      }
      if (recorded) plan.pairs.push_back(analysis.recorded_pairs[analyzed.recorded]);
      continue;
    }
    planner.PlanState(analyzed);
  }
  // Name only owners that matter for an edit that changes something, so re-runs change nothing.
  bool edits_change = false;
  for (const auto& edit : plan.edits) edits_change |= edit.Changes();
  if (edits_change) {
    for (const auto& [where, name] : node_names) plan.node_names.push_back({where, name});
  }
  plan.metadata_changes = !analysis.metadata_error.empty() || plan.pairs != analysis.recorded_pairs;
  return plan;
}

}  // namespace rnnstate
