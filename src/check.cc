#include "rnnstate/check.h"

#include <map>
#include <set>

#include "rnnstate/metadata.h"
#include "rnnstate/recurrent_node.h"

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

/// Scan-8 has sequence_lens as its first input; Scan-9 dropped it.
constexpr int64_t kScanWithoutSequenceLens = 9;

bool IsOp(const onnx::NodeProto& node, const char* op) { return IsOnnxDomain(node.domain()) && node.op_type() == op; }

int64_t IntAttribute(const onnx::NodeProto& node, const std::string& name, int64_t fallback) {
  for (const auto& attribute : node.attribute()) {
    if (attribute.name() == name) return attribute.i();
  }
  return fallback;
}

GraphPath Parent(const GraphPath& path) { return GraphPath(path.begin(), path.end() - 1); }

/// Walks producers backwards from one value; see ComputedFrom.
class ProducerWalk {
 public:
  explicit ProducerWalk(const ModelIndex& index) : index_(index) {}

  bool Reaches(const ValueRef& start, const ValueRef& source) {
    std::vector<ValueRef> pending{start};
    std::set<ValueRef> seen;
    while (!pending.empty()) {
      ValueRef value = std::move(pending.back());
      pending.pop_back();
      if (value.name.empty() || !seen.insert(value).second) continue;
      if (value == source) return true;
      Expand(value, pending);
    }
    return false;
  }

 private:
  void Expand(const ValueRef& value, std::vector<ValueRef>& next) const {
    auto graph_index = index_.graphs().find(value.graph);
    const onnx::GraphProto* graph = ResolveGraph(index_.model(), value.graph);
    if (graph_index == index_.graphs().end() || graph == nullptr) return;
    Producer producer = graph_index->second.ProducerOf(value.name);
    switch (producer.kind) {
      case Producer::Kind::kNode:
        FromNodeOutput(value.graph, *graph, producer.index, producer.slot, next);
        break;
      case Producer::Kind::kGraphInput:
      case Producer::Kind::kDefaultedInput:
        if (!value.graph.empty()) FromSubgraphInput(value.graph, producer.index, next);
        break;
      case Producer::Kind::kOuterScope:
        if (!value.graph.empty()) next.push_back(ValueRef{Parent(value.graph), value.name});
        break;
      case Producer::Kind::kInitializer:
        break;
    }
  }

  /// Output `slot` of node `n`: its inputs and, for control flow, the subgraph outputs it returns.
  void FromNodeOutput(const GraphPath& path, const onnx::GraphProto& graph, int n, int slot,
                      std::vector<ValueRef>& next) const {
    const onnx::NodeProto& node = graph.node(n);
    // Shape and Size read only the shape of their input, never its values. A recurrent node makes a new
    // state: without this stop, in a loop an LSTM's h would count as computed from its c of the step before.
    if (IsOp(node, "Shape") || IsOp(node, "Size") || IsRecurrentNode(node)) return;
    for (const auto& input : node.input()) next.push_back(ValueRef{path, input});
    for (const auto& attribute : node.attribute()) {
      if (attribute.has_g()) FromSubgraphOutputs(path, n, node, attribute.name(), -1, attribute.g(), slot, next);
      for (int i = 0; i < attribute.graphs_size(); ++i) {
        FromSubgraphOutputs(path, n, node, attribute.name(), i, attribute.graphs(i), slot, next);
      }
    }
  }

  void FromSubgraphOutputs(const GraphPath& path, int n, const onnx::NodeProto& node, const std::string& attribute,
                           int list_index, const onnx::GraphProto& body, int slot, std::vector<ValueRef>& next) const {
    GraphPath sub = path;
    sub.push_back(GraphStep{n, attribute, list_index});
    // Loop outputs skip the body's condition output; Scan and If outputs match the body's one to one.
    int position = IsOp(node, "Loop") ? slot + 1 : slot;
    bool known = IsOp(node, "Loop") || IsOp(node, "Scan") || IsOp(node, "If");
    for (int k = 0; k < body.output_size(); ++k) {
      if (!known || k == position) next.push_back(ValueRef{sub, body.output(k).name()});
    }
  }

