#include "analysis.h"

#include <algorithm>
#include <map>
#include <set>

#include "packed_state.h"
#include "wiring.h"

namespace rnnstate {

namespace {

/// A producer of recurrent states: appends the nodes owning states (described for reports) and their
/// states. A new kind of owner is one more producer in kStateProducers.
using StateProducer = void (*)(const ModelIndex&, std::vector<RecurrentNode>*, std::vector<RecurrentState>*);

constexpr StateProducer kStateProducers[] = {FindOpStates};

/// The values and nodes an initial state depends on, used to detect sharing: the slot value itself
/// and, for computed states, the computing nodes.
std::set<std::string> SharingKeys(const StateAnalysis& state) {
  std::set<std::string> keys;
  std::string scope;
  for (const auto& step : state.origin.value_graph) {
    scope += std::to_string(step.node) + ":" + step.attribute + ":" + std::to_string(step.list_index) + "/";
  }
  if (!state.origin.value.empty()) keys.insert(scope + "|v|" + state.origin.value);
  for (int n : state.origin.computed_by) keys.insert(scope + "|n|" + std::to_string(n));
  return keys;
}

void FindSharing(std::vector<StateAnalysis>& states) {
  std::vector<std::pair<StateAnalysis*, std::set<std::string>>> entries;
  for (auto& state : states) {
    // An exposed state has its own input: helper nodes it shares (a batch shape) are no sharing of state.
    if (!state.exposed) entries.emplace_back(&state, SharingKeys(state));
  }
  for (auto& [a, a_keys] : entries) {
    for (auto& [b, b_keys] : entries) {
      if (a == b) continue;
      bool shared = std::any_of(a_keys.begin(), a_keys.end(), [&](const std::string& k) { return b_keys.count(k); });
      if (shared) a->shared_with.push_back(b->state.Label());
    }
  }
}

int FindRecord(const std::vector<StatePair>& pairs, const RecurrentState& state) {
  for (size_t i = 0; i < pairs.size(); ++i) {
    const StatePair& pair = pairs[i];
    if (pair.graph == state.owner.graph_name && pair.node == state.owner.name && pair.kind == state.kind_name()) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

/// True when a recorded pair still holds: its input is a main-graph input that reaches the state's
/// initial slot and its output a main-graph output computed from its final slot. Metadata edited or
/// left stale by another tool is not trusted: such a state is rewritten again.
bool RecordHolds(const ModelIndex& index, const RecurrentState& state, const StatePair& pair) {
  const GraphIndex& main = index.graph(GraphPath{});
  if (!main.inputs.count(pair.input) || !main.outputs.count(pair.output)) return false;
  const PairWiring wiring = TracePairWiring(index, state, pair.input, pair.output);
  return wiring.input_reaches_slot && wiring.output_from_final;
}

bool IsExposed(const ModelIndex& index, const Analysis& analysis, const StateAnalysis& state) {
  if (state.recorded >= 0) {
    const StatePair& pair = analysis.recorded_pairs[state.recorded];
    if (analysis.packed && analysis.packed->MemberOf(state.recorded).first >= 0) {
      return PackedRecordHolds(index, *analysis.packed, state.recorded, state.state, pair);
    }
    return pair.rows ? RecordsStacked(pair, state.stacked) : RecordHolds(index, state.state, pair);
  }
  if (!state.site.graph.empty()) return false;
  if (state.stacked) return true;
  bool direct_input = (state.origin.kind == StateOrigin::Kind::kGraphInput ||
                       state.origin.kind == StateOrigin::Kind::kDefaultedInput) &&
                      state.origin.other_consumers == 0;
  return direct_input && state.final_state.graph_output;
}

/// Drops stacked exposures that clash with another (see StackedClaimsConflict).
void DropConflictingStacks(std::vector<StateAnalysis>& states) {
  std::vector<StateAnalysis*> stacked;
  for (auto& state : states) {
    if (state.stacked) stacked.push_back(&state);
  }
  std::vector<bool> clash(stacked.size(), false);
  for (size_t a = 0; a < stacked.size(); ++a) {
    for (size_t b = a + 1; b < stacked.size(); ++b) {
      if (StackedClaimsConflict(ClaimOf(*stacked[a]->stacked), ClaimOf(*stacked[b]->stacked)) != ClaimConflict::kNone) {
        clash[a] = clash[b] = true;
      }
    }
  }
  for (size_t i = 0; i < stacked.size(); ++i) {
    if (clash[i]) stacked[i]->stacked.reset();
  }
}

StateAnalysis Trace(const ModelIndex& index, const Analysis& analysis, RecurrentState state, int node) {
  StateAnalysis out;
  out.node = node;
  out.site = LocateSite(index, state);
  out.thread_problem = FindThreadLevels(index, out.site, &out.levels);
  out.origin = TraceInitialState(index, out.site);
  out.final_state = DescribeFinalState(index, out.site);
  out.stacked = FindStackedExposure(index, state, out.site, out.origin, out.final_state);
  out.recorded = FindRecord(analysis.recorded_pairs, state);
  out.state = std::move(state);
  return out;
}

}  // namespace

void Analysis::MarkAll(const std::string& problem) {
  for (auto& node : nodes) node.problem = problem;
  for (auto& state : states) state.state.problem = problem;
}

std::vector<const StateAnalysis*> Analysis::StatesOf(size_t node) const {
  std::vector<const StateAnalysis*> out;
  for (const auto& state : states) {
    if (state.node == static_cast<int>(node)) out.push_back(&state);
  }
  return out;
}

Analysis Analyze(const ModelIndex& index) {
  Analysis analysis;
  analysis.onnx_opset = index.onnx_opset();
  analysis.ir_version = index.model().ir_version();
  analysis.inference_error = index.inference_error();
  analysis.recorded_pairs = ReadStatePairs(index.model(), &analysis.metadata_error);
  if (analysis.metadata_error.empty()) {
    analysis.packed = ReadPackedStates(index.model(), analysis.recorded_pairs.size(), &analysis.metadata_error);
  }
  std::vector<RecurrentState> found;
  for (StateProducer produce : kStateProducers) produce(index, &analysis.nodes, &found);
  std::map<std::pair<GraphPath, int>, int> node_of_owner;
  for (size_t i = 0; i < analysis.nodes.size(); ++i) {
    node_of_owner[{analysis.nodes[i].graph, analysis.nodes[i].node}] = static_cast<int>(i);
  }
  for (auto& state : found) {
    const int node = node_of_owner.at({state.owner.graph, state.owner.node});
    analysis.states.push_back(Trace(index, analysis, std::move(state), node));
  }
  DropConflictingStacks(analysis.states);
  for (auto& state : analysis.states) state.exposed = IsExposed(index, analysis, state);
  FindSharing(analysis.states);  // after `exposed` is known
  return analysis;
}

}  // namespace rnnstate
