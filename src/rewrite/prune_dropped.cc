#include "rewrite/prune_dropped.h"

#include <unordered_map>
#include <vector>

#include "graph/graph_edit.h"
#include "graph/proto_access.h"

namespace rnnstate {

namespace {

/// Names a node reads, including outer-scope references of its subgraphs.
std::vector<std::string> NodeReads(const onnx::NodeProto& node) {
  std::vector<std::string> reads(node.input().begin(), node.input().end());
  std::set<std::string> references = SubgraphReferences(node);
  reads.insert(reads.end(), references.begin(), references.end());
  return reads;
}

}  // namespace

void PruneDropped(onnx::GraphProto& graph, const std::set<std::string>& dropped) {
  if (dropped.empty()) return;
  std::unordered_map<std::string, int> uses;
  std::unordered_map<std::string, int> producer;
  for (int n = 0; n < graph.node_size(); ++n) {
    for (const auto& name : NodeReads(graph.node(n))) ++uses[name];
    for (const auto& out : graph.node(n).output()) producer[out] = n;
  }
  for (const auto& v : graph.output()) ++uses[v.name()];
  std::set<std::string> inputs;
  for (const auto& v : graph.input()) inputs.insert(v.name());

  std::vector<std::string> work(dropped.begin(), dropped.end());
  std::set<int> removed;
  std::set<std::string> unused_initializers;
  while (!work.empty()) {
    std::string name = work.back();
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
    for (const auto& read : NodeReads(node)) {
      if (read.empty()) continue;
      --uses[read];
      work.push_back(read);
    }
  }
  auto* nodes = graph.mutable_node();
  for (auto it = removed.rbegin(); it != removed.rend(); ++it) nodes->DeleteSubrange(*it, 1);
  for (const auto& name : unused_initializers) {
    if (uses[name] == 0) RemoveInitializer(graph, name);
  }
}

}  // namespace rnnstate
