#include "rnnstate/check.h"

#include <algorithm>
#include <map>
#include <set>

#include "rnnstate/metadata.h"
#include "rnnstate/recurrent_node.h"
#include "rnnstate/stacked_state.h"

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
  }
  return "?";
}

namespace {

std::string PairLabel(const StatePair& pair) {
  return "state pair '" + pair.input + "' -> '" + pair.output + "' (" + pair.graph + " " + pair.node + " " + pair.kind +
         ")";
}

std::string NodeLabelOf(const RecurrentNode& node) { return node.op + " '" + node.name + "'"; }

const char* Bool(bool value) { return value ? "true" : "false"; }

void CheckStates(const Analysis& analysis, std::vector<CheckProblem>& problems) {
  for (const auto& node : analysis.nodes) {
    for (const auto& state : node.states) {
      if (state.exposed || state.recorded >= 0) continue;
      problems.push_back({CheckProblem::Kind::kNotExposed, node.node.graph_name + " " + NodeLabelOf(node.node) +
                                                               ": state " + StateKindName(state.kind) +
                                                               " is not exposed (no state pair in metadata '" +
                                                               kMetadataKey + "'; run rnnstate rewrite)"});
    }
  }
}

/// The recurrent node a pair names (graph path + name), or nullptr.
const NodeAnalysis* FindNode(const Analysis& analysis, const StatePair& pair) {
  for (const auto& node : analysis.nodes) {
    if (node.node.graph_name == pair.graph && node.node.name == pair.node) return &node;
  }
  return nullptr;
}

const StateAnalysis* FindState(const NodeAnalysis& node, const std::string& kind) {
  for (const auto& state : node.states) {
    if (kind == StateKindName(state.kind)) return &state;
  }
  return nullptr;
}

/// Checks that the pair's input feeds the slot and its output comes from the final state.
void CheckWiring(const ModelIndex& index, const StatePair& pair, const NodeAnalysis& node, const StateAnalysis& state,
                 bool input_ok, bool output_ok, std::vector<CheckProblem>& problems) {
  const std::string label = PairLabel(pair) + ": ";
  const char* slot = InitialStateSlotName(state.kind);
  const char* final_slot = FinalStateSlotName(state.kind);
  const PairWiring wiring = TracePairWiring(index, node.node, state.kind, pair.input, pair.output);
  if (input_ok && !wiring.input_reaches_slot) {
    problems.push_back({CheckProblem::Kind::kInputNotWired,
                        label + "input '" + pair.input + "' does not reach " + slot + " of " + NodeLabelOf(node.node)});
  }
  if (output_ok && !wiring.output_from_final) {
    problems.push_back(
        {CheckProblem::Kind::kOutputNotWired,
         label + "output '" + pair.output + "' is not computed from " + final_slot + " of " + NodeLabelOf(node.node)});
  }
}

/// Checks a pair with rows: the node's state must be exposed stacked at exactly those rows.
void CheckStackedWiring(const StatePair& pair, const NodeAnalysis& node, const StateAnalysis& state,
                        std::vector<CheckProblem>& problems) {
  if (RecordsStacked(pair, state.stacked)) return;
  const char* slot = InitialStateSlotName(state.kind);
  std::string found = state.stacked ? "; the graph has " + StackedText(*state.stacked) : "";
  problems.push_back(
      {CheckProblem::Kind::kInputNotWired, PairLabel(pair) + ": rows " + RowRangeText(pair.rows) + " of input '" +
                                               pair.input + "' and output '" + pair.output + "' are not " + slot +
                                               " and its final state of " + NodeLabelOf(node.node) + found});
}

void CheckFlags(const GraphIndex& main, const StatePair& pair, const NodeAnalysis& node, bool input_ok,
                std::vector<CheckProblem>& problems) {
  const std::string label = PairLabel(pair) + ": ";
  bool has_default = main.initializers.count(pair.input) > 0;
  if (input_ok && pair.optional != has_default) {
    problems.push_back({CheckProblem::Kind::kFlagMismatch,
                        label + "optional is " + Bool(pair.optional) + " but input '" + pair.input + "' " +
                            (has_default ? "has" : "has no") + " default (initializer of the same name)"});
  }
  if (pair.streamable != node.node.streamable) {
    problems.push_back({CheckProblem::Kind::kFlagMismatch,
                        label + "streamable is " + Bool(pair.streamable) + " but the node is " +
                            (node.node.streamable ? "streamable" : "not (" + node.node.not_streamable_reason + ")")});
  }
}

void CheckPair(const ModelIndex& index, const Analysis& analysis, const StatePair& pair,
               std::vector<CheckProblem>& problems) {
  const std::string label = PairLabel(pair) + ": ";
  const GraphIndex& main = index.graph(GraphPath{});
  bool input_ok = main.inputs.count(pair.input) > 0;
  bool output_ok = main.outputs.count(pair.output) > 0;
  if (!input_ok) {
    problems.push_back({CheckProblem::Kind::kNotGraphInput, label + "'" + pair.input + "' is not a main-graph input"});
  }
  if (!output_ok) {
    problems.push_back(
        {CheckProblem::Kind::kNotGraphOutput, label + "'" + pair.output + "' is not a main-graph output"});
  }
  const NodeAnalysis* node = FindNode(analysis, pair);
  if (node == nullptr) {
    problems.push_back({CheckProblem::Kind::kNoSuchNode,
                        label + "no RNN/GRU/LSTM node '" + pair.node + "' in graph '" + pair.graph + "'"});
    return;
  }
  const StateAnalysis* state = FindState(*node, pair.kind);
  if (state == nullptr) {
    problems.push_back(
        {CheckProblem::Kind::kNoSuchState, label + NodeLabelOf(node->node) + " has no state '" + pair.kind + "'"});
    return;
  }
  if (pair.rows) {
    CheckStackedWiring(pair, *node, *state, problems);
  } else {
    CheckWiring(index, pair, *node, *state, input_ok, output_ok, problems);
  }
  CheckFlags(main, pair, *node, input_ok, problems);
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

/// One problem per tensor that several pairs use, unless each of them takes its own rows of it (a
/// stacked tensor: every pair has rows, no two pairs' rows overlap, and all pair it with one tensor).
void CheckSharedTensors(const std::vector<StatePair>& pairs, CheckProblem::Kind kind, bool inputs,
                        std::vector<CheckProblem>& problems) {
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
    bool all_rows = std::all_of(sharing.begin(), sharing.end(), [&](size_t i) { return pairs[i].rows.has_value(); });
    bool overlapping = false, crossed = false;
    for (size_t a = 0; all_rows && a < sharing.size(); ++a) {
      for (size_t b = a + 1; b < sharing.size(); ++b) {
        const StatePair &x = pairs[sharing[a]], &y = pairs[sharing[b]];
        overlapping |= RowsOverlap(*x.rows, *y.rows);
        crossed |= (inputs ? x.output != y.output : x.input != y.input);
      }
    }
    if (all_rows && !overlapping && !crossed) continue;
    const char* why = !all_rows     ? ""
                      : overlapping ? " with overlapping rows"
                      : inputs      ? " with different outputs"
                                    : " with different inputs";
    problems.push_back({kind, std::string(inputs ? "input" : "output") + " '" + name + "' is in " +
                                  std::to_string(sharing.size()) + " state pairs" + why});
  }
}

void CheckDuplicates(const std::vector<StatePair>& pairs, std::vector<CheckProblem>& problems) {
  CheckSharedTensors(pairs, CheckProblem::Kind::kDuplicateInput, /*inputs=*/true, problems);
  CheckSharedTensors(pairs, CheckProblem::Kind::kDuplicateOutput, /*inputs=*/false, problems);
  CheckUnique(
      pairs, CheckProblem::Kind::kDuplicateState,
      [](const StatePair& p) { return p.graph + " '" + p.node + "' " + p.kind; }, "state", problems);
}

}  // namespace

std::vector<CheckProblem> CheckModel(const ModelIndex& index, const Analysis& analysis) {
  std::vector<CheckProblem> problems;
  if (!analysis.metadata_error.empty()) problems.push_back({CheckProblem::Kind::kBadMetadata, analysis.metadata_error});
  CheckStates(analysis, problems);
  for (const auto& pair : analysis.recorded_pairs) CheckPair(index, analysis, pair, problems);
  CheckDuplicates(analysis.recorded_pairs, problems);
  return problems;
}

}  // namespace rnnstate
