#include "validate/pruned_bodies.h"

#include <optional>

#include "graph/graph_path.h"
#include "graph/proto_access.h"
#include "validate/changed_nodes.h"

namespace rnnstate {

namespace {

/// The nodes of an input graph by the values they define, looked up for the rewritten graph's
/// changed nodes that hold subgraphs (the map is built on the first look-up: most graphs need none).
class Counterparts {
 public:
  explicit Counterparts(const onnx::GraphProto& was) : was_(was) {}

  /// The node of `was` of the same type defining one of `node`'s outputs, or nullptr (a Loop threading a
  /// state out gains carried outputs before its scan outputs, an If gains outputs after its own).
  const onnx::NodeProto* Of(const onnx::NodeProto& node) {
    if (by_output_.empty()) {
      for (const auto& candidate : was_.node()) {
        for (const auto& output : candidate.output()) {
          if (!output.empty()) by_output_.emplace(output, &candidate);
        }
      }
    }
    for (const auto& output : node.output()) {
      auto found = by_output_.find(output);
      if (found == by_output_.end()) continue;
      const onnx::NodeProto& match = *found->second;
      return match.op_type() == node.op_type() && match.domain() == node.domain() ? &match : nullptr;
    }
    return nullptr;
  }

 private:
  const onnx::GraphProto& was_;
  std::unordered_map<std::string_view, const onnx::NodeProto*> by_output_;
};

}  // namespace

std::vector<const onnx::NodeProto*> BodyPruner::Prune(const onnx::GraphProto& now, const onnx::GraphProto& was,
                                                      const std::vector<int>& region) {
  std::vector<const onnx::NodeProto*> nodes;
  nodes.reserve(region.size());
  Counterparts counterparts(was);
  for (int n : region) {
    const onnx::NodeProto& node = now.node(n);
    const onnx::NodeProto* pruned = nullptr;
    if (HasSubgraph(node)) {
      if (const onnx::NodeProto* match = counterparts.Of(node)) pruned = PruneNode(node, *match, changed_);
    }
    nodes.push_back(pruned != nullptr ? pruned : &node);
  }
  return nodes;
}

const onnx::NodeProto* BodyPruner::PruneNode(const onnx::NodeProto& now, const onnx::NodeProto& was,
                                             const NameSet& changed) {
  if (now.attribute_size() != was.attribute_size()) return nullptr;
  auto* copy = google::protobuf::Arena::CreateMessage<onnx::NodeProto>(&arena_);
  copy->set_name(now.name());
  copy->set_op_type(now.op_type());
  copy->set_domain(now.domain());
  *copy->mutable_input() = now.input();
  *copy->mutable_output() = now.output();
  for (int a = 0; a < now.attribute_size(); ++a) {
    const onnx::AttributeProto& attribute = now.attribute(a);
    const onnx::AttributeProto& counterpart = was.attribute(a);
    // Scan-8's and others' lists of graphs are rare: such a node is taken whole.
    if (attribute.name() != counterpart.name() || attribute.graphs_size() > 0) return nullptr;
    if (!attribute.has_g()) {
      *copy->add_attribute() = attribute;
      continue;
    }
    if (!counterpart.has_g()) return nullptr;
    onnx::AttributeProto* pruned = copy->add_attribute();
    pruned->set_name(attribute.name());
    pruned->set_type(attribute.type());
    if (!PruneGraph(attribute.g(), counterpart.g(), changed, *pruned->mutable_g())) return nullptr;
  }
  return copy;
}

bool BodyPruner::PruneGraph(const onnx::GraphProto& now, const onnx::GraphProto& was, const NameSet& changed,
                            onnx::GraphProto& into) {
  auto declared = declared_.find(&was);
  if (declared == declared_.end()) return false;
  InterfaceChanges changes;
  if (!FindInterfaceChanges(now, was, declared->second, changes)) return false;
  // A body reads the changed names of every scope around it.
  changes.changed.insert(changed.begin(), changed.end());
  std::unordered_map<std::string_view, int> constants;
  const std::optional<std::vector<int>> region = FindRegionNodes(now, was, changes, constants);
  if (!region) return false;

  std::vector<const onnx::NodeProto*> kept(static_cast<size_t>(now.node_size()), nullptr);
  Counterparts counterparts(was);
  for (int n : *region) {
    const onnx::NodeProto& node = now.node(n);
    const onnx::NodeProto* pruned = nullptr;
    if (HasSubgraph(node)) {
      if (const onnx::NodeProto* match = counterparts.Of(node)) pruned = PruneNode(node, *match, changes.changed);
    }
    kept[n] = pruned != nullptr ? pruned : &node;
    const bool constant = IsOnnxOp(node, {"Constant"});
    for (const auto& output : node.output()) {
      if (output.empty()) continue;
      values_.defined.insert(output);
      if (constant) values_.constant_outputs.insert(output);
    }
  }
  // A body defines its outputs: an unchanged node defining one comes along (one with a subgraph would
  // bring its whole subgraph: the body is then not pruned).
  std::unordered_map<std::string_view, int> definer;
  for (int n = 0; n < now.node_size(); ++n) {
    for (const auto& output : now.node(n).output()) {
      if (!output.empty()) definer.emplace(output, n);
    }
  }
  for (const auto& output : now.output()) {
    auto found = definer.find(output.name());
    if (found == definer.end() || kept[found->second] != nullptr) continue;
    const onnx::NodeProto& node = now.node(found->second);
    if (HasSubgraph(node)) return false;
    kept[found->second] = &node;
  }
  // The Constant nodes the kept ones read, for inference reads their values (they read nothing).
  auto bring = [&](const std::string& name) {
    auto constant = constants.find(name);
    if (constant != constants.end()) kept[constant->second] = &now.node(constant->second);
  };
  for (const onnx::NodeProto* node : kept) {
    if (node == nullptr) continue;
    for (const auto& input : node->input()) bring(input);
    if (HasSubgraph(*node)) {
      for (const auto& name : SubgraphReferences(*node)) bring(name);
    }
  }

  into.set_name(now.name());
  *into.mutable_input() = now.input();
  *into.mutable_initializer() = now.initializer();
  *into.mutable_output() = now.output();
  NameSet defined;
  for (const onnx::NodeProto* node : kept) {
    if (node == nullptr) continue;
    *into.add_node() = *node;
    defined.insert(node->output().begin(), node->output().end());
  }
  for (const auto& info : now.value_info()) {
    if (defined.count(info.name())) *into.add_value_info() = info;
  }
  return true;
}

bool NamesDefinedOnce(const onnx::GraphProto& main) {
  std::unordered_set<std::string_view> seen;
  bool once = true;
  GraphPath root;
  ForEachGraph(main, root, [&](const GraphPath&, const onnx::GraphProto& graph) {
    if (!once) return;
    std::unordered_set<std::string_view> inputs;
    for (const auto& input : graph.input()) {
      once = once && seen.insert(input.name()).second;
      inputs.insert(input.name());
    }
    // An initializer may be the default of a graph input of the same graph.
    for (const auto& tensor : graph.initializer()) {
      once = once && (seen.insert(tensor.name()).second || inputs.count(tensor.name()) > 0);
    }
    for (const auto& node : graph.node()) {
      for (const auto& output : node.output()) once = once && (output.empty() || seen.insert(output).second);
    }
  });
  return once;
}

}  // namespace rnnstate
