#include "rewrite/planner.h"

#include <map>
#include <set>
#include <tuple>
#include <unordered_set>

#include "graph/naming.h"
#include "graph/proto_access.h"
#include "rewrite/context_planner.h"
#include "rewrite/data_batch.h"
#include "rewrite/input_planner.h"
#include "rewrite/owner_names.h"
#include "rewrite/state_shapes.h"
#include "time/stream_verdict.h"

namespace rnnstate {

namespace {

/// Plans the selected states, one at a time: the input side (InputPlanner), the output side, and the
/// pair recorded in the metadata.
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
        plan_(plan),
        inputs_(index, options, names, plan) {}

  void PlanState(const StateAnalysis& analyzed) {
    const RecurrentState& state = analyzed.state;
    StateEdit edit = EditHeader(analyzed, path_namer_.OwnerName(state.owner), path_namer_.Name(state.owner.graph));
    stem_ = NodeStem(edit.owner_name);
    const Dim batch = DataBatchOf(state);

    if (analyzed.exposed && analyzed.recorded >= 0 && analysis_.metadata_error.empty()) {
      return PlanRecorded(analyzed, edit, analysis_.recorded_pairs[analyzed.recorded], batch);
    }
    if (analyzed.exposure && analyzed.exposed) return PlanAuthorsExposure(analyzed, edit, *analyzed.exposure, batch);
    std::string reason = analyzed.within_call.empty() ? analyzed.thread_problem : analyzed.within_call;
    const StateSite& site = analyzed.site;
    if (reason.empty() && !planned_sites_.insert({site.graph, site.node, site.input_slot}).second) {
      reason = "its state is carried by the same variable as another state";
    }
    if (reason.empty()) reason = inputs_.PlanUnexposed(analyzed, batch, stem_, InputName(analyzed, edit), edit);
    if (!reason.empty()) {
      plan_.skipped.push_back({state.key(), state.owner.graph_name, edit.owner_name, edit.kind, reason});
      return;
    }
    PlanOutput(analyzed, edit);
    edit.data_shape = DataShape(FedShape(edit.shape, state), state.batch_axis, batch);
    NoteModelInput(analyzed, edit);
    Record(edit, state, /*first_record=*/true);
  }

 private:
  /// The name of a new state input, allocated only when one will be added.
  std::string InputName(const StateAnalysis& analyzed, const StateEdit& edit) {
    const StateOrigin& origin = analyzed.origin;
    const bool is_input =
        origin.kind == StateOrigin::Kind::kGraphInput || origin.kind == StateOrigin::Kind::kDefaultedInput;
    const bool reused = is_input && analyzed.site.graph.empty() && origin.other_consumers == 0;
    if (reused || origin.kind == StateOrigin::Kind::kUndefined) return "";
    return NewName(options_.input_template, edit);
  }

  /// The state's batch as the data inputs name it; an unnamed batch of a main-graph input gets a name
  /// (once per input and axis).
  Dim DataBatchOf(const RecurrentState& state) {
    DataBatch batch = FindDataBatch(index_, state, "", &inputs_.Facts(), &batch_traces_);
    if (!batch.unnamed_input_dim) return batch.dim;
    auto [name, fresh] = input_dim_names_.try_emplace(*batch.unnamed_input_dim);
    if (fresh) {
      name->second = dim_names_.Allocate("batch");
      plan_.input_dim_names.emplace_back(batch.unnamed_input_dim->first, batch.unnamed_input_dim->second, name->second);
    }
    return Dim{-1, name->second};
  }

  /// An already exposed, recorded state: unchanged, except for its default (see PlanExposed).
  void PlanRecorded(const StateAnalysis& analyzed, StateEdit& edit, const StatePair& pair, const Dim& batch) {
    // `streamable` stays the analysis' verdict: a stage before this plan (--time-axis) may have changed it.
    TakeRecordedPair(pair, edit);
    if (!pair.region.empty()) {
      edit.batch_axis = TensorBatchAxis(analyzed.state, pair.region, pair.axes, pair.view, pair.shape);
    }
    KeepExposed(analyzed, edit, batch, &pair.shape);
  }

