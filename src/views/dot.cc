#include "views/dot.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "rnnstate/metadata.h"

namespace rnnstate {

namespace {

// Colours: blue for exposed state inputs, green for state outputs, orange for recurrent nodes, grey
// dashed for what is not exposed yet, red for what is not streamable or cannot be rewritten.
constexpr const char* kInputFill = "#dbeafe";
constexpr const char* kOutputFill = "#dcfce7";
constexpr const char* kNodeFill = "#ffedd5";
constexpr const char* kProblemFill = "#fee2e2";
constexpr const char* kHiddenFill = "#f3f4f6";
constexpr const char* kExposedEdge = "#1d4ed8";
constexpr const char* kHiddenEdge = "#9ca3af";
constexpr const char* kRed = "#dc2626";
constexpr const char* kClusterFills[] = {"#f8fafc", "#eef2f7", "#e2e8f0"};

/// `key=value` attributes of one DOT statement, in order.
using Attributes = std::vector<std::pair<std::string, std::string>>;

std::string AttributeList(const Attributes& attributes) {
  std::string out = " [";
  for (size_t i = 0; i < attributes.size(); ++i) {
    out += (i ? ", " : "") + attributes[i].first + "=" + DotQuote(attributes[i].second);
  }
  return out + "]";
}

/// Collects node statements per graph (to place them in clusters) and edges, then writes the digraph.
class DotBuilder {
 public:
  /// Adds a node once per `key` in the cluster of `graph`; returns its id.
  std::string Node(const std::string& key, const GraphPath& graph, const Attributes& attributes) {
    auto [it, fresh] = ids_.emplace(key, "n" + std::to_string(ids_.size()));
    if (fresh) {
      nodes_[graph].push_back(it->second + AttributeList(attributes));
      for (size_t depth = 1; depth <= graph.size(); ++depth)
        paths_.insert(GraphPath(graph.begin(), graph.begin() + depth));
    }
    return it->second;
  }

  void Edge(const std::string& from, const std::string& to, const Attributes& attributes) {
    edges_.push_back(from + " -> " + to + AttributeList(attributes));
  }

  std::string Write(const onnx::ModelProto& model, const std::string& title) const {
    std::ostringstream out;
    out << "digraph rnnstate {\n"
        << "  graph [rankdir=LR, fontname=\"Helvetica\", fontsize=12, labelloc=t, labeljust=l, nodesep=0.3, "
           "ranksep=0.6, label="
        << DotQuote(title) << "];\n"
        << "  node [fontname=\"Helvetica\", fontsize=10, shape=box, style=\"rounded,filled\", fillcolor=\"white\"];\n"
        << "  edge [fontname=\"Helvetica\", fontsize=9];\n";
    WriteGraph(model, GraphPath{}, out);
    for (const auto& edge : edges_) out << "  " << edge << ";\n";
    out << "}\n";
    return out.str();
  }

 private:
  /// The nodes of `path` and, as clusters, of its subgraphs; the subgraphs of one node (the branches of
  /// an If) share an outer cluster named after that node.
  void WriteGraph(const onnx::ModelProto& model, const GraphPath& path, std::ostringstream& out) const {
    std::string indent(2 + 4 * path.size(), ' ');
    auto own = nodes_.find(path);
    if (own != nodes_.end()) {
      for (const auto& statement : own->second) out << indent << statement << ";\n";
    }
    std::map<int, std::vector<GraphPath>> by_owner;
    for (const auto& child : paths_) {
      if (child.size() == path.size() + 1 && std::equal(path.begin(), path.end(), child.begin())) {
        by_owner[child.back().node].push_back(child);
      }
    }
    for (const auto& [owner, children] : by_owner) {
      const std::string fill = kClusterFills[path.size() % 3];
      if (children.size() == 1) {
        OpenCluster(out, indent, ClusterId(children[0]),
                    OwnerLabel(model, children[0]) + " / " + AttributeLabel(children[0]), fill);
        WriteGraph(model, children[0], out);
        out << indent << "}\n";
        continue;
      }
      OpenCluster(out, indent, "owner_" + ClusterId(children[0]), OwnerLabel(model, children[0]), fill);
      for (const auto& child : children) {
        OpenCluster(out, indent + "  ", ClusterId(child), AttributeLabel(child), "white");
        WriteGraph(model, child, out);
        out << indent << "  }\n";
      }
      out << indent << "}\n";
    }
  }

  static void OpenCluster(std::ostringstream& out, const std::string& indent, const std::string& id,
                          const std::string& label, const std::string& fill) {
    out << indent << "subgraph cluster_" << id << " {\n"
        << indent << "  graph [style=\"rounded,filled\", color=\"#94a3b8\", fillcolor=" << DotQuote(fill)
        << ", label=" << DotQuote(label) << "];\n";
  }

  std::string ClusterId(const GraphPath& path) const {
    return std::to_string(std::distance(paths_.begin(), paths_.find(path)));
  }

  /// "Loop 'time'": the control-flow node owning the subgraph at `path`.
  static std::string OwnerLabel(const onnx::ModelProto& model, const GraphPath& path) {
    return DescribeNode(model, GraphPath(path.begin(), path.end() - 1), path.back().node);
  }

