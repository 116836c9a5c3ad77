// The graph a recorded pair's path leads to (moved unchanged from metadata_rules.cc).

#include "rules/metadata_path.h"

#include "graph/graph_path.h"

namespace rnnstate {

const onnx::GraphProto* ResolvePath(const onnx::ModelProto& model, const StatePair& pair, std::string* problem) {
  const onnx::GraphProto* graph = &model.graph();
  if (pair.path.empty() && pair.graph != "main") {
    if (!pair.dtype.empty()) *problem = "graph '" + pair.graph + "' is not the main graph its empty path names";
    return nullptr;
  }
  std::string name = "main";
  for (size_t s = 0; s < pair.path.size(); ++s) {
    const PathStep& step = pair.path[s];
    const onnx::AttributeProto* found = nullptr;
    for (int n = 0; n < graph->node_size() && found == nullptr; ++n) {
      const onnx::NodeProto& node = graph->node(n);
      if (node.name() != step.node && !(node.name().empty() && NodeLabel(node, n) == step.node)) continue;
      for (const auto& attribute : node.attribute()) {
        if (attribute.name() == step.attribute) found = &attribute;
      }
    }
    const std::string where = "path step " + std::to_string(s + 1) + " (" + step.node + ":" + step.attribute + ")";
    if (found == nullptr) {
      *problem = where + ": graph '" + name + "' has no node with that graph attribute";
      return nullptr;
    }
    if (step.index < 0 && found->type() == onnx::AttributeProto::GRAPH) {
      graph = &found->g();
    } else if (step.index >= 0 && found->type() == onnx::AttributeProto::GRAPHS && step.index < found->graphs_size()) {
      graph = &found->graphs(static_cast<int>(step.index));
    } else {
      *problem =
          where + ": the attribute holds no graph" + (step.index >= 0 ? " at index " + std::to_string(step.index) : "");
      return nullptr;
    }
    name += "/" + step.node + ":" + step.attribute + (step.index >= 0 ? "[" + std::to_string(step.index) + "]" : "");
  }
  if (pair.graph != name) {
    *problem = "graph '" + pair.graph + "' is not the graph its path names ('" + name + "')";
    return nullptr;
  }
  return graph;
}

}  // namespace rnnstate
