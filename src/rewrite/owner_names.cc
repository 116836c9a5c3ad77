#include "rewrite/owner_names.h"

#include "time/stream_verdict.h"

namespace rnnstate {

bool Selected(const PlanOptions& options, const RecurrentState& state) {
  if (options.streamable_only && !state.streamable) return false;
  if (!options.node_filter) return true;
  return options.node_filter->Search(state.owner.name) ||
         options.node_filter->Search(state.owner.graph_name + "/" + state.owner.name);
}

NodeNames NameUnnamedNodes(const ModelIndex& index, const Analysis& analysis, const PlanOptions& options,
                           NameAllocator& names) {
  NodeNames out;
  auto name = [&](const GraphPath& path, int node) {
    const onnx::NodeProto& proto = ResolveGraph(index.model(), path)->node(node);
    if (proto.name().empty() && !out.count({path, node})) out[{path, node}] = names.Allocate(NodeLabel(proto, node));
  };
  for (const auto& analyzed : analysis.states) {
    const RecurrentState& state = analyzed.state;
    if (!Selected(options, state) || !state.problem.empty()) continue;
    GraphPath prefix;
    for (const auto& step : state.owner.graph) {
      name(prefix, step.node);
      prefix.push_back(step);
    }
    name(state.owner.graph, state.owner.node);
  }
  // A window whose context a state carries: the metadata names it.
  if (options.conv_context && analysis.stream) {
    for (const CausalWindow& window : analysis.stream->windows) name(GraphPath{}, window.window);
  }
  return out;
}

std::string PathNamer::Name(const GraphPath& path) const {
  std::string out = "main";
  GraphPath prefix;
  for (const auto& step : path) {
    const onnx::GraphProto* graph = ResolveGraph(model_, prefix);
    auto renamed = names_.find({prefix, step.node});
    out += "/" + (renamed != names_.end() ? renamed->second : NodeLabel(graph->node(step.node), step.node));
    out += ":" + step.attribute;
    if (step.list_index >= 0) out += "[" + std::to_string(step.list_index) + "]";
    prefix.push_back(step);
  }
  return out;
}

std::vector<PathStep> PathNamer::Steps(const GraphPath& path) const {
  std::vector<PathStep> steps;
  GraphPath prefix;
  for (const auto& step : path) {
    const onnx::GraphProto* graph = ResolveGraph(model_, prefix);
    auto renamed = names_.find({prefix, step.node});
    steps.push_back(PathStep{renamed != names_.end() ? renamed->second : NodeLabel(graph->node(step.node), step.node),
                             step.attribute, step.list_index});
    prefix.push_back(step);
  }
  return steps;
}

std::string PathNamer::OwnerName(const StateOwner& owner) const {
  auto renamed = names_.find({owner.graph, owner.node});
  return renamed != names_.end() ? renamed->second : owner.name;
}

}  // namespace rnnstate