  /// A state the model's authors expose in their own tensors: the graph stays as it is; the pair names the
  /// region (and the rows, in the form older readers know).
  void PlanAuthorsExposure(const StateAnalysis& analyzed, StateEdit& edit, const Exposure& exposure, const Dim& batch) {
    edit.input = exposure.input;
    edit.output = exposure.output;
    edit.place = PlaceNamedBy(exposure);
    edit.batch_axis = TensorBatchAxis(analyzed.state, exposure.region, exposure.axes, exposure.view, exposure.shape);
    KeepExposed(analyzed, edit, batch);
  }

  /// `recorded_shape`: the shape the state's pair records (validated against the graph), if any.
  void KeepExposed(const StateAnalysis& analyzed, StateEdit& edit, const Dim& batch,
                   const std::vector<MetaDim>* recorded_shape = nullptr) {
    edit.output_edit = KeepOutput{};
    inputs_.PlanExposed(edit);
    if (edit.shape.empty()) edit.shape = InputShape(edit.input);
    const int axis = static_cast<int>(edit.batch_axis);
    if (std::holds_alternative<DropDefault>(edit.input_edit) && edit.init == kInitZeros && batch.fixed() && axis >= 0 &&
        axis < static_cast<int>(edit.shape.size()) && !edit.shape[axis].fixed()) {
      // A fixed batch that a broadcast default ([D,1,H] zeros) had declared symbolic: without the default,
      // declare the batch itself, as a direct required-mode rewrite does.
      edit.shape[axis] = batch;
      edit.input_edit = DropDefault{true};
    }
    edit.data_shape = DataShape(FedShape(edit.shape, analyzed.state), edit.batch_axis, batch);
    // The first rewrite may know the batch better than the graph now tells it (a batch fixed by the
    // model's own input, which the new input declares symbolic): its record stays, so that a rewrite of a
    // rewrite is a no-op.
    if (recorded_shape && recorded_shape->size() == edit.data_shape.size()) edit.data_shape = *recorded_shape;
    Record(edit, analyzed.state, /*first_record=*/analyzed.recorded < 0);
  }

  /// The declared shape of main-graph input `name`.
  std::vector<Dim> InputShape(const std::string& name) const {
    std::vector<Dim> shape;
    const onnx::TypeProto* type = index_.TypeOf(GraphPath{}, name);
    if (type == nullptr || !type->has_tensor_type() || !type->tensor_type().has_shape()) return shape;
    for (const auto& d : type->tensor_type().shape().dim()) {
      shape.push_back(d.has_dim_value() ? Dim{d.dim_value(), ""} : Dim{-1, d.dim_param()});
    }
    return shape;
  }

  /// A state that came from one of the model's own inputs now comes from the new input: the old one only
  /// serves the default, when the new input is fed empty.
  void NoteModelInput(const StateAnalysis& analyzed, const StateEdit& edit) {
    const auto* input = std::get_if<NewInput>(&edit.input_edit);
    if (input == nullptr || !std::holds_alternative<SelectOriginalDefault>(input->default_value)) return;
    // A default that is zeros (init "zeros") only takes its size from the model's inputs: fed zeros and
    // fed empty give the same first call, so no input of the model gives the state.
    if (edit.init == kInitZeros) return;
    std::set<std::string> read;
    const GraphIndex& main = index_.graph(GraphPath{});
    auto note_if_input = [&](const std::string& name) {
      if (main.inputs.count(name) && !main.initializers.count(name)) read.insert(name);
    };
    if (analyzed.origin.value_graph.empty()) {
      note_if_input(analyzed.origin.value);
      for (int n : analyzed.origin.computed_by) {
        for (const auto& name : index_.model().graph().node(n).input()) note_if_input(name);
      }
    }
    for (const auto& name : read) {
      // A loop's state is its carried variable ("decode's carried 'tok'"), an operator's its kind ("h state").
      const std::string what = edit.variable.empty() ? edit.kind + " state" : "carried '" + edit.variable + "'";
      plan_.notes.push_back("the model's own input '" + name + "' now gives " + edit.owner_name + "'s " + what +
                            " only when '" + edit.input + "' is fed empty (batch 0); feed '" + edit.input +
                            "' back from '" + edit.output + "' to stream");
    }
  }

