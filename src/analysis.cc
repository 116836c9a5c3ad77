#include "rnnstate/analysis.h"

#include "rnnstate/wiring.h"

#include <algorithm>
#include <set>

namespace rnnstate {

namespace {

std::string StateLabel(const NodeAnalysis& node, const StateAnalysis& state) {
  return node.node.name + "/" + StateKindName(state.kind);
}

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

void FindSharing(std::vector<NodeAnalysis>& nodes) {
  struct Entry {
    NodeAnalysis* node;
    StateAnalysis* state;
    std::set<std::string> keys;
  };
  std::vector<Entry> entries;
  for (auto& node : nodes) {
    for (auto& state : node.states) {
      // An exposed state has its own input: helper nodes it shares (a batch shape) are no sharing of state.
      if (!state.exposed) entries.push_back({&node, &state, SharingKeys(state)});
    }
  }
  for (auto& a : entries) {
    for (auto& b : entries) {
      if (&a == &b) continue;
      bool shared = std::any_of(a.keys.begin(), a.keys.end(), [&](const std::string& k) { return b.keys.count(k); });
      if (shared) a.state->shared_with.push_back(StateLabel(*b.node, *b.state));
    }
  }
}

int FindRecord(const std::vector<StatePair>& pairs, const RecurrentNode& node, StateKind kind) {
  for (size_t i = 0; i < pairs.size(); ++i) {
    const StatePair& pair = pairs[i];
    if (pair.graph == node.graph_name && pair.node == node.name && pair.kind == StateKindName(kind)) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

/// True when a recorded pair still holds: its input is a main-graph input that reaches the node's
/// initial-state slot and its output a main-graph output computed from the node's final state. Metadata
/// edited or left stale by another tool is not trusted: such a state is rewritten again.
bool RecordHolds(const ModelIndex& index, const RecurrentNode& node, StateKind kind, const StatePair& pair) {
  const GraphIndex& main = index.graph(GraphPath{});
  if (!main.inputs.count(pair.input) || !main.outputs.count(pair.output)) return false;
  const PairWiring wiring = TracePairWiring(index, node, kind, pair.input, pair.output);
  return wiring.input_reaches_slot && wiring.output_from_final;
}

bool IsExposed(const ModelIndex& index, const Analysis& analysis, const RecurrentNode& node,
               const StateAnalysis& state) {
  if (state.recorded >= 0) {
    const StatePair& pair = analysis.recorded_pairs[state.recorded];
    return pair.rows ? RecordsStacked(pair, state.stacked) : RecordHolds(index, node, state.kind, pair);
  }
  if (!state.site.graph.empty()) return false;
  if (state.stacked) return true;
  bool direct_input = (state.origin.kind == StateOrigin::Kind::kGraphInput ||
                       state.origin.kind == StateOrigin::Kind::kDefaultedInput) &&
                      state.origin.other_consumers == 0;
  return direct_input && state.final_state.graph_output;
}

/// Drops stacked exposures that clash with another: overlapping rows of the same input or output (two
/// states would get one value), or one input paired with two outputs or the reverse (there would be two
/// values to feed one input).
void DropOverlappingStacks(std::vector<NodeAnalysis>& nodes) {
  std::vector<StateAnalysis*> stacked;
  for (auto& node : nodes) {
    for (auto& state : node.states) {
      if (state.stacked) stacked.push_back(&state);
    }
  }
  std::vector<bool> clash(stacked.size(), false);
  for (size_t a = 0; a < stacked.size(); ++a) {
    for (size_t b = a + 1; b < stacked.size(); ++b) {
      const StackedExposure &x = *stacked[a]->stacked, &y = *stacked[b]->stacked;
      bool shared = x.input == y.input || x.output == y.output;
      bool overlap = RowsOverlap(x.rows, y.rows);
      bool crossed = (x.input == y.input) != (x.output == y.output);
      if (shared && (overlap || crossed)) clash[a] = clash[b] = true;
    }
  }
  for (size_t i = 0; i < stacked.size(); ++i) {
    if (clash[i]) stacked[i]->stacked.reset();
  }
}

}  // namespace

Analysis Analyze(const ModelIndex& index) {
  Analysis analysis;
  analysis.onnx_opset = index.onnx_opset();
  analysis.ir_version = index.model().ir_version();
  analysis.inference_error = index.inference_error();
  analysis.recorded_pairs = ReadStatePairs(index.model(), &analysis.metadata_error);
  for (auto& node : FindRecurrentNodes(index)) {
    NodeAnalysis entry{std::move(node), {}};
    for (StateKind kind : entry.node.states) {
      StateAnalysis state;
      state.kind = kind;
      state.site = LocateSite(index, entry.node, kind);
      state.thread_problem = FindThreadLevels(index, state.site, &state.levels);
      state.origin = TraceInitialState(index, state.site);
      state.final_state = DescribeFinalState(index, state.site);
      state.stacked = FindStackedExposure(index, entry.node, state.site, state.origin, state.final_state);
      state.recorded = FindRecord(analysis.recorded_pairs, entry.node, kind);
      entry.states.push_back(std::move(state));
    }
    analysis.nodes.push_back(std::move(entry));
  }
  DropOverlappingStacks(analysis.nodes);
  for (auto& node : analysis.nodes) {
    for (auto& state : node.states) state.exposed = IsExposed(index, analysis, node.node, state);
  }
  FindSharing(analysis.nodes);  // after `exposed` is known
  return analysis;
}

}  // namespace rnnstate
