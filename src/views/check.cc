#include "views/check.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "exposure/exposed_state.h"
#include "exposure/packed_state.h"
#include "rnnstate/metadata.h"
#include "time/stream_verdict.h"

namespace rnnstate {

const char* CheckProblemKindName(CheckProblem::Kind kind) {
  using Kind = CheckProblem::Kind;
  switch (kind) {
    case Kind::kNotExposed:
      return "not_exposed";
    case Kind::kBadMetadata:
      return "bad_metadata";
    case Kind::kNoSuchNode:
      return "no_such_node";
    case Kind::kNoSuchState:
      return "no_such_state";
    case Kind::kNotGraphInput:
      return "not_a_graph_input";
    case Kind::kNotGraphOutput:
      return "not_a_graph_output";
    case Kind::kInputNotWired:
      return "input_not_wired";
    case Kind::kOutputNotWired:
      return "output_not_wired";
    case Kind::kFlagMismatch:
      return "flag_mismatch";
    case Kind::kDuplicateInput:
      return "duplicate_input";
    case Kind::kDuplicateOutput:
      return "duplicate_output";
    case Kind::kDuplicateState:
      return "duplicate_state";
    case Kind::kPackedMismatch:
      return "packed_mismatch";
  }
  return "?";
}

namespace {

std::string PairLabel(const StatePair& pair) {
  return "state pair '" + pair.input + "' -> '" + pair.output + "' (" + pair.graph + " " + pair.node + " " + pair.kind +
         (pair.variable.empty() ? "" : " '" + pair.variable + "'") + ")";
}

/// "state h" of an operator, "carried variable 'h_prev'" of a loop.
std::string StateName(const RecurrentState& state) {
  return state.variable.empty() ? std::string("state ") + state.kind_name()
                                : "carried variable '" + state.variable + "'";
}

std::string OwnerLabel(const RecurrentState& state) { return state.owner.op + " '" + state.owner.name + "'"; }

const char* Bool(bool value) { return value ? "true" : "false"; }

void CheckStates(const Analysis& analysis, bool streamable_only, std::vector<CheckProblem>& problems) {
  for (const auto& analyzed : analysis.states) {
    if (analyzed.exposed || analyzed.recorded >= 0) continue;
    // Left as its authors wrote it (a bidirectional RNN over frequency beside their own state inputs):
    // rewrite leaves it too, so its output must pass.
    if (!analyzed.within_call.empty()) continue;
    if (streamable_only && !analyzed.state.streamable) continue;
    const RecurrentState& state = analyzed.state;
    // Why the model's own inputs/outputs do not count, when it reads or writes the state through them.
    const std::string why = analyzed.finding.why_not.empty() ? "" : analyzed.finding.why_not + "; ";
    // What to do: rewrite, unless rewrite would refuse this state too (then say why).
    const std::string& refused = !state.problem.empty() ? state.problem : analyzed.thread_problem;
    const std::string next = refused.empty() ? "run rnnstate rewrite" : "rnnstate cannot rewrite it: " + refused;
    problems.push_back({CheckProblem::Kind::kNotExposed, state.owner.graph_name + " " + OwnerLabel(state) + ": " +
                                                             StateName(state) + " is not exposed (" + why +
                                                             "no state pair in metadata '" + kMetadataKey + "'; " +
                                                             next + ")"});
  }
}

/// The states by the names pairs give them, looked up once per pair instead of by a pass over the states.
class StateLookup {
 public:
  explicit StateLookup(const Analysis& analysis) {
    for (const auto& analyzed : analysis.states) {
      const RecurrentState& state = analyzed.state;
      by_owner_.emplace(Owner{state.owner.graph_name, state.owner.name}, &analyzed);
      by_state_.emplace(State{state.owner.graph_name, state.owner.name, state.kind_name(), state.variable}, &analyzed);
    }
  }
  /// The first state whose owner is the node a pair names (graph path + name), or nullptr.
  const StateAnalysis* OwnedBy(const StatePair& pair) const {
    auto found = by_owner_.find(Owner{pair.graph, pair.node});
    return found == by_owner_.end() ? nullptr : found->second;
  }
  /// The state a pair names (graph path + owner name + kind), or nullptr.
  const StateAnalysis* Find(const StatePair& pair) const {
    auto found = by_state_.find(State{pair.graph, pair.node, pair.kind, pair.variable});
    return found == by_state_.end() ? nullptr : found->second;
  }