  /// The lines a runtime must read: how to make the first feed when it is not zeros, and a state that
  /// does not stream (also when only its pair is new: a state the model's authors expose).
  void NoteContract(const StateEdit& edit, const RecurrentState& state, bool first_record) {
    const bool required = options_.mode == StateInputMode::kRequired;
    if (required && edit.init == kInitEmpty && edit.Changes()) {
      plan_.notes.push_back("state input '" + edit.input + "': the default is not zeros (a learned or computed " +
                            "initial state); feed an empty tensor (batch 0) on the first call to get it");
    }
    // The recurrence's own reason; the whole model's is one note of its own (MakePlan).
    if (!edit.carried && (edit.Changes() || first_record)) {
      std::string note = "state input '" + edit.input + "' is not streamable (" + state.not_streamable_reason +
                         "): chunked runs will not equal one full run";
      // Once per input: states sharing one input (h and c in the authors' tensor) have the same reason.
      // Looked up in a set, not among the notes: a model of many bidirectional nodes has one per state.
      if (not_streamable_notes_.insert(note).second) plan_.notes.push_back(std::move(note));
    }
  }

  /// Records the edit's pair; `first_record`: the model had no pair for this state.
  void Record(StateEdit& edit, const RecurrentState& state, bool first_record) {
    NoteContract(edit, state, first_record);
    StatePair pair;
    pair.input = edit.input;
    pair.output = edit.output;
    pair.node = edit.owner_name;
    pair.graph = edit.graph_name;
    pair.kind = edit.kind;
    pair.optional = edit.optional;
    pair.streamable = edit.streamable;
    pair.carried = edit.carried;
    if (edit.place) {
      pair.rows = edit.place->rows;
      pair.region = edit.place->region;
      pair.axes = edit.place->axes;
      pair.view = edit.place->view;
    }
    pair.variable = edit.variable;
    pair.dtype = ElementTypeName(state.elem_type);
    pair.shape = edit.data_shape;
    pair.batch_axis = edit.batch_axis;
    pair.init = edit.init;
    pair.path = path_namer_.Steps(state.owner.graph);
    plan_.pairs.push_back(std::move(pair));
    plan_.edits.push_back(std::move(edit));
  }