  /// Input `i` of the subgraph at `path`: what the enclosing node feeds it, first and on later iterations.
  void FromSubgraphInput(const GraphPath& path, int i, std::vector<ValueRef>& next) const {
    GraphPath parent = Parent(path);
    const onnx::NodeProto& node = ResolveGraph(index_.model(), parent)->node(path.back().node);
    const onnx::GraphProto& body = *ResolveGraph(index_.model(), path);
    auto node_input = [&](int k) {
      if (k >= 0 && k < node.input_size()) next.push_back(ValueRef{parent, node.input(k)});
    };
    auto carried = [&](int k) {
      if (k >= 0 && k < body.output_size()) next.push_back(ValueRef{path, body.output(k).name()});
    };
    if (IsOp(node, "Loop")) {
      // Body inputs: iteration number, condition, carried values; body outputs: condition, carried values.
      if (i >= 1) {
        node_input(i);
        carried(i - 1);
      }
    } else if (IsOp(node, "Scan")) {
      int offset = index_.onnx_opset() < kScanWithoutSequenceLens ? 1 : 0;
      int64_t states = node.input_size() - offset - IntAttribute(node, "num_scan_inputs", 0);
      node_input(i + offset);
      if (i < states) carried(i);
    } else {
      for (int k = 0; k < node.input_size(); ++k) node_input(k);
    }
  }

  const ModelIndex& index_;
};

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
  const char* slot = state.kind == StateKind::kHidden ? "initial_h" : "initial_c";
  const char* final_slot = state.kind == StateKind::kHidden ? "Y_h" : "Y_c";
  // The node's own slots, not the analysis' state site: a Loop carrying the state is only a way through.
  const onnx::NodeProto& proto = ResolveGraph(index.model(), node.node.graph)->node(node.node.node);
  int in_slot = InitialStateSlot(state.kind), out_slot = FinalStateSlot(state.kind);
  std::string initial = in_slot < proto.input_size() ? proto.input(in_slot) : "";
  std::string final_value = out_slot < proto.output_size() ? proto.output(out_slot) : "";
  ProducerWalk walk(index);
  if (input_ok && !walk.Reaches(ValueRef{node.node.graph, initial}, ValueRef{{}, pair.input})) {
    problems.push_back({CheckProblem::Kind::kInputNotWired,
                        label + "input '" + pair.input + "' does not reach " + slot + " of " + NodeLabelOf(node.node)});
  }
  if (output_ok &&
      (final_value.empty() || !walk.Reaches(ValueRef{{}, pair.output}, ValueRef{node.node.graph, final_value}))) {
    problems.push_back(
        {CheckProblem::Kind::kOutputNotWired,
         label + "output '" + pair.output + "' is not computed from " + final_slot + " of " + NodeLabelOf(node.node)});
  }
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
  CheckWiring(index, pair, *node, *state, input_ok, output_ok, problems);
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

void CheckDuplicates(const std::vector<StatePair>& pairs, std::vector<CheckProblem>& problems) {
  CheckUnique(
      pairs, CheckProblem::Kind::kDuplicateInput, [](const StatePair& p) { return "'" + p.input + "'"; }, "input",
      problems);
  CheckUnique(
      pairs, CheckProblem::Kind::kDuplicateOutput, [](const StatePair& p) { return "'" + p.output + "'"; }, "output",
      problems);
  CheckUnique(
      pairs, CheckProblem::Kind::kDuplicateState,
      [](const StatePair& p) { return p.graph + " '" + p.node + "' " + p.kind; }, "state", problems);
}

}  // namespace

bool ComputedFrom(const ModelIndex& index, const ValueRef& value, const ValueRef& source) {
  return ProducerWalk(index).Reaches(value, source);
}

std::vector<CheckProblem> CheckModel(const ModelIndex& index, const Analysis& analysis) {
  std::vector<CheckProblem> problems;
  if (!analysis.metadata_error.empty()) problems.push_back({CheckProblem::Kind::kBadMetadata, analysis.metadata_error});
  CheckStates(analysis, problems);
  for (const auto& pair : analysis.recorded_pairs) CheckPair(index, analysis, pair, problems);
  CheckDuplicates(analysis.recorded_pairs, problems);
  return problems;
}

}  // namespace rnnstate
