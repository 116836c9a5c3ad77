#pragma once
/// \file
/// Addresses of graphs inside a model: the main graph, or a subgraph attribute of a node, nested to any
/// depth. Analysis refers to graphs and nodes by path and index, never by pointers, because a rewrite
/// reorders and adds nodes.

#include <onnx/onnx_pb.h>

#include <cstddef>
#include <string>
#include <vector>

namespace rnnstate {

/// One step down from a graph into a subgraph: node `node` of the current graph, its attribute named
/// `attribute`, and for a GRAPHS-typed attribute the position in the list (-1 for a GRAPH attribute).
struct GraphStep {
  int node = 0;
  std::string attribute;
  int list_index = -1;

  bool operator==(const GraphStep& other) const {
    return node == other.node && attribute == other.attribute && list_index == other.list_index;
  }
  bool operator<(const GraphStep& other) const;
};

/// A path from the main graph (empty path) down to a subgraph.
using GraphPath = std::vector<GraphStep>;

/// `seed` with `value` mixed in (boost's hash_combine): the hash of a key made of several parts.
inline size_t HashCombine(size_t seed, size_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

/// Hashes a path for unordered containers: a look-up then compares one path for equality, where an
/// ordered map compares the path at every level of its tree (in graphs nested 20 deep, 20 steps each).
struct GraphPathHash {
  size_t operator()(const GraphPath& path) const;
};

/// True when `outer` is `inner` or one of its enclosing graphs.
bool Encloses(const GraphPath& outer, const GraphPath& inner);

/// The graph at `path`, or nullptr when the path does not exist in `model`.
const onnx::GraphProto* ResolveGraph(const onnx::ModelProto& model, const GraphPath& path);
onnx::GraphProto* ResolveGraph(onnx::ModelProto& model, const GraphPath& path);

/// A readable label for a node: its name, or `<op>_<index>` when it is unnamed (`node_<index>` without an op_type).
std::string NodeLabel(const onnx::NodeProto& node, int index);

/// "Loop 'decode'": the op and label of node `node` of the graph at `path`, or "?" when there is none.
std::string DescribeNode(const onnx::ModelProto& model, const GraphPath& path, int node);

/// "LSTM 'lstm'": the op and label of `node`, the node at `index` of its graph ("node 'n'" without an op).
std::string DescribeNode(const onnx::NodeProto& node, int index);

/// The user-facing form of a path, e.g. `main/Loop_3:body/If_1:then_branch` (documented in docs/metadata.md).
std::string GraphPathString(const onnx::ModelProto& model, const GraphPath& path);

/// Calls `visit(path, graph)` for the main graph and every subgraph, parents before children.
template <typename Visit>
void ForEachGraph(const onnx::GraphProto& graph, GraphPath& path, Visit&& visit) {
  visit(static_cast<const GraphPath&>(path), graph);
  for (int n = 0; n < graph.node_size(); ++n) {
    for (const auto& attribute : graph.node(n).attribute()) {
      if (attribute.has_g()) {
        path.push_back(GraphStep{n, attribute.name(), -1});
        ForEachGraph(attribute.g(), path, visit);
        path.pop_back();
      }
      for (int i = 0; i < attribute.graphs_size(); ++i) {
        path.push_back(GraphStep{n, attribute.name(), i});
        ForEachGraph(attribute.graphs(i), path, visit);
        path.pop_back();
      }
    }
  }
}

}  // namespace rnnstate