  std::string NewName(const std::string& pattern, const StateEdit& edit) {
    // A loop's states are told apart by their carried variable: `{kind}` names it.
    const std::string kind = edit.variable.empty() ? edit.kind : NodeStem(edit.variable);
    return names_.Allocate(ExpandNameTemplate(pattern, stem_, kind, edit.op));
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
  NameAllocator dim_names_;  // names given to unnamed batch dimensions of data inputs
  const PathNamer& path_namer_;
  Plan& plan_;
  InputPlanner inputs_;
  std::string stem_;
  /// Hashes a site's (graph, node, input slot): the set is only asked whether a site is planned.
  struct SiteHash {
    size_t operator()(const std::tuple<GraphPath, int, int>& site) const {
      const size_t graph_and_node =
          HashCombine(GraphPathHash()(std::get<0>(site)), static_cast<size_t>(std::get<1>(site)));
      return HashCombine(graph_and_node, static_cast<size_t>(std::get<2>(site)));
    }
  };
  std::unordered_set<std::tuple<GraphPath, int, int>, SiteHash> planned_sites_;
  std::unordered_set<std::string> not_streamable_notes_;  // NoteContract's notes already in plan_.notes
  std::map<std::pair<std::string, int>, std::string> input_dim_names_;
  AxisTraceMemo batch_traces_;  // the states' batch traces share the values they run through
};

}  // namespace

StateEdit EditHeader(const StateAnalysis& analyzed, std::string owner_name, std::string graph_name) {
  const RecurrentState& state = analyzed.state;
  StateEdit edit;
  edit.key = state.key();
  edit.owner_name = std::move(owner_name);
  edit.graph_name = std::move(graph_name);
  edit.kind = state.kind_name();
  edit.variable = state.variable;
  edit.op = state.owner.op;
  edit.site = analyzed.site;
  edit.elem_type = state.elem_type;
  edit.original = analyzed.origin.value;
  edit.final_value = analyzed.final_state.value;
  edit.streamable = analyzed.Streams();
  edit.carried = state.streamable;
  edit.batch_axis = state.batch_axis;
  return edit;
}

void TakeRecordedPair(const StatePair& pair, StateEdit& edit) {
  edit.input = pair.input;
  edit.output = pair.output;
  edit.place = PlaceNamedBy(pair);
  edit.init = pair.init;
}

Plan MakePlan(const ModelIndex& index, const Analysis& analysis, const PlanOptions& options) {
  // Validate templates up front so that a typo fails before any work.
  ExpandNameTemplate(options.input_template, "n", "h", "LSTM");
  ExpandNameTemplate(options.output_template, "n", "h", "LSTM");

  Plan plan;
  NameAllocator names = index.NewNames();
  const NodeNames node_names = NameUnnamedNodes(index, analysis, options, names);
  PathNamer path_namer(index.model(), node_names);
  StatePlanner planner(index, analysis, options, names, path_namer, plan);
  std::set<StateKey> skipped_owners;
  plan.edits.reserve(analysis.states.size());
  plan.pairs.reserve(analysis.states.size());
  for (const auto& analyzed : analysis.states) {
    const RecurrentState& state = analyzed.state;
    // Pairs of metadata that breaks a rule are not kept: the rewrite records every state anew.
    const bool recorded = analyzed.recorded >= 0 && analyzed.exposed && analysis.metadata_error.empty();
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
  PlanContexts(index, analysis, options, node_names, names, plan);
  // A context pair carries frames from call to call: it streams as the whole model does.
  const bool model_streams = !analysis.stream || analysis.stream->problem.empty();
  for (StatePair& pair : plan.pairs) {
    if (pair.kind == kKindContext) pair.streamable = model_streams;
  }
  // Name unnamed owners (and containers) only when the graph changes anyway — by an edit, or by the
  // packing after this plan, whose new nodes would move the indices an unnamed node's label is made of.
  // A model whose states are all exposed keeps its graph as it is. Named, a re-run changes nothing.
  plan.metadata_changes = !analysis.metadata_error.empty() || plan.pairs != analysis.recorded_pairs;
  bool edits_change = false;
  for (const auto& edit : plan.edits) edits_change |= edit.Changes();
  for (const auto& context : plan.contexts) edits_change |= context.Changes();
  const bool names_nodes = edits_change || options.Transforms();
  if (analysis.stream && !plan.pairs.empty()) {
    std::set<std::string> state_outputs;
    for (const StatePair& pair : plan.pairs) state_outputs.insert(pair.output);
    // A node this rewrite names is recorded under that name, as a rewrite of the rewrite finds it.
    const auto describe = [&](const TimeBreak& b) {
      auto named = names_nodes ? node_names.find({b.graph, b.node}) : node_names.end();
      return named == node_names.end() ? b.what : b.op + " '" + named->second + "'";
    };
    std::map<StateKey, std::string> added_outputs;  // the verdict's added outputs, as this plan names them
    for (const StateEdit& edit : plan.edits) added_outputs.emplace(edit.key, edit.output);
    const StreamRecord record = RecordOf(*analysis.stream, state_outputs, describe, added_outputs);
    plan.stream = StreamRecordJson(record);
    plan.metadata_changes |= !analysis.recorded_stream || StreamRecordJson(*analysis.recorded_stream) != plan.stream;
    if (!analysis.stream->problem.empty()) {
      plan.notes.push_back("chunked runs will not equal one full run (" + analysis.stream->problem +
                           "): every state is recorded streamable: false");
    }
  }
  if (names_nodes) {
    for (const auto& [where, name] : node_names) plan.node_names.push_back({where, name});
  }
  return plan;
}

}  // namespace rnnstate
