#include "states/wiring.h"

#include <set>
#include <vector>

#include "graph/control_flow.h"
#include "graph/proto_access.h"
#include "states/recurrent_ops.h"

namespace rnnstate {

namespace {

bool IsOp(const onnx::NodeProto& node, const char* op) { return IsOnnxDomain(node.domain()) && node.op_type() == op; }

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
    if (IsOp(node, "Shape") || IsOp(node, "Size") || FindRecurrentOp(node) != nullptr) return;
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
    const int position = BodyOutputOfNodeOutput(ContainerKindOf(node, index_.onnx_opset()), slot);
    for (int k = 0; k < body.output_size(); ++k) {
      if (position < 0 || k == position) next.push_back(ValueRef{sub, body.output(k).name()});
    }
  }

  /// Input `i` of the subgraph at `path`: what the enclosing node feeds it, first and on later iterations.
  void FromSubgraphInput(const GraphPath& path, int i, std::vector<ValueRef>& next) const {
    GraphPath parent = Parent(path);
    const onnx::NodeProto& node = ResolveGraph(index_.model(), parent)->node(path.back().node);
    const onnx::GraphProto& body = *ResolveGraph(index_.model(), path);
    const BodyInputSources sources = SourcesOfBodyInput(ContainerKindOf(node, index_.onnx_opset()), node, i);
    for (int k : sources.node_inputs) next.push_back(ValueRef{parent, node.input(k)});
    if (sources.body_output >= 0 && sources.body_output < body.output_size()) {
      next.push_back(ValueRef{path, body.output(sources.body_output).name()});
    }
  }

  const ModelIndex& index_;
};

}  // namespace

PairWiring TracePairWiring(const ModelIndex& index, const RecurrentState& state, const std::string& input,
                           const std::string& output) {
  const GraphPath& graph = state.owner.graph;
  const onnx::NodeProto& proto = ResolveGraph(index.model(), graph)->node(state.owner.node);
  const int in_slot = state.initial_slot, out_slot = state.final_slot;
  const std::string initial = in_slot >= 0 && in_slot < proto.input_size() ? proto.input(in_slot) : "";
  const std::string final_value = out_slot >= 0 && out_slot < proto.output_size() ? proto.output(out_slot) : "";
  // An empty slot name reaches nothing (the walk skips empty names).
  return PairWiring{ComputedFrom(index, ValueRef{graph, initial}, ValueRef{{}, input}),
                    ComputedFrom(index, ValueRef{{}, output}, ValueRef{graph, final_value})};
}

bool ComputedFrom(const ModelIndex& index, const ValueRef& value, const ValueRef& source) {
  return ProducerWalk(index).Reaches(value, source);
}

}  // namespace rnnstate
