#include "graph/graph_path.h"

#include <algorithm>
#include <functional>
#include <tuple>

namespace rnnstate {

bool GraphStep::operator<(const GraphStep& other) const {
  return std::tie(node, attribute, list_index) < std::tie(other.node, other.attribute, other.list_index);
}

size_t GraphPathHash::operator()(const GraphPath& path) const {
  size_t hash = path.size();
  for (const GraphStep& step : path) {
    for (const size_t part : {static_cast<size_t>(step.node), std::hash<std::string>()(step.attribute),
                              static_cast<size_t>(step.list_index)}) {
      hash = HashCombine(hash, part);
    }
  }
  return hash;
}

namespace {

template <typename Graph, typename Node>
Graph* StepInto(Graph* graph, const GraphStep& step) {
  if (graph == nullptr || step.node < 0 || step.node >= graph->node_size()) return nullptr;
  Node* node = graph->mutable_node()->Mutable(step.node);
  for (auto& attribute : *node->mutable_attribute()) {
    if (attribute.name() != step.attribute) continue;
    if (step.list_index < 0) return attribute.has_g() ? attribute.mutable_g() : nullptr;
    if (step.list_index < attribute.graphs_size()) return attribute.mutable_graphs(step.list_index);
    return nullptr;
  }
  return nullptr;
}

}  // namespace

onnx::GraphProto* ResolveGraph(onnx::ModelProto& model, const GraphPath& path) {
  onnx::GraphProto* graph = model.mutable_graph();
  for (const auto& step : path) graph = StepInto<onnx::GraphProto, onnx::NodeProto>(graph, step);
  return graph;
}

const onnx::GraphProto* ResolveGraph(const onnx::ModelProto& model, const GraphPath& path) {
  if (!model.has_graph()) return nullptr;
  // The const overload walks the same way without mutating: mutable_* accessors on an existing
  // submessage do not change it, but we must not create one, hence the has_* checks in StepInto.
  return ResolveGraph(const_cast<onnx::ModelProto&>(model), path);
}

std::string NodeLabel(const onnx::NodeProto& node, int index) {
  if (!node.name().empty()) return node.name();
  return (node.op_type().empty() ? std::string("node") : node.op_type()) + "_" + std::to_string(index);
}

bool Encloses(const GraphPath& outer, const GraphPath& inner) {
  return outer.size() <= inner.size() && std::equal(outer.begin(), outer.end(), inner.begin());
}

std::string DescribeNode(const onnx::ModelProto& model, const GraphPath& path, int node) {
  const onnx::GraphProto* graph = ResolveGraph(model, path);
  if (graph == nullptr || node < 0 || node >= graph->node_size()) return "?";
  return DescribeNode(graph->node(node), node);
}

std::string DescribeNode(const onnx::NodeProto& node, int index) {
  return (node.op_type().empty() ? std::string("node") : node.op_type()) + " '" + NodeLabel(node, index) + "'";
}

std::string GraphPathString(const onnx::ModelProto& model, const GraphPath& path) {
  std::string out = "main";
  const onnx::GraphProto* graph = &model.graph();
  for (const auto& step : path) {
    if (graph == nullptr || step.node < 0 || step.node >= graph->node_size()) return out + "/?";
    const onnx::NodeProto& node = graph->node(step.node);
    out += "/" + NodeLabel(node, step.node) + ":" + step.attribute;
    if (step.list_index >= 0) out += "[" + std::to_string(step.list_index) + "]";
    graph = nullptr;
    for (const auto& attribute : node.attribute()) {
      if (attribute.name() != step.attribute) continue;
      if (step.list_index < 0 && attribute.has_g()) graph = &attribute.g();
      if (step.list_index >= 0 && step.list_index < attribute.graphs_size()) graph = &attribute.graphs(step.list_index);
    }
  }
  return out;
}

}  // namespace rnnstate
