#include "time/stream_verdict.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "graph/control_flow.h"
#include "graph/proto_access.h"
#include "time/pad_fill.h"
#include "time/time_flow.h"
#include "time/time_rules.h"
#include "time/time_window.h"

namespace rnnstate {

namespace {

using Kind = TimeFact::Kind;

/// The verdict on graph output `name`, whose fact the flow found.
OutputVerdict JudgeOutput(const std::string& name, const TimeFact& fact) {
  OutputVerdict out;
  out.output = name;
  if (fact.steady()) return out;
  if (fact.exact() && fact.frames() && (!fact.folded || fact.outer) && fact.context == 0) {
    out.kind = OutputVerdict::Kind::kFrames;
    out.axis = fact.axis;
    return out;
  }
  if (fact.exact() && fact.kind == Kind::kFinal) {
    out.kind = OutputVerdict::Kind::kLast;
    return out;
  }
  out.kind = OutputVerdict::Kind::kDiffers;
  if (fact.broken) {
    out.broken = fact.broken;
  } else {
    TimeBreak b;
    b.why = fact.context > 0            ? "holds " + std::to_string(fact.context) + " frames of the previous call in front of the chunk's"
            : fact.kind == Kind::kLength  ? "is the chunk's length"
            : fact.kind == Kind::kFirst ? "is read from the first frames, which only the first call has"
                                        : "holds time folded inside another axis";
    out.broken = b;
  }
  return out;
}

std::string AxisText(const InputAxis& axis) { return axis.input + ":" + std::to_string(axis.axis); }

/// The values that hold frames of the previous call: the planned contexts' inputs, and the Concats of
/// the recorded context pairs that hold.
ContextFrames ContextsOf(const ModelIndex& index, const Analysis& analysis, const ContextFrames& planned) {
  ContextFrames contexts = planned;
  const onnx::GraphProto& main = index.model().graph();
  for (const ContextFinding& finding : analysis.contexts) {
    if (!finding.holds() || finding.concat < 0 || finding.concat >= main.node_size()) continue;
    const StatePair& pair = analysis.recorded_pairs[finding.pair];
    if (pair.context && main.node(finding.concat).output_size() == 1) {
      contexts[main.node(finding.concat).output(0)] = pair.context->frames;
    }
  }
  return contexts;
}

/// The fact the output a rewrite adds for `t`'s final value will have: the site's output slot, threaded
/// out through each container (an If gives its branch's value; a Loop or Scan its last step's).
TimeFact AddedOutputFact(const TimeFlow& flow, const StateAnalysis& t) {
  TimeFact fact = flow.OutputOf(t.site.graph, t.site.node, t.site.output_slot);
  for (const ThreadLevel& level : t.levels) {
    if (level.kind != ContainerKind::kIf) fact = flow.ThreadedOutOf(level.graph, level.node);
  }
  return fact;
}

/// The states whose final values a rewrite adds as graph outputs, judged as those outputs: every state
/// it can thread out to the main graph and that is not exposed already.
std::vector<AddedStateOutput> JudgeAddedOutputs(const ModelIndex& index, const TimeFlow& flow,
                                                const Analysis& analysis) {
  std::vector<AddedStateOutput> added;
  // Most states are added (every state of a model no rewrite has seen): one allocation, not a doubling.
  added.reserve(analysis.states.size());
  for (const StateAnalysis& t : analysis.states) {
    if (t.exposed || t.final_state.graph_output || !t.within_call.empty() || !t.state.problem.empty() ||
        !t.thread_problem.empty()) {
      continue;
    }
    AddedStateOutput entry;
    entry.state = t.state.key();
    entry.which = t.state.variable.empty() ? std::string(t.state.kind_name()) + " state"
                                           : "carried '" + t.state.variable + "'";
    entry.owner.graph = t.state.owner.graph;
    entry.owner.node = t.state.owner.node;
    entry.owner.op = t.state.owner.op;
    entry.owner.what = NodeLabel(index, t.state.owner.graph, t.state.owner.node);
    entry.verdict = JudgeOutput("", AddedOutputFact(flow, t));
    entry.verdict.state = true;
    added.push_back(std::move(entry));
  }
  return added;
}

/// The verdict's problem when `added` is where chunked runs first differ, its operators named by `what`.
std::string AddedProblem(const AddedStateOutput& added, const std::function<std::string(const TimeBreak&)>& what) {
  const TimeBreak& broken = *added.verdict.broken;
  const std::string node = what(broken);
  return "the final " + added.which + " of " + what(added.owner) +
         " (an output a rewrite adds): " + (node.empty() ? "" : node + " ") + broken.why;
}

std::string WhatOf(const TimeBreak& b) { return b.what; }

/// The outputs of state pairs (the authors', recorded, or a rewrite's): their pairs speak for them.
std::set<std::string> StateOutputsOf(const Analysis& analysis) {
  std::set<std::string> state_outputs;
  // Metadata that breaks a rule is written anew by a rewrite: its pairs say nothing of what is a state.
  if (analysis.metadata_error.empty()) {
    for (const StatePair& pair : analysis.recorded_pairs) state_outputs.insert(pair.output);
    if (analysis.packed) {
      for (const PackedValue& value : analysis.packed->values) state_outputs.insert(value.output);
    }
  }
  for (const StateAnalysis& t : analysis.states) {
    if (t.exposure) state_outputs.insert(t.exposure->output);
    if (t.final_state.graph_output) state_outputs.insert(t.final_state.value);
  }
  return state_outputs;
}

/// The Concats of the recorded contexts that hold and replaced a window's lookahead: how late they make
/// their frames (`flow`: the time flow, for the chunk multiple before them). A ConvTranspose that lagged
/// (time/upsample_windows.h) makes its own output late instead, by its lookahead in input frames at its
/// output's rate.
std::map<std::string, WindowDelay> RecordedDelays(const ModelIndex& index, const TimeFlow& flow,
                                                  const Analysis& analysis) {
  std::map<std::string, WindowDelay> delayed;
  const onnx::GraphProto& main = index.model().graph();
  for (const ContextFinding& finding : analysis.contexts) {
    if (!finding.holds() || finding.concat < 0 || finding.concat >= main.node_size()) continue;
    const StatePair& pair = analysis.recorded_pairs[finding.pair];
    const onnx::NodeProto& concat = main.node(finding.concat);
    if (!pair.context || pair.context->lookahead <= 0 || concat.output_size() != 1) continue;
    const int64_t lag = pair.context->lookahead;
    WindowDelay delay{lag, lag * flow.Of(GraphPath{}, pair.context->value).multiple, pair.context->value};
    std::string late = concat.output(0);
    // (Its other reader is the Slice that returns the context.)
    for (const Consumer& reader : index.graph(GraphPath{}).ConsumersOf(concat.output(0))) {
      const onnx::NodeProto& up = main.node(reader.node);
      if (!IsOnnxOp(up, {"ConvTranspose"}) || up.input(0) != concat.output(0) || up.output_size() == 0) continue;
      const std::optional<TimeWindow> window = ReadTimeWindow(index, GraphPath{}, up, pair.context->axis, -1);
      if (window && window->stride > 1) {
        delay.frames = lag * window->stride;
        late = up.output(0);
      }
    }
    delayed[late] = delay;
  }
  return delayed;
}

/// The Pads that fill what the recorded contexts with a `pad` mode lack: the chunk's own frames after them
/// (the context in front, as many frames as the window spans).
StreamedNodes RecordedFills(const Analysis& analysis) {
  StreamedNodes fills;
  for (const ContextFinding& finding : analysis.contexts) {
    if (finding.holds() && finding.fill_pad >= 0) fills[finding.fill_pad] = 1;
  }
  return fills;
}

/// The least frames the first call must hold (StreamRecord::first_chunk_min): for the carried windows and
/// the recorded contexts that fill by reflecting the first call's frames.
int64_t FirstChunkMinOf(const TimeFlow& flow, const Analysis& analysis, const std::vector<CausalWindow>& windows) {
  int64_t least = 0;
  for (const CausalWindow& window : windows) {
    const int64_t multiple = flow.Of(GraphPath{}, window.value).multiple;
    least = std::max(least, FirstChunkMin(window.fill, window.frames, multiple));
  }
  for (const ContextFinding& finding : analysis.contexts) {
    if (!finding.holds() || finding.fill_pad < 0) continue;
    const ContextSpec& spec = *analysis.recorded_pairs[finding.pair].context;
    least = std::max(least, FirstChunkMin(spec.pad, spec.frames, flow.Of(GraphPath{}, spec.value).multiple));
  }
  return least;
}

/// The windows a rewrite carries among those `found`: the causal ones, and those that look ahead when
/// `lookahead` asks for them and their delays line up.
std::vector<CausalWindow> CarriedWindows(const std::vector<CausalWindow>& found, bool lookahead,
                                         const Lookahead& measured) {
  std::vector<CausalWindow> carried;
  for (const CausalWindow& window : found) {
    if (window.lookahead == 0 || (lookahead && measured.problem.empty())) carried.push_back(window);
  }
  return carried;
}

}  // namespace

const char* OutputVerdictName(OutputVerdict::Kind kind) {
  switch (kind) {
    case OutputVerdict::Kind::kSame:
      return "same";
    case OutputVerdict::Kind::kFrames:
      return "frames";
    case OutputVerdict::Kind::kLast:
      return "last";
    case OutputVerdict::Kind::kDiffers:
      return "differs";
  }
  return "?";
}

std::string StreamVerdict::TimeText() const {
  std::string text;
  for (const InputAxis& axis : time.axes) text += (text.empty() ? "" : ", ") + AxisText(axis);
  return text;
}

namespace {

/// Each owner of states: whether it carries them between calls and whether its initial states are the
/// authors' own inputs. A recurrence carries its states between calls unless they are left to the call or
/// cannot be rewritten.
std::map<std::pair<GraphPath, int>, OwnerTime> OwnersTime(const Analysis& analysis) {
  std::map<std::pair<GraphPath, int>, OwnerTime> owners;
  for (const StateAnalysis& t : analysis.states) {
    const bool carries = t.exposed || (t.within_call.empty() && t.state.problem.empty() && t.thread_problem.empty());
    // The authors' own state inputs, read where the exposure analysis proved (a recorded pair of theirs
    // names a region of their tensor): what else happens to that tensor is not this state's concern.
    const bool authors =
        (t.exposure && t.recorded < 0) || (t.recorded >= 0 && (analysis.recorded_pairs[t.recorded].rows ||
                                                               !analysis.recorded_pairs[t.recorded].region.empty()));
    auto [entry, fresh] = owners.try_emplace({t.state.owner.graph, t.state.owner.node}, OwnerTime{carries, authors});
    if (!fresh) {
      entry->second.carried = entry->second.carried && carries;
      entry->second.fed_initial = entry->second.fed_initial && authors;
    }
  }
  return owners;
}

/// `verdict.problem` from the time axis' fixed length, else from the first output that differs (the
/// model's own outputs before the states').
void JudgeFixedLengthAndOutputs(StreamVerdict& verdict) {
  if (verdict.time.fixed_length > 1) {
    verdict.problem = "the time axis " + verdict.TimeText() + " has the fixed length " +
                      std::to_string(verdict.time.fixed_length) +
                      ": ONNX Runtime refuses chunks of any other length (rnnstate rewrite --time-axis " +
                      AxisText(verdict.time.axes.front()) + " opens it)";
  } else {
    for (const bool state : {false, true}) {
      for (const OutputVerdict& out : verdict.outputs) {
        if (out.kind != OutputVerdict::Kind::kDiffers || out.state != state || !verdict.problem.empty()) continue;
        verdict.problem = "output '" + out.output + "': " + out.broken->Text();
      }
    }
  }
}

}  // namespace

void JudgeStream(const ModelIndex& index, Analysis& analysis, const std::vector<InputAxis>& given,
                 const ContextFrames& planned_contexts, bool carry_windows, bool lookahead) {
  auto shared = std::make_shared<StreamVerdict>();
  StreamVerdict& verdict = *shared;
  analysis.stream = shared;
  std::optional<std::vector<InputAxis>> recorded;
  if (analysis.recorded_stream && analysis.metadata_error.empty()) {
    recorded.emplace();
    for (const StreamRecord::Axis& axis : analysis.recorded_stream->time) recorded->push_back({axis.input, axis.axis});
  }
  verdict.time = ChooseTimeAxes(index, analysis, given, recorded);
  if (verdict.time.axes.empty()) return;
  const std::map<std::pair<GraphPath, int>, OwnerTime> owners = OwnersTime(analysis);
  const OwnerLookup owner_of = [&](const GraphPath& graph, int node) -> std::optional<OwnerTime> {
    auto found = owners.find({graph, node});
    if (found == owners.end()) return std::nullopt;
    return found->second;
  };
  const ContextFrames contexts = ContextsOf(index, analysis, planned_contexts);
  const std::set<std::string> state_outputs = StateOutputsOf(analysis);
  std::optional<TimeFlow> judged;
  const StreamedNodes recorded_fills = RecordedFills(analysis);
  judged.emplace(index, verdict.time.axes, owner_of, verdict.time.fixed_length, contexts, recorded_fills);
  // The windows are found on the model as it is; the verdict is the model's with their contexts.
  const std::vector<CausalWindow> found = FindCausalWindows(index, *judged, /*lookahead=*/true);
  std::map<int, WindowDelay> delays;
  for (const CausalWindow& window : found) {
    const int64_t multiple = judged->Of(GraphPath{}, window.value).multiple;
    if (window.lookahead > 0) {
      delays[window.window] = WindowDelay{window.Delay(), window.lookahead * multiple, window.value};
    }
  }
  const std::map<std::string, WindowDelay> recorded_delays = RecordedDelays(index, *judged, analysis);
  verdict.lookahead = MeasureLookahead(index, *judged, delays, recorded_delays, state_outputs);
  if (carry_windows) {
    verdict.windows = CarriedWindows(found, lookahead, verdict.lookahead);
    if (!verdict.windows.empty()) {
      StreamedNodes streamed = StreamedNodesOf(verdict.windows);
      streamed.insert(recorded_fills.begin(), recorded_fills.end());
      judged.emplace(index, verdict.time.axes, owner_of, verdict.time.fixed_length, contexts, std::move(streamed));
    }
  }
  const TimeFlow& flow = *judged;
  verdict.chunk_multiple = flow.chunk_multiple();
  verdict.first_chunk_min = FirstChunkMinOf(flow, analysis, verdict.windows);
  std::set<std::pair<GraphPath, int>> per_frame;
  for (const RecurrenceTime& r : flow.recurrences()) {
    if (r.way == RecurrenceTime::Way::kPerFrame) per_frame.insert({r.graph, r.node});
  }
  for (StateAnalysis& t : analysis.states) {
    if (t.exposed || !per_frame.count({t.state.owner.graph, t.state.owner.node})) continue;
    t.within_call = "it runs within each frame: its batch holds the time axis (" + verdict.TimeText() +
                    "), so it starts again in every frame and carries nothing from call to call";
  }
  for (const auto& output : index.model().graph().output()) {
    verdict.outputs.push_back(JudgeOutput(output.name(), flow.Of(GraphPath{}, output.name())));
    verdict.outputs.back().state = state_outputs.count(output.name()) > 0;
  }
  JudgeFixedLengthAndOutputs(verdict);
  // The outputs a rewrite adds are judged too: a rewrite's verdict is then its output's.
  verdict.added = JudgeAddedOutputs(index, flow, analysis);
  for (const AddedStateOutput& added : verdict.added) {
    if (verdict.problem.empty() && added.verdict.kind == OutputVerdict::Kind::kDiffers) {
      verdict.problem = AddedProblem(added, WhatOf);
    }
  }
  // Windows that look ahead, carried (now or by the rewrite that made the model): the outputs lag alike,
  // or chunked runs do not line up with one run at all.
  const bool carried = !recorded_delays.empty() || (lookahead && !delays.empty());
  if (carried && verdict.problem.empty() && !verdict.lookahead.problem.empty()) {
    verdict.problem = verdict.lookahead.problem;
  } else if (carried && verdict.lookahead.problem.empty() && verdict.problem.empty()) {
    verdict.delay = verdict.lookahead.frames;
    verdict.flush = verdict.lookahead.flush;
    verdict.flush_exact = verdict.lookahead.flush_exact;
  }
  for (StateAnalysis& t : analysis.states) t.stream_problem = verdict.problem;
}

StreamRecord RecordOf(const StreamVerdict& verdict, const std::set<std::string>& state_outputs,
                      const std::function<std::string(const TimeBreak&)>& describe,
                      const std::map<StateKey, std::string>& added_outputs) {
  StreamRecord record;
  for (const InputAxis& axis : verdict.time.axes) record.time.push_back({axis.input, axis.axis});
  if (record.time.empty()) return record;
  record.fixed_length = verdict.time.fixed_length;
  record.chunk_multiple = verdict.chunk_multiple;
  record.chunk_exact = verdict.ChunkExact();
  record.delay = verdict.delay;
  record.flush = verdict.flush != verdict.delay ? verdict.flush : 0;  // written only where it differs
  record.flush_exact = verdict.flush_exact;
  record.first_chunk_min = verdict.first_chunk_min;
  const auto what = [&](const TimeBreak& b) { return describe ? describe(b) : b.what; };
  // The reason as the verdict words it, its operator named as `describe` names it.
  record.reason = verdict.problem;
  for (const OutputVerdict& out : verdict.outputs) {
    if (out.broken && record.reason == "output '" + out.output + "': " + out.broken->Text()) {
      const std::string name = what(*out.broken);
      record.reason = "output '" + out.output + "': " + (name.empty() ? out.broken->why : name + " " + out.broken->why);
      break;
    }
  }
  // A reason found at an output this rewrite adds names that output, as a rewrite of the rewrite will.
  for (const AddedStateOutput& added : verdict.added) {
    if (!added.verdict.broken || record.reason != AddedProblem(added, WhatOf)) continue;
    auto output = added_outputs.find(added.state);
    const std::string name = what(*added.verdict.broken);
    record.reason = output == added_outputs.end()
                        ? AddedProblem(added, what)
                        : "output '" + output->second + "': " + (name.empty() ? "" : name + " ") + added.verdict.broken->why;
    break;
  }
  for (const OutputVerdict& out : verdict.outputs) {
    if (state_outputs.count(out.output)) continue;
    StreamOutputRecord entry;
    entry.output = out.output;
    entry.chunked = OutputVerdictName(out.kind);
    entry.axis = out.axis;
    if (out.broken) {
      entry.node = what(*out.broken);
      entry.why = out.broken->why;
      entry.past = out.broken->past;
      entry.future = out.broken->future;
      entry.whole = out.broken->whole;
    }
    record.outputs.push_back(std::move(entry));
  }
  return record;
}

}  // namespace rnnstate