 private:
  using Owner = std::pair<std::string, std::string>;
  using State = std::tuple<std::string, std::string, std::string, std::string>;
  std::map<Owner, const StateAnalysis*> by_owner_;  // the first state of each owner
  std::map<State, const StateAnalysis*> by_state_;  // the first state of each name
};

/// The owner a pair names, for messages: "LSTM 'x'".
std::string OwnerLabelOf(const StateLookup& states, const StatePair& pair) {
  const StateAnalysis* owned = states.OwnedBy(pair);
  return owned ? OwnerLabel(owned->state) : "'" + pair.node + "'";
}

/// Checks that the pair's input feeds the slot and its output comes from the final state.
void CheckWiring(const ModelIndex& index, const StatePair& pair, const RecurrentState& state, bool input_ok,
                 bool output_ok, std::vector<CheckProblem>& problems) {
  const std::string label = PairLabel(pair) + ": ";
  const PairWiring wiring = TracePairWiring(index, state, pair.input, pair.output);
  if (input_ok && !wiring.input_reaches_slot) {
    problems.push_back({CheckProblem::Kind::kInputNotWired, label + "input '" + pair.input + "' does not reach " +
                                                                state.initial_name + " of " + OwnerLabel(state)});
  }
  if (output_ok && !wiring.output_from_final) {
    problems.push_back(
        {CheckProblem::Kind::kOutputNotWired,
         label + "output '" + pair.output + "' is not computed from " + state.final_name + " of " + OwnerLabel(state)});
  }
}

/// Checks a pair with a region (or rows): the authors must expose the state at exactly that region.
void CheckRegionWiring(const StatePair& pair, const StateAnalysis& analyzed, std::vector<CheckProblem>& problems) {
  if (RecordsExposure(pair, analyzed.exposure.get())) return;
  const RecurrentState& state = analyzed.state;
  std::string found = analyzed.exposure ? "; the graph has " + ExposureText(*analyzed.exposure) : "";
  problems.push_back(
      {CheckProblem::Kind::kInputNotWired,
       PairLabel(pair) + ": region " +
           PlaceSuffix(std::nullopt, PairRegion(pair, pair.view.empty() ? pair.shape.size() : pair.view.size()),
                       pair.view) +
           " of input '" + pair.input + "' and output '" + pair.output + "' are not " + state.initial_name +
           " and its final state of " + OwnerLabel(state) + found});
}

void CheckFlags(const GraphIndex& main, const StatePair& pair, const StateAnalysis& analyzed, bool input_ok,
                std::vector<CheckProblem>& problems) {
  const std::string label = PairLabel(pair) + ": ";
  bool has_default = main.initializers.count(pair.input) > 0;
  if (input_ok && pair.optional != has_default) {
    problems.push_back({CheckProblem::Kind::kFlagMismatch,
                        label + "optional is " + Bool(pair.optional) + " but input '" + pair.input + "' " +
                            (has_default ? "has" : "has no") + " default (initializer of the same name)"});
  }
  const RecurrentState& state = analyzed.state;
  if (pair.carried != state.streamable) {
    problems.push_back(
        {CheckProblem::Kind::kFlagMismatch,
         label + "carried is " + Bool(pair.carried) + " but the node " +
             (state.streamable ? "carries it from call to call" : "does not (" + state.not_streamable_reason + ")")});
  } else if (pair.streamable != analyzed.Streams()) {
    // A claim the whole model refutes (a convolution or a reduction over time, a final state chained into
    // another layer) is what `verify` would show: chunked runs differ.
    problems.push_back({CheckProblem::Kind::kFlagMismatch,
                        label + "streamable is " + Bool(pair.streamable) + " but " +
                            (analyzed.Streams() ? "chunked runs of the model equal one run"
                             : !state.streamable
                                 ? "the node is not (" + state.not_streamable_reason + ")"
                                 : "chunked runs of the model differ from one run (" + analyzed.stream_problem + ")")});
  }
}

void CheckPair(const ModelIndex& index, const StateLookup& states, const StatePair& pair, bool packed_member,
               std::vector<CheckProblem>& problems) {
  const std::string label = PairLabel(pair) + ": ";
  const GraphIndex& main = index.graph(GraphPath{});
  // A member of a packed value names values inside the main graph (see CheckPackedValues).
  bool input_ok = packed_member ? main.Defines(pair.input) : main.inputs.count(pair.input) > 0;
  bool output_ok = packed_member ? main.Defines(pair.output) : main.outputs.count(pair.output) > 0;
  // Names that are not the main graph's inputs, outputs or values are the shared validation's problems
  // (rules/metadata_rules.h); the rest of the pair is checked as far as its names allow.
  if (states.OwnedBy(pair) == nullptr) {
    problems.push_back({CheckProblem::Kind::kNoSuchNode,
                        label + "no recurrent node or loop '" + pair.node + "' in graph '" + pair.graph + "'"});
    return;
  }
  const StateAnalysis* state = states.Find(pair);
  if (state == nullptr) {
    problems.push_back(
        {CheckProblem::Kind::kNoSuchState, label + OwnerLabelOf(states, pair) + " has no state '" + pair.kind + "'" +
                                               (pair.variable.empty() ? "" : " carried as '" + pair.variable + "'")});
    return;
  }
  if ((pair.rows || !pair.region.empty()) && !packed_member) {
    CheckRegionWiring(pair, *state, problems);
  } else if (!(packed_member && state->exposed)) {
    // An exposed packed member holds (the analysis also knows the authors' default paths, which read no
    // input).
    CheckWiring(index, pair, state->state, input_ok, output_ok, problems);
  }
  CheckFlags(main, pair, *state, input_ok, problems);
}

/// A context pair (kind "context"): its wiring as the analysis judged it (find/context_state.h) and its
/// flags (optional when its input has a zero default; streamable when the whole model streams: it carries
/// frames from call to call).
void CheckContextPair(const GraphIndex& main, const StatePair& pair, const ContextFinding& finding,
                      bool packed_member, const std::string& stream_problem, std::vector<CheckProblem>& problems) {
  const std::string label = PairLabel(pair) + ": ";
  if (!finding.holds()) {
    problems.push_back({finding.problem_kind, label + finding.problem});
    return;
  }
  const bool has_default = main.initializers.count(pair.input) > 0;
  if (!packed_member && pair.optional != has_default) {
    problems.push_back({CheckProblem::Kind::kFlagMismatch, label + "optional is " + Bool(pair.optional) +
                                                               " but input '" + pair.input + "' " +
                                                               (has_default ? "has" : "has no") + " default"});
  }
  if (pair.streamable != stream_problem.empty()) {
    problems.push_back({CheckProblem::Kind::kFlagMismatch,
                        label + "streamable is " + Bool(pair.streamable) + " but " +
                            (stream_problem.empty() ? "chunked runs of the model equal one run"
                                                    : "chunked runs of the model differ from one run (" +
                                                          stream_problem + ")")});
  }
}

/// One problem per name (or state) that more than one pair uses.
template <typename Key>
void CheckUnique(const std::vector<StatePair>& pairs, CheckProblem::Kind kind, Key key, const std::string& what,
                 std::vector<CheckProblem>& problems) {
  std::map<std::string, int> uses;
  std::vector<std::string> order;
  for (const auto& pair : pairs) {
    if (uses[key(pair)]++ == 0) order.push_back(key(pair));
  }
  for (const auto& name : order) {
    if (uses[name] > 1) {
      problems.push_back({kind, what + " " + name + " is in " + std::to_string(uses[name]) + " state pairs"});
    }
  }
}

/// Whether two pairs' states never run in the same call (the branches of one If).
using ExclusivePairs = std::function<bool(const StatePair&, const StatePair&)>;

/// One problem per tensor that several pairs use, unless each of them takes its own region of it (the
/// authors' packed tensor: every pair has a region, no two regions overlap unless their states are in
/// different branches of one If, and all pair it with one tensor).
void CheckSharedTensors(const std::vector<StatePair>& pairs, CheckProblem::Kind kind, bool inputs,
                        const ExclusivePairs& exclusive, std::vector<CheckProblem>& problems) {
  std::map<std::string, std::vector<size_t>> users;  // tensor name -> the pairs using it
  std::vector<std::string> order;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const std::string& name = inputs ? pairs[i].input : pairs[i].output;
    if (users[name].empty()) order.push_back(name);
    users[name].push_back(i);
  }
  for (const auto& name : order) {
    const std::vector<size_t>& sharing = users[name];
    if (sharing.size() < 2) continue;
    auto has_region = [&](size_t i) { return pairs[i].rows.has_value() || !pairs[i].region.empty(); };
    const bool all_regions = std::all_of(sharing.begin(), sharing.end(), has_region);
    size_t rank = 1;  // of the tensor (a region on a view has the view's)
    for (size_t i : sharing) {
      rank = std::max({rank, pairs[i].view.empty() ? pairs[i].region.size() : 0, pairs[i].shape.size()});
    }
    bool overlapping = false, crossed = false;
    for (size_t a = 0; all_regions && a < sharing.size(); ++a) {
      for (size_t b = a + 1; b < sharing.size(); ++b) {
        const StatePair &x = pairs[sharing[a]], &y = pairs[sharing[b]];
        if (exclusive(x, y)) continue;
        const std::vector<RegionAxis> x_region = PairRegion(x, x.view.empty() ? rank : x.view.size());
        const std::vector<RegionAxis> y_region = PairRegion(y, y.view.empty() ? rank : y.view.size());
        const ClaimConflict conflict = ClaimsConflict(RegionClaim{x.input, x.output, x_region, x.view, x.shape},
                                                      RegionClaim{y.input, y.output, y_region, y.view, y.shape});
        overlapping |= conflict == ClaimConflict::kOverlapping;
        crossed |= conflict == ClaimConflict::kCrossed;
      }
    }
    if (all_regions && !overlapping && !crossed) continue;
    const char* why = !all_regions  ? ""
                      : overlapping ? " with overlapping regions"
                      : inputs      ? " with different outputs"
                                    : " with different inputs";
    problems.push_back({kind, std::string(inputs ? "input" : "output") + " '" + name + "' is in " +
                                  std::to_string(sharing.size()) + " state pairs" + why});
  }
}

void CheckDuplicates(const Analysis& analysis, const StateLookup& states, std::vector<CheckProblem>& problems) {
  const std::vector<StatePair>& pairs = analysis.recorded_pairs;
  const ExclusivePairs exclusive = [&](const StatePair& x, const StatePair& y) {
    const StateAnalysis* a = states.Find(x);
    const StateAnalysis* b = states.Find(y);
    return a != nullptr && b != nullptr && Exclusive(a->state, b->state);
  };
  CheckSharedTensors(pairs, CheckProblem::Kind::kDuplicateInput, /*inputs=*/true, exclusive, problems);
  CheckSharedTensors(pairs, CheckProblem::Kind::kDuplicateOutput, /*inputs=*/false, exclusive, problems);
  CheckUnique(
      pairs, CheckProblem::Kind::kDuplicateState,
      [](const StatePair& p) {
        return p.graph + " '" + p.node + "' " + p.kind + (p.variable.empty() ? "" : " '" + p.variable + "'");
      },
      "state", problems);
}

}  // namespace

