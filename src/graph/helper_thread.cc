#include "graph/helper_thread.h"

namespace rnnstate {

namespace {

/// Adds the nodes of `graph` and of its subgraphs to `count`, stopping once it reaches kNodesWorthAThread.
void CountNodes(const onnx::GraphProto& graph, int64_t& count) {
  count += graph.node_size();
  for (const auto& node : graph.node()) {
    if (count >= kNodesWorthAThread) return;
    for (const auto& attribute : node.attribute()) {
      if (attribute.has_g()) CountNodes(attribute.g(), count);
      for (const auto& sub : attribute.graphs()) CountNodes(sub, count);
    }
  }
}

}  // namespace

bool WorthAThread(const onnx::ModelProto& model) {
  int64_t count = 0;
  CountNodes(model.graph(), count);
  return count >= kNodesWorthAThread;
}

}  // namespace rnnstate
