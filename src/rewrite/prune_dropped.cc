#include "rewrite/prune_dropped.h"

#include <map>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graph/graph_edit.h"
#include "graph/proto_access.h"

namespace rnnstate {

namespace {

/// True when `node` has a subgraph, whose outer-scope references it reads too.
bool HasSubgraph(const onnx::NodeProto& node) {
  for (const auto& attribute : node.attribute()) {
    if (attribute.has_g() || attribute.graphs_size() > 0) return true;
  }
  return false;
}

/// The names each node of one graph reads: its inputs, then the outer-scope references of its subgraphs,
/// worked out once per node that has any. Views of the graph's names: valid until the graph changes.
class GraphReads {
 public:
  explicit GraphReads(const onnx::GraphProto& graph) {
    OuterReferences outer;
    for (int n = 0; n < graph.node_size(); ++n) {
      if (HasSubgraph(graph.node(n))) references_.emplace(n, outer.OfNode(graph.node(n)));
    }
  }

  /// Calls `visit` with each name node `n` (`node`) reads, a name read twice twice.
  template <typename Visit>
  void ForEach(int n, const onnx::NodeProto& node, Visit visit) const {
    for (const std::string& input : node.input()) visit(std::string_view(input));
    if (references_.empty()) return;
    if (auto found = references_.find(n); found != references_.end()) {
      for (const std::string& name : found->second) visit(std::string_view(name));
    }
  }

 private:
  std::map<int, std::set<std::string>> references_;
};

}  // namespace

void PruneDropped(onnx::GraphProto& graph, const std::set<std::string>& dropped) {
  if (dropped.empty()) return;
  // Keys are views of the graph's names (and of `dropped`): nothing changes the graph before the removals.
  const GraphReads reads(graph);
  std::unordered_map<std::string_view, int> uses;
  std::unordered_map<std::string_view, int> producer;
  // About one name read and one written per node: no rehash while the maps fill.
  uses.reserve(graph.node_size() * 2 + graph.output_size());
  producer.reserve(graph.node_size());
  for (int n = 0; n < graph.node_size(); ++n) {
    reads.ForEach(n, graph.node(n), [&](std::string_view name) { ++uses[name]; });
    for (const auto& out : graph.node(n).output()) producer[out] = n;
  }
  for (const auto& v : graph.output()) ++uses[v.name()];
  std::unordered_set<std::string_view> inputs;
  for (const auto& v : graph.input()) inputs.insert(v.name());

  std::vector<std::string_view> work(dropped.begin(), dropped.end());
  std::set<int> removed;
  std::set<std::string_view> unused_initializers;
  while (!work.empty()) {
    const std::string_view name = work.back();
    work.pop_back();
    if (uses[name] > 0) continue;
    auto it = producer.find(name);
    if (it == producer.end()) {
      if (!inputs.count(name)) unused_initializers.insert(name);
      continue;
    }
    int n = it->second;
    const onnx::NodeProto& node = graph.node(n);
    bool all_unused = true;
    for (const auto& out : node.output()) all_unused &= out.empty() || uses[out] == 0;
    if (!all_unused || !removed.insert(n).second) continue;
    reads.ForEach(n, node, [&](std::string_view read) {
      if (read.empty()) return;
      --uses[read];
      work.push_back(read);
    });
  }
  // Chosen before the nodes go: their names, which some keys view, go with them.
  std::vector<std::string> initializers_to_remove;
  for (const std::string_view name : unused_initializers) {
    if (uses[name] == 0) initializers_to_remove.emplace_back(name);
  }
  auto* nodes = graph.mutable_node();
  for (auto it = removed.rbegin(); it != removed.rend(); ++it) nodes->DeleteSubrange(*it, 1);
  for (const auto& name : initializers_to_remove) RemoveInitializer(graph, name);
}

}  // namespace rnnstate
