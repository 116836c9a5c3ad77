#include "rules/structure_rules.h"

#include <algorithm>
#include <memory_resource>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graph/graph_path.h"

namespace rnnstate {

namespace {

/// Why node `n` of `graph` cannot read `name`: a later node defines it (the nodes are not sorted, or
/// form a cycle), or nothing before it does.
std::string UndefinedInput(const onnx::GraphProto& graph, int n, const std::string& name) {
  const std::string reads = DescribeNode(graph.node(n), n) + " reads '" + name + "', which ";
  for (int later = n + 1; later < graph.node_size(); ++later) {
    const auto& outputs = graph.node(later).output();
    if (std::find(outputs.begin(), outputs.end(), name) != outputs.end()) {
      return reads + "a later node, " + DescribeNode(graph.node(later), later) +
             ", defines (nodes must be sorted: a cycle, or nodes out of order)";
    }
  }
  return reads + "nothing before it defines";
}

/// Names visible in the scope being checked: those of the enclosing graphs defined before the node
/// that holds the subgraph, then the scope's own, each with the depth of the scope that defines it
/// (the innermost). Views into the model, which outlives the check. Their memory comes from one
/// monotonic buffer: no malloc and free per name (a million of each on a million-node graph).
using VisibleNames = std::pmr::unordered_map<std::string_view, int>;
using NameSet = std::unordered_set<std::string_view>;

/// Makes room for `more` names at once. Never shrinks: unordered_map::reserve rehashes a big map down to
/// the size asked for, which every small subgraph would do to the main graph's names.
void MakeRoom(VisibleNames& names, size_t more) {
  const size_t wanted = names.size() + more;
  if (static_cast<double>(wanted) > static_cast<double>(names.bucket_count()) * names.max_load_factor()) {
    names.reserve(wanted);
  }
}

/// `depth`: 0 for the main graph; deeper graphs are Loop/Scan bodies or If branches, whose outputs are
/// positional.
std::string CheckScope(const onnx::GraphProto& graph, VisibleNames& visible, int depth, const std::string& where) {
  const bool subgraph = depth > 0;
  // About one name per input, initializer and node: room made once, not by rehashing as the map grows.
  MakeRoom(visible, static_cast<size_t>(graph.input_size() + graph.initializer_size() + graph.node_size()));
  std::vector<std::string_view> added;                     // newly visible here, hidden when the scope ends
  std::vector<std::pair<std::string_view, int>> shadowed;  // outer names defined again here, and their depth
  // `what` names the definition for the message: built only when there is one, not for every name.
  auto define = [&](const std::string& name, const auto& what) -> std::string {
    if (name.empty()) return "";
    auto [known, fresh] = visible.try_emplace(name, depth);
    if (fresh) {
      added.push_back(name);
    } else if (known->second == depth) {
      return where + ": '" + name + "' is defined twice (" + what() + ")";
    } else {
      shadowed.emplace_back(name, known->second);
      known->second = depth;
    }
    return "";
  };
  auto problem = [&]() -> std::string {
    NameSet input_names;
    for (const auto& input : graph.input()) {
      if (!input_names.insert(input.name()).second) return where + ": duplicate graph input '" + input.name() + "'";
      if (auto p = define(input.name(), [] { return "a graph input"; }); !p.empty()) return p;
    }
    for (const auto& tensor : graph.initializer()) {
      if (input_names.count(tensor.name())) continue;  // an overridable default of that input
      if (auto p = define(tensor.name(), [] { return "an initializer"; }); !p.empty()) return p;
    }
    for (int n = 0; n < graph.node_size(); ++n) {
      const auto& node = graph.node(n);
      for (const auto& input : node.input()) {
        if (!input.empty() && !visible.count(input)) return where + ": " + UndefinedInput(graph, n, input);
      }
      for (const auto& attribute : node.attribute()) {
        if (!attribute.has_g() && attribute.graphs_size() == 0) continue;
        // Spelled as GraphPathString spells it, so that every message names a graph the same way.
        const std::string sub_where = where + "/" + NodeLabel(node, n) + ":" + attribute.name();
        if (attribute.has_g()) {
          if (auto p = CheckScope(attribute.g(), visible, depth + 1, sub_where); !p.empty()) return p;
        }
        for (int i = 0; i < attribute.graphs_size(); ++i) {
          const std::string listed = sub_where + "[" + std::to_string(i) + "]";
          if (auto p = CheckScope(attribute.graphs(i), visible, depth + 1, listed); !p.empty()) return p;
        }
      }
      for (const auto& output : node.output()) {
        if (auto p = define(output, [&] { return "an output of " + DescribeNode(node, n); }); !p.empty()) return p;
      }
    }
    NameSet output_names;
    for (const auto& output : graph.output()) {
      // A subgraph's outputs are taken by position, and one value may be two of them (PyTorch's opset-11
      // and -12 loops return h both as the carried value and as the scan output); the main graph's are
      // fetched by name.
      if (!output_names.insert(output.name()).second && !subgraph) {
        return where + ": duplicate graph output '" + output.name() + "'";
      }
      if (!visible.count(output.name())) return where + ": graph output '" + output.name() + "' is never defined";
    }
    return "";
  }();
  if (subgraph) {  // the main graph's names go with the map
    for (auto name : added) visible.erase(name);
    for (const auto& [name, outer] : shadowed) visible[name] = outer;
  }
  return problem;
}

}  // namespace

std::string StructuralProblem(const onnx::ModelProto& model) {
  std::pmr::monotonic_buffer_resource memory;
  VisibleNames visible(&memory);
  return CheckScope(model.graph(), visible, 0, "main");
}

}  // namespace rnnstate
