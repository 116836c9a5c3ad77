#include "views/report.h"

#include "contract/state_tensors.h"
#include "rnnstate/packed_metadata.h"
#include "views/stream_report.h"
#include "views/text_out.h"

namespace rnnstate {

namespace {

std::vector<std::string> ComputedBy(const onnx::ModelProto& model, const StateOrigin& origin) {
  std::vector<std::string> out;
  for (int n : origin.computed_by) out.push_back(DescribeNode(model, origin.value_graph, n));
  return out;
}

Json BatchJson(const Dim& batch) {
  if (batch.fixed()) return Json(batch.value);
  if (!batch.param.empty()) return Json(batch.param);
  return Json();
}

/// A packed model's values and their members, for the text report.
std::string PackedText(const PackedStates& packed, const std::vector<StatePair>& pairs) {
  TextOut out;
  for (const PackedValue& value : packed.values) {
    out << "\npacked " << packed.kind << " '" << value.input << "' -> '" << value.output << "'  (" << value.dtype
        << (packed.kind == kPackedTensor ? " " + MetaShapeText(value.shape) : std::string(" sequence"))
        << ", first feed " << value.init << (value.optional ? ", optional" : ", required")
        << (value.streamable ? ", streamable" : ", not streamable") << "):\n";
    for (const PackedMember& member : value.members) {
      out << "  "
          << (packed.kind == kPackedTensor
                  ? "[" + std::to_string(member.offset) + ":" + std::to_string(member.offset + member.length) + "]"
                  : "#" + std::to_string(member.position))
          << " " << member.input << " -> " << member.output << " " << MetaShapeText(member.shape);
      for (int64_t state : member.states) {
        const StatePair& pair = pairs[static_cast<size_t>(state)];
        out << "  (" << pair.graph << " " << pair.node << " " << pair.kind << RowRangeText(pair.rows) << ")";
      }
      out << "\n";
    }
  }
  return out.Take();
}

std::string SiteText(const onnx::ModelProto& model, const StateAnalysis& state) {
  return DescribeNode(model, state.site.graph, state.site.node) + " in " + GraphPathString(model, state.site.graph) +
         " (input " + std::to_string(state.site.input_slot) + ", output " + std::to_string(state.site.output_slot) +
         ")";
}

std::vector<std::string> ThreadTexts(const onnx::ModelProto& model, const StateAnalysis& state) {
  std::vector<std::string> out;
  for (const auto& level : state.levels) {
    out.push_back(DescribeNode(model, level.graph, level.node) + " (" + level.attribute + ")");
  }
  return out;
}

std::string Action(const PlanLookup& plan, const StateKey& key) {
  if (const SkippedState* skip = plan.FindSkip(key)) return "skipped: " + skip->reason;
  if (const StateEdit* edit = plan.FindEdit(key)) return edit->Changes() ? edit->Describe() : "none (already exposed)";
  return "none (not selected)";
}

Json StateJson(const onnx::ModelProto& model, const StateAnalysis& state, const PlanLookup& plan) {
  Json initial = Json::object();
  initial["origin"] = OriginKindName(state.origin.kind);
  initial["value"] = state.origin.value;
  initial["value_graph"] = GraphPathString(model, state.origin.value_graph);
  initial["zero"] = state.origin.zero;
  Json computed = Json::array();
  for (auto& text : ComputedBy(model, state.origin)) computed.push_back(text);
  initial["computed_by"] = std::move(computed);
  Json shared = Json::array();
  for (const auto& other : state.shared_with) shared.push_back(other);
  initial["shared_with"] = std::move(shared);
  initial["other_consumers"] = state.origin.other_consumers;
  initial["from_inputs"] = state.origin.from_inputs;
  initial["from_initializers"] = state.origin.from_initializers;

  Json final_state = Json::object();
  final_state["value"] = state.final_state.value;
  final_state["graph_output"] = state.final_state.graph_output;
  final_state["consumers"] = state.final_state.consumers;

  Json site = Json::object();
  site["graph"] = GraphPathString(model, state.site.graph);
  site["node"] = NodeLabel(ResolveGraph(model, state.site.graph)->node(state.site.node), state.site.node);
  site["input_slot"] = state.site.input_slot;
  site["output_slot"] = state.site.output_slot;
  site["carried"] = state.site.carried;
  Json threads = Json::array();
  for (auto& text : ThreadTexts(model, state)) threads.push_back(text);

  Json out = Json::object();
  out["kind"] = state.state.kind_name();
  out["variable"] = state.state.variable.empty() ? Json() : Json(state.state.variable);
  out["shape"] = ShapeText(state.state.shape);
  out["site"] = std::move(site);
  out["threaded_through"] = std::move(threads);
  out["thread_problem"] = state.thread_problem.empty() ? Json() : Json(state.thread_problem);
  out["initial"] = std::move(initial);
  out["final"] = std::move(final_state);
  out["exposed"] = state.exposed;
  if (state.exposure && state.exposure->rows) {
    Json stacked = Json::object();
    stacked["input"] = state.exposure->input;
    stacked["output"] = state.exposure->output;
    stacked["rows"] = RowRangeJson(*state.exposure->rows);
    out["stacked"] = std::move(stacked);
  } else {
    out["stacked"] = Json();
  }
  if (state.exposure) {
    const Exposure& e = *state.exposure;
    out["exposure"] = {{"input", e.input},
                       {"output", e.output},
                       {"region", RegionJson(e.region)},
                       {"axes", e.axes},
                       {"default_path_of", e.default_path_of.empty() ? Json() : Json(e.default_path_of)}};
    if (!e.view.empty()) out["exposure"]["view"] = MetaShapeJson(e.view);
  } else {
    out["exposure"] = nullptr;
  }
  out["read_from"] = state.finding.read.empty() ? Json() : Json(state.finding.read);
  out["written_to"] = state.finding.written.empty() ? Json() : Json(state.finding.written);
  out["not_exposed_because"] = state.finding.why_not.empty() ? Json() : Json(state.finding.why_not);
  const StateEdit* edit = plan.FindEdit(state.state.key());
  out["input"] = edit ? Json(edit->input) : Json();
  out["output"] = edit ? Json(edit->output) : Json();
  out["action"] = Action(plan, state.state.key());
  return out;
}

/// "h", or a loop's "state 'h_prev' [batch,4]".
std::string StateTitle(const RecurrentState& state) {
  if (state.variable.empty()) return state.kind_name();
  return std::string(state.kind_name()) + " '" + state.variable + "' " + ShapeText(state.shape);
}

Json NoteJson(const StateNote& note) {
  Json entry = Json::object();
  entry["kind"] = StateNoteKindName(note.kind);
  entry["graph"] = note.owner.graph_name;
  entry["node"] = note.owner.name;
  entry["op"] = note.owner.op;
  entry["variable"] = note.variable;
  entry["reason"] = note.reason;
  entry["warning"] = note.Warns();
  return entry;
}

/// The text lines of one state.
void StateText(const onnx::ModelProto& model, const Analysis& analysis, const StateAnalysis& state,
               const PlanLookup& plan, TextOut& out) {
  if (state.exposed && state.recorded >= 0) {
    const StatePair& pair = analysis.recorded_pairs[state.recorded];
    const std::string place = PlaceSuffix(pair.rows, pair.region, pair.view);
    out << "  " << StateTitle(state.state) << "  exposed: input '" << pair.input << "'" << place << " ("
        << (pair.optional ? "optional" : "required") << ") -> output '" << pair.output << "'" << place << "\n";
    return;
  }
  out << "  " << StateTitle(state.state) << "  from: " << OriginKindName(state.origin.kind);
  if (!state.origin.value.empty()) out << " '" << state.origin.value << "'";
  using Origin = StateOrigin::Kind;
  if (state.origin.zero) {
    out << ", zeros";
  } else if (state.origin.kind == Origin::kInitializer || state.origin.kind == Origin::kDefaultedInput) {
    out << ", not zeros (a learned initial state: the first feed is empty, not zeros)";
  } else if (state.origin.kind == Origin::kComputed) {
    out << ", not known to be zeros";
  }
  auto computed = ComputedBy(model, state.origin);
  if (!computed.empty()) {
    // The nodes the walk back met, nearest first: a graph of them, not a chain (a Slice's starts are
    // among them), so listed, not arrowed; the JSON report has them all.
    constexpr size_t kShown = 6;
    out << ", computed by " << computed.size() << (computed.size() == 1 ? " node" : " nodes") << " (";
    for (size_t i = 0; i < computed.size() && i < kShown; ++i) out << (i ? ", " : "") << computed[i];
    if (computed.size() > kShown) out << ", and " << computed.size() - kShown << " more";
    out << ")";
  }
  if (!state.origin.from_inputs.empty() || !state.origin.from_initializers.empty()) {
    out << ", from";
    for (const auto& input : state.origin.from_inputs) out << " input '" << input << "'";
    for (const auto& initializer : state.origin.from_initializers) out << " initializer '" << initializer << "'";
  }
  if (!state.shared_with.empty()) {
    out << ", shared with";
    for (const auto& other : state.shared_with) out << " " << other;
  }
  if (state.site.carried) out << "\n     carried by: " << SiteText(model, state);
  auto threads = ThreadTexts(model, state);
  if (!threads.empty()) {
    out << "\n     threaded out through:";
    for (const auto& text : threads) out << " " << text;
  }
  if (!state.thread_problem.empty()) out << "\n     cannot thread out: " << state.thread_problem;
  out << "\n     to:   ";
  if (state.final_state.value.empty())
    out << "(not produced)";
  else
    out << "'" << state.final_state.value << "'" << (state.final_state.graph_output ? ", a graph output" : "") << ", "
        << state.final_state.consumers << " consumer" << (state.final_state.consumers == 1 ? "" : "s");
  out << "\n     " << (state.exposed ? "exposed" : "not exposed");
  if (state.exposure) out << " as " << ExposureText(*state.exposure);
  if (!state.exposure && !state.finding.why_not.empty()) out << " (" << state.finding.why_not << ")";
  out << "; rewrite: " << Action(plan, state.state.key()) << "\n";
}

/// The one `--time-axis` option that makes every loop that does not stream yet stream (each of them a
/// fixed-length loop walking that input axis), or "".
std::string OneTimeAxisOption(const Analysis& analysis) {
  std::string option;
  for (const RecurrentNode& n : analysis.nodes) {
    if (n.streamable) continue;
    if (n.time_axis_option.empty() || (!option.empty() && option != n.time_axis_option)) return "";
    option = n.time_axis_option;
  }
  return option;
}

}  // namespace

Json ReportJson(const std::string& file, const onnx::ModelProto& model, const Analysis& analysis, const Plan& plan) {
  const PlanLookup lookup(plan);
  const std::vector<std::vector<const StateAnalysis*>> by_node = analysis.StatesByNode();
  Json nodes = Json::array();
  for (size_t i = 0; i < analysis.nodes.size(); ++i) {
    const RecurrentNode& n = analysis.nodes[i];
    Json entry = Json::object();
    entry["graph"] = n.graph_name;
    entry["index"] = n.node;
    entry["op"] = n.op;
    entry["name"] = n.name;
    entry["direction"] = n.direction;
    entry["hidden_size"] = n.hidden_size;
    entry["layout"] = n.layout;
    entry["batch"] = BatchJson(n.batch);
    entry["streamable"] = n.streamable;
    entry["not_streamable_reason"] = n.streamable ? Json() : Json(n.not_streamable_reason);
    entry["streaming_caveat"] = n.streaming_caveat.empty() ? Json() : Json(n.streaming_caveat);
    entry["walk"] = n.walk.empty() ? Json() : Json(n.walk);
    entry["problem"] = n.problem.empty() ? Json() : Json(n.problem);
    Json states = Json::array();
    for (const StateAnalysis* state : by_node[i]) states.push_back(StateJson(model, *state, lookup));
    entry["states"] = std::move(states);
    nodes.push_back(std::move(entry));
  }
  Json skipped = Json::array();
  for (const auto& skip : plan.skipped) {
    Json entry = Json::object();
    entry["graph"] = skip.graph;
    entry["node"] = skip.node;
    entry["kind"] = skip.kind.empty() ? Json() : Json(skip.kind);
    entry["reason"] = skip.reason;
    skipped.push_back(std::move(entry));
  }
  Json report = Json::object();
  report["version"] = kReportVersion;
  report["file"] = file;
  report["opset"] = analysis.onnx_opset;
  report["ir_version"] = analysis.ir_version;
  report["nodes"] = std::move(nodes);
  report["pairs"] = StatePairsJson(analysis.recorded_pairs);
  report["packed"] = analysis.packed ? PackedStatesJson(*analysis.packed) : Json();
  report["metadata_error"] = analysis.metadata_error.empty() ? Json() : Json(analysis.metadata_error);
  report["skipped"] = std::move(skipped);
  Json notes = Json::array();
  for (const StateNote& note : analysis.notes) notes.push_back(NoteJson(note));
  report["notes"] = std::move(notes);
  report["changes"] = plan.ChangesModel();
  report["stream"] = StreamJson(analysis);
  return report;
}

std::string ReportText(const std::string& file, const onnx::ModelProto& model, const Analysis& analysis,
                       const Plan& plan) {
  const PlanLookup lookup(plan);
  const std::vector<std::vector<const StateAnalysis*>> by_node = analysis.StatesByNode();
  TextOut out;
  out << file << ": " << analysis.nodes.size() << " recurrent node" << (analysis.nodes.size() == 1 ? "" : "s")
      << ", opset " << analysis.onnx_opset << ", IR " << analysis.ir_version << "\n";
  for (size_t i = 0; i < analysis.nodes.size(); ++i) {
    const RecurrentNode& n = analysis.nodes[i];
    const std::string what = n.walk.empty() ? n.direction + ", hidden " + std::to_string(n.hidden_size) + ", layout " +
                                                  std::to_string(n.layout)
                                            : n.walk;
    // A loop's states may have no batch axis at all.
    const bool no_batch = !n.walk.empty() && !n.batch.fixed() && n.batch.param.empty();
    out << "\n"
        << n.graph_name << "  " << n.op << " '" << n.name << "'" << (n.unnamed ? " (unnamed)" : "") << "  " << what
        << (no_batch ? ", no batch axis"
                     : ", batch " + (n.batch.fixed() ? n.batch.ToString() : "dynamic (" + n.batch.ToString() + ")"))
        << "\n";
    if (!n.problem.empty()) out << "  cannot rewrite: " << n.problem << "\n";
    out << "  streamable: " << NodeStreamText(n, by_node[i]) << "\n";
    if (n.streamable && !n.streaming_caveat.empty()) out << "  caveat: " << n.streaming_caveat << "\n";
    for (const StateAnalysis* state : by_node[i]) StateText(model, analysis, *state, lookup, out);
  }
  if (!analysis.recorded_pairs.empty()) {
    out << "\nstate pairs recorded in metadata '" << kMetadataKey << "':\n";
    for (const auto& pair : analysis.recorded_pairs) {
      const std::string place = PlaceSuffix(pair.rows, pair.region, pair.view);
      out << "  " << pair.input << place << " -> " << pair.output << place << "  (" << pair.graph << " " << pair.node
          << " " << pair.kind << (pair.variable.empty() ? "" : " '" + pair.variable + "'")
          << (pair.optional ? ", optional" : ", required") << (pair.streamable ? ", streamable" : ", not streamable")
          << ")\n";
    }
  }
  out << StreamText(analysis);
  if (const std::string option = OneTimeAxisOption(analysis); !option.empty())
    out << "\nevery loop would stream with --time-axis " << option << "\n";
  if (analysis.packed) out << PackedText(*analysis.packed, analysis.recorded_pairs);
  if (!analysis.notes.empty()) out << "\n";
  for (const StateNote& note : analysis.notes)
    out << (note.Warns() ? "warning: " : "note: ") << StateNoteText(note) << "\n";
  if (!analysis.metadata_error.empty()) out << "\nwarning: " << analysis.metadata_error << "\n";
  // A model without recurrences may still carry context states (its windows, once a time axis is given).
  if (analysis.nodes.empty() && analysis.recorded_pairs.empty() && plan.contexts.empty()) out << "nothing to do\n";
  return out.Take();
}

}  // namespace rnnstate