std::vector<std::string> CheckWarnings(const Analysis& analysis) {
  std::vector<std::string> warnings;
  for (const StateNote& note : analysis.notes) {
    if (note.Warns()) warnings.push_back(StateNoteText(note));
  }
  return warnings;
}

std::vector<CheckProblem> CheckModel(const ModelIndex& index, const Analysis& analysis, bool streamable_only) {
  std::vector<CheckProblem> problems;
  // The validation every command shares. Duplicates are judged below, knowing which states are exclusive,
  // and a pair's node, knowing whether it is a recurrent node or loop.
  for (const CheckProblem& problem : analysis.metadata_problems) {
    using Kind = CheckProblem::Kind;
    if (problem.kind != Kind::kDuplicateInput && problem.kind != Kind::kDuplicateOutput &&
        problem.kind != Kind::kNoSuchNode) {
      problems.push_back(problem);
    }
  }
  CheckStates(analysis, streamable_only, problems);
  const StateLookup states(analysis);
  std::map<size_t, const ContextFinding*> contexts;
  for (const ContextFinding& finding : analysis.contexts) contexts[finding.pair] = &finding;
  for (size_t i = 0; i < analysis.recorded_pairs.size(); ++i) {
    const bool member = analysis.packed && analysis.packed->MemberOf(static_cast<int64_t>(i)).first >= 0;
    if (auto context = contexts.find(i); context != contexts.end()) {
      CheckContextPair(index.graph(GraphPath{}), analysis.recorded_pairs[i], *context->second, member,
                       analysis.stream ? analysis.stream->problem : "", problems);
    } else {
      CheckPair(index, states, analysis.recorded_pairs[i], member, problems);
    }
  }
  if (analysis.packed) CheckPackedValues(index, *analysis.packed, analysis.recorded_pairs, problems);
  CheckDuplicates(analysis, states, problems);
  return problems;
}

}  // namespace rnnstate
