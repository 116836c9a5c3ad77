#include "rnnstate/analysis.h"

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
    for (auto& state : node.states) entries.push_back({&node, &state, SharingKeys(state)});
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

bool IsExposed(const ModelIndex& index, const Analysis& analysis, const StateAnalysis& state) {
  const GraphIndex& main = index.graph(GraphPath{});
  if (state.recorded >= 0) {
    const StatePair& pair = analysis.recorded_pairs[state.recorded];
    return main.inputs.count(pair.input) && main.outputs.count(pair.output);
  }
  if (!state.site.graph.empty()) return false;
  bool direct_input = (state.origin.kind == StateOrigin::Kind::kGraphInput ||
                       state.origin.kind == StateOrigin::Kind::kDefaultedInput) &&
                      state.origin.other_consumers == 0;
  return direct_input && state.final_state.graph_output;
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
      state.recorded = FindRecord(analysis.recorded_pairs, entry.node, kind);
      state.exposed = IsExposed(index, analysis, state);
      entry.states.push_back(std::move(state));
    }
    analysis.nodes.push_back(std::move(entry));
  }
  FindSharing(analysis.nodes);
  return analysis;
}

}  // namespace rnnstate