  /// "body", "then_branch", "graphs[1]": the attribute holding the subgraph at `path`.
  static std::string AttributeLabel(const GraphPath& path) {
    const GraphStep& step = path.back();
    if (step.list_index < 0) return step.attribute;
    return step.attribute + "[" + std::to_string(step.list_index) + "]";
  }

  std::map<std::string, std::string> ids_;
  std::map<GraphPath, std::vector<std::string>> nodes_;
  std::set<GraphPath> paths_;
  std::vector<std::string> edges_;
};

std::string RecurrentLabel(const RecurrentNode& node) {
  const std::string what =
      node.walk.empty() ? node.direction + ", hidden " + std::to_string(node.hidden_size) : node.walk;
  std::string label = node.op + " '" + node.name + "'" + (node.unnamed ? " (unnamed)" : "") + "\n" + what +
                      ", batch " + (node.batch.fixed() ? node.batch.ToString() : "dynamic (" + node.batch.ToString() + ")");
  if (!node.streamable) label += "\nnot streamable: " + node.not_streamable_reason;
  if (!node.problem.empty()) label += "\ncannot rewrite: " + node.problem;
  return label;
}

Attributes RecurrentAttributes(const RecurrentNode& node) {
  Attributes attributes{{"label", RecurrentLabel(node)}, {"penwidth", "1.6"}};
  attributes.push_back({"fillcolor", node.problem.empty() ? kNodeFill : kProblemFill});
  if (!node.streamable || !node.problem.empty()) {
    attributes.push_back({"color", kRed});
    attributes.push_back({"style", "rounded,filled,dashed"});
  }
  return attributes;
}

/// Where an unexposed initial state comes from, in words: "'h0' = ConstantOfShape 'zeros' (zeros)".
std::string OriginText(const onnx::ModelProto& model, const StateOrigin& origin) {
  if (origin.value.empty()) return "absent (zeros)";
  std::string text;
  if (!origin.computed_by.empty()) {
    text = "'" + origin.value + "' = " + DescribeNode(model, origin.value_graph, origin.computed_by.front());
  } else {
    std::string kind = OriginKindName(origin.kind);
    std::replace(kind.begin(), kind.end(), '_', ' ');
    text = kind + " '" + origin.value + "'";
  }
  return origin.zero ? text + " (zeros)" : text;
}

/// The control-flow nodes a state passes through on its way out, e.g. "\ncarried by Loop 'time'".
std::string ThreadText(const onnx::ModelProto& model, const StateAnalysis& state) {
  std::string text;
  if (state.site.carried) text = "\ncarried by " + DescribeNode(model, state.site.graph, state.site.node);
  for (const auto& level : state.levels) text += "\nthrough " + DescribeNode(model, level.graph, level.node);
  return text;
}

std::string UseCount(int consumers) {
  return consumers == 0 ? "unused" : "used by " + std::to_string(consumers) + " node" + (consumers == 1 ? "" : "s");
}

/// What `rewrite` would do about an unexposed state, in a few words.
std::string RewriteNote(const PlanLookup& plan, const StateKey& key) {
  if (const SkippedState* skip = plan.FindSkip(key)) return "not rewritten: " + skip->reason;
  if (const StateEdit* edit = plan.FindEdit(key)) return "rewrite adds input '" + edit->input + "'";
  return "not selected for rewrite";
}

/// Draws one state: its source on the left of the node, its destination on the right.
class StateDrawer {
 public:
  StateDrawer(const onnx::ModelProto& model, const Analysis& analysis, const PlanLookup& plan, DotBuilder& dot)
      : model_(model), analysis_(analysis), plan_(plan), dot_(dot) {}

  void Draw(const StateAnalysis& state, const std::string& node_id) {
    const RecurrentState& s = state.state;
    const StatePair* pair = state.recorded >= 0 ? &analysis_.recorded_pairs[state.recorded] : nullptr;
    const std::string& in_slot = s.initial_name;
    const std::string& out_slot = s.final_name;
    Attributes edge = EdgeStyle(s, state.exposed);
    const std::string place = pair ? PlaceSuffix(pair->rows, pair->region, pair->view)
                              : state.exposure
                                  ? PlaceSuffix(state.exposure->rows, state.exposure->region, state.exposure->view)
                                  : "";
    std::string suffix = !state.exposed ? " (not exposed)" : place.empty() ? "" : " " + place;
    std::string source = state.exposed ? ExposedInput(state, pair) : HiddenSource(state);
    std::string target = state.exposed ? ExposedOutput(state, pair) : HiddenTarget(state);
    Attributes in_edge = edge, out_edge = edge;
    in_edge.push_back({"label", in_slot + suffix + (state.exposed ? "" : "\n" + RewriteNote(plan_, s.key()))});
    if (!state.exposed && plan_.FindSkip(s.key())) in_edge.push_back({"fontcolor", kRed});
    out_edge.push_back({"label", out_slot + suffix + ThreadText(model_, state)});
    dot_.Edge(source, node_id, in_edge);
    dot_.Edge(node_id, target, out_edge);
  }

 private:
  static Attributes EdgeStyle(const RecurrentState& state, bool exposed) {
    if (!state.streamable) return {{"color", kRed}, {"fontcolor", kRed}, {"style", exposed ? "solid" : "dashed"}};
    if (exposed) return {{"color", kExposedEdge}, {"penwidth", "1.4"}};
    return {{"color", kHiddenEdge}, {"fontcolor", "#6b7280"}, {"style", "dashed"}};
  }

  /// The main-graph input that feeds an exposed state.
  std::string ExposedInput(const StateAnalysis& state, const StatePair* pair) {
    if ((pair && (pair->rows || !pair->region.empty())) || (!pair && state.exposure)) {
      // One box per packed input, shared by the states that take regions of it.
      const std::string& name = pair ? pair->input : state.exposure->input;
      return dot_.Node("in|" + name, GraphPath{},
                       {{"label", "input '" + name + "'\npacked"}, {"fillcolor", kInputFill}});
    }
    std::string name = pair ? pair->input : state.origin.value;
    std::string label = "input '" + name + "'\n" + ShapeText(state.state.shape);
    if (pair) label += pair->optional ? ", optional" : ", required";
    return dot_.Node("in|" + name, GraphPath{}, {{"label", label}, {"fillcolor", kInputFill}});
  }

  /// The main-graph output that carries an exposed state.
  std::string ExposedOutput(const StateAnalysis& state, const StatePair* pair) {
    std::string name = pair ? pair->output : state.exposure ? state.exposure->output : state.final_state.value;
    return dot_.Node("out|" + name, GraphPath{}, {{"label", "output '" + name + "'"}, {"fillcolor", kOutputFill}});
  }

  /// Where an unexposed initial state comes from, placed in the node's graph; shared origins share a box.
  std::string HiddenSource(const StateAnalysis& state) {
    const StateOwner& owner = state.state.owner;
    std::string key = state.origin.value.empty()
                          ? "absent|" + owner.graph_name + "|" + state.state.Label()
                          : "origin|" + GraphPathString(model_, state.origin.value_graph) + "|" + state.origin.value;
    Attributes attributes{
        {"label", OriginText(model_, state.origin)}, {"fillcolor", kHiddenFill}, {"style", "rounded,filled,dashed"}};
    // The box sits in the graph defining the value: an outer-scope or loop-carried start value lies outside.
    return dot_.Node(key, state.origin.value.empty() ? owner.graph : state.origin.value_graph, attributes);
  }

  /// Where an unexposed final state goes, placed in the node's graph.
  std::string HiddenTarget(const StateAnalysis& state) {
    const StateOwner& owner = state.state.owner;
    const FinalState& final_state = state.final_state;
    std::string label = "not produced";
    if (final_state.graph_output)
      label = "output '" + final_state.value + "'";
    else if (!final_state.value.empty())
      label = "'" + final_state.value + "'\n" + UseCount(final_state.consumers);
    std::string key = "final|" + owner.graph_name + "|" + state.state.Label();
    return dot_.Node(key, state.site.graph,
                     {{"label", label}, {"fillcolor", kHiddenFill}, {"style", "rounded,filled,dashed"}});
  }

  const onnx::ModelProto& model_;
  const Analysis& analysis_;
  const PlanLookup& plan_;
  DotBuilder& dot_;
};

std::string Title(const std::string& file, const Analysis& analysis) {
  size_t count = analysis.nodes.size();
  std::string title = file + "\n" + std::to_string(count) + " recurrent node" + (count == 1 ? "" : "s") + ", opset " +
                      std::to_string(analysis.onnx_opset) + ", IR " + std::to_string(analysis.ir_version) + ", " +
                      std::to_string(analysis.recorded_pairs.size()) + " state pair" +
                      (analysis.recorded_pairs.size() == 1 ? "" : "s") + " in metadata";
  if (!analysis.metadata_error.empty()) title += "\n" + analysis.metadata_error;
  return title;
}

}  // namespace

std::string DotQuote(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string ReportDot(const std::string& file, const onnx::ModelProto& model, const Analysis& analysis,
                      const Plan& plan) {
  DotBuilder dot;
  const PlanLookup lookup(plan);
  StateDrawer drawer(model, analysis, lookup, dot);
  const std::vector<std::vector<const StateAnalysis*>> by_node = analysis.StatesByNode();
  for (size_t i = 0; i < analysis.nodes.size(); ++i) {
    const RecurrentNode& n = analysis.nodes[i];
    std::string id = dot.Node("rnn|" + n.graph_name + "|" + n.name, n.graph, RecurrentAttributes(n));
    for (const StateAnalysis* state : by_node[i]) drawer.Draw(*state, id);
  }
  if (analysis.nodes.empty())
    dot.Node("empty", GraphPath{}, {{"label", "no RNN, GRU or LSTM nodes"}, {"shape", "plaintext"}});
  return dot.Write(model, Title(file, analysis));
}

}  // namespace rnnstate
