#include "validate/changed_region.h"

#include <algorithm>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "graph/graph_path.h"
#include "graph/proto_access.h"
#include "graph/shape_inference.h"
#include "validate/changed_nodes.h"
#include "validate/pruned_bodies.h"

namespace rnnstate {

namespace {

using NameSet = std::unordered_set<std::string_view>;

bool SameOpsets(const onnx::ModelProto& a, const onnx::ModelProto& b) {
  if (a.opset_import_size() != b.opset_import_size()) return false;
  for (int i = 0; i < a.opset_import_size(); ++i) {
    if (!SameMessage(a.opset_import(i), b.opset_import(i))) return false;
  }
  return true;
}

/// True when onnx's checker accepts `type` on a main graph input: an element type, and a shape for a
/// tensor (of a sequence or optional too). The types the region reads come from inference, which may
/// leave them incomplete.
bool CompleteForChecker(const onnx::TypeProto& type) {
  switch (type.value_case()) {
    case onnx::TypeProto::kTensorType:
      return type.tensor_type().elem_type() != onnx::TensorProto::UNDEFINED && type.tensor_type().has_shape();
    case onnx::TypeProto::kSequenceType:
      return type.sequence_type().has_elem_type() && CompleteForChecker(type.sequence_type().elem_type());
    case onnx::TypeProto::kOptionalType:
      return type.optional_type().has_elem_type() && CompleteForChecker(type.optional_type().elem_type());
    default:
      return false;
  }
}

/// Every name the subgraphs of `node` define (inputs, initializers, node outputs, at any depth) into
/// `names`; their nodes counted into `nodes`.
void DefinedInSubgraphs(const onnx::NodeProto& node, std::unordered_set<std::string>& names, int64_t& nodes) {
  auto collect = [&](const GraphPath&, const onnx::GraphProto& graph) {
    for (const auto& input : graph.input()) names.insert(input.name());
    for (const auto& tensor : graph.initializer()) names.insert(tensor.name());
    nodes += graph.node_size();
    for (const auto& inner : graph.node()) names.insert(inner.output().begin(), inner.output().end());
  };
  GraphPath path;
  for (const auto& attribute : node.attribute()) {
    if (attribute.has_g()) ForEachGraph(attribute.g(), path, collect);
    for (const auto& sub : attribute.graphs()) ForEachGraph(sub, path, collect);
  }
}

/// The region's nodes of `now`: those holding subgraphs pruned to what changed in them (pruned_bodies.h)
/// where every name is defined once in both models, else whole. `bodies` gets what the pruned bodies hold.
std::vector<const onnx::NodeProto*> RegionNodes(const onnx::GraphProto& now, const InferredModel& inferred,
                                                const std::vector<int>& nodes, const InterfaceChanges& changes,
                                                google::protobuf::Arena& arena, BodyValues& bodies) {
  const bool holds_subgraphs = std::any_of(nodes.begin(), nodes.end(), [&](int n) { return HasSubgraph(now.node(n)); });
  if (holds_subgraphs && inferred.declared_in_subgraphs != nullptr && NamesDefinedOnce(now) &&
      NamesDefinedOnce(inferred.model->graph())) {
    BodyPruner pruner(*inferred.declared_in_subgraphs, changes.changed, arena);
    std::vector<const onnx::NodeProto*> pruned = pruner.Prune(now, inferred.model->graph(), nodes);
    bodies = pruner.values();
    return pruned;
  }
  std::vector<const onnx::NodeProto*> whole;
  whole.reserve(nodes.size());
  for (int n : nodes) whole.push_back(&now.node(n));
  return whole;
}

/// What the region's nodes define, and what they read from the rest of the graph (in order of first use).
struct RegionValues {
  NameSet defined;
  NameSet constant_outputs;  ///< of the region's Constant nodes
  NameSet read_set;
  std::vector<std::string_view> reads;
  /// The outer names the region's subgraphs read (`reads` views them), and every name they define: onnx's
  /// checker refuses a subgraph name the main graph defines too, and the region holds only part of it.
  std::set<std::string> outer_reads;
  std::unordered_set<std::string> inner_names;
  int64_t inner_nodes = 0;
};

RegionValues ValuesOf(const std::vector<const onnx::NodeProto*>& nodes, const InterfaceChanges& changes) {
  RegionValues values;
  for (const onnx::NodeProto* region_node : nodes) {
    const onnx::NodeProto& node = *region_node;
    std::set<std::string> subgraph_reads;
    if (HasSubgraph(node)) {
      DefinedInSubgraphs(node, values.inner_names, values.inner_nodes);
      subgraph_reads = SubgraphReferences(node);
    }
    auto read = [&](const std::string& input) {
      if (input.empty() || values.defined.count(input) || changes.changed.count(input)) return;
      if (values.read_set.insert(input).second) values.reads.push_back(input);
    };
    for (const auto& input : node.input()) read(input);
    for (const auto& name : subgraph_reads) read(*values.outer_reads.insert(name).first);
    for (const auto& output : node.output()) {
      if (!output.empty()) values.defined.insert(output);
    }
    if (IsOnnxOp(node, {"Constant"})) {
      for (const auto& output : node.output()) values.constant_outputs.insert(output);
    }
  }
  return values;
}

/// True when a name the region's subgraphs define is one the main graph defines too.
bool InnerNamesClash(const onnx::GraphProto& now, const std::unordered_set<std::string>& inner_names) {
  if (inner_names.empty()) return false;
  auto clashes = [&](const std::string& name) { return inner_names.count(name) > 0; };
  for (const auto& input : now.input()) {
    if (clashes(input.name())) return true;
  }
  for (const auto& tensor : now.initializer()) {
    if (clashes(tensor.name())) return true;
  }
  for (const auto& node : now.node()) {
    for (const auto& output : node.output()) {
      if (clashes(output)) return true;
    }
  }
  return false;
}

/// The input's types of what the region reads and defines (declared, else inferred, else an
/// initializer's), and which of the region's values the input defined.
struct InputTypes {
  std::unordered_map<std::string_view, const onnx::TypeProto*> types;
  NameSet existed;
};

InputTypes TypesInInput(const onnx::GraphProto& was, const RegionValues& values, google::protobuf::Arena& arena) {
  InputTypes in;
  auto take = [&](const onnx::ValueInfoProto& info) {
    if (info.has_type() && (values.read_set.count(info.name()) || values.defined.count(info.name()))) {
      in.types.emplace(info.name(), &info.type());
    }
  };
  // Every graph: pruned bodies (pruned_bodies.h) read and define values of the input's subgraphs too,
  // whose names are then defined once in the whole model.
  GraphPath root;
  ForEachGraph(was, root, [&](const GraphPath&, const onnx::GraphProto& graph) {
    for (const auto& info : graph.input()) take(info);
    for (const auto& info : graph.output()) take(info);
    for (const auto& info : graph.value_info()) take(info);
    for (const auto& tensor : graph.initializer()) {
      if (values.defined.count(tensor.name())) in.existed.insert(tensor.name());
      if (values.read_set.count(tensor.name()) && !in.types.count(tensor.name())) {
        in.types.emplace(tensor.name(), InitializerType(tensor, arena));
      }
    }
    for (const auto& input : graph.input()) {
      if (values.defined.count(input.name())) in.existed.insert(input.name());
    }
    for (const auto& node : graph.node()) {
      for (const auto& output : node.output()) {
        if (values.defined.count(output)) in.existed.insert(output);
      }
    }
  });
  return in;
}

/// The rest of the graph as the region reads it, added to `graph`: an unchanged graph input as declared, a
/// small initializer whole (inference may read its values), anything else as an input of the inferred
/// type. False when such a type is unknown or incomplete.
bool AddBoundary(const onnx::GraphProto& now, const std::vector<std::string_view>& boundary, const InputTypes& in,
                 onnx::GraphProto& graph) {
  const auto now_inputs = ByName(now.input());
  const auto now_initializers = ByName(now.initializer());
  for (std::string_view name : boundary) {
    auto initializer = now_initializers.find(name);
    const bool whole = initializer != now_initializers.end() && CopiedWhole(*initializer->second);
    if (whole) *graph.add_initializer() = *initializer->second;
    if (auto input = now_inputs.find(name); input != now_inputs.end()) {
      *graph.add_input() = *input->second;
      continue;
    }
    if (whole) continue;
    auto type = in.types.find(name);
    if (type == in.types.end() || !CompleteForChecker(*type->second)) return false;
    onnx::ValueInfoProto* input = graph.add_input();
    input->set_name(std::string(name));
    *input->mutable_type() = *type->second;
  }
  return true;
}

}  // namespace

bool SameTypeUpToSymbols(const onnx::TypeProto& a, const onnx::TypeProto& b) {
  if (a.value_case() != b.value_case()) return false;
  switch (a.value_case()) {
    case onnx::TypeProto::kTensorType: {
      const auto& x = a.tensor_type();
      const auto& y = b.tensor_type();
      if (x.elem_type() != y.elem_type() || x.has_shape() != y.has_shape()) return false;
      if (!x.has_shape()) return true;
      if (x.shape().dim_size() != y.shape().dim_size()) return false;
      for (int d = 0; d < x.shape().dim_size(); ++d) {
        const auto& u = x.shape().dim(d);
        const auto& v = y.shape().dim(d);
        if (u.has_dim_value() != v.has_dim_value() || u.dim_value() != v.dim_value()) return false;
      }
      return true;
    }
    case onnx::TypeProto::kSequenceType:
      return a.sequence_type().has_elem_type() == b.sequence_type().has_elem_type() &&
             (!a.sequence_type().has_elem_type() ||
              SameTypeUpToSymbols(a.sequence_type().elem_type(), b.sequence_type().elem_type()));
    case onnx::TypeProto::kOptionalType:
      return a.optional_type().has_elem_type() == b.optional_type().has_elem_type() &&
             (!a.optional_type().has_elem_type() ||
              SameTypeUpToSymbols(a.optional_type().elem_type(), b.optional_type().elem_type()));
    default:
      return SameMessage(a, b);
  }
}

std::optional<ChangedRegion> FindChangedRegion(const onnx::ModelProto& rewritten, const InferredModel& inferred,
                                               google::protobuf::Arena& arena) {
  const onnx::ModelProto& before = *inferred.model;
  // IR 3 requires every initializer to be a graph input, a rule about the whole graph.
  if (rewritten.ir_version() < 4 || rewritten.ir_version() != before.ir_version() || !SameOpsets(rewritten, before) ||
      rewritten.functions_size() > 0 || before.functions_size() > 0) {
    return std::nullopt;
  }
  const onnx::GraphProto& now = rewritten.graph();
  const onnx::GraphProto& was = before.graph();
  if (now.sparse_initializer_size() > 0 || was.sparse_initializer_size() > 0) return std::nullopt;
  InterfaceChanges changes;
  if (!FindInterfaceChanges(now, was, inferred.declared_value_infos, changes)) return std::nullopt;
  std::unordered_map<std::string_view, int> constants;
  // When most of the graph changed, the whole is checked: it costs no more (and the search stops there).
  const size_t most = static_cast<size_t>(now.node_size()) / 2 + 16;
  std::optional<std::vector<int>> nodes = FindRegionNodes(now, was, changes, constants, most);
  if (!nodes) return std::nullopt;

  BodyValues values_in_bodies;
  const std::vector<const onnx::NodeProto*> region_nodes =
      RegionNodes(now, inferred, *nodes, changes, arena, values_in_bodies);
  RegionValues values = ValuesOf(region_nodes, changes);
  values.defined.insert(values_in_bodies.defined.begin(), values_in_bodies.defined.end());
  values.constant_outputs.insert(values_in_bodies.constant_outputs.begin(), values_in_bodies.constant_outputs.end());
  // Subgraphs that hold more than the main graph (a model inside a Loop) are as cheap to check whole.
  if (values.inner_nodes > now.node_size() || InnerNamesClash(now, values.inner_names)) return std::nullopt;
  for (const auto* output : changes.outputs) {
    if (!values.defined.count(output->name()) && !changes.changed.count(output->name())) return std::nullopt;
  }
  // Constant nodes the region reads come along (their values are data that inference reads).
  std::vector<int> constant_nodes;
  std::vector<std::string_view> boundary;
  for (std::string_view name : values.reads) {
    auto constant = constants.find(name);
    if (constant != constants.end()) {
      constant_nodes.push_back(constant->second);
    } else {
      boundary.push_back(name);
    }
  }
  const InputTypes in = TypesInInput(was, values, arena);

  ChangedRegion region;
  region.changed_nodes = static_cast<int>(nodes->size());
  region.model = google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
  onnx::ModelProto& model = *region.model;
  model.set_ir_version(rewritten.ir_version());
  *model.mutable_opset_import() = rewritten.opset_import();
  *model.mutable_metadata_props() = rewritten.metadata_props();
  onnx::GraphProto& graph = *model.mutable_graph();
  graph.set_name(now.name());
  for (const auto* input : changes.inputs) *graph.add_input() = *input;
  for (const auto* tensor : changes.initializers) *graph.add_initializer() = *tensor;
  if (!AddBoundary(now, boundary, in, graph)) return std::nullopt;
  for (int n : constant_nodes) *graph.add_node() = now.node(n);
  for (const onnx::NodeProto* node : region_nodes) *graph.add_node() = *node;
  for (const auto* output : changes.outputs) *graph.add_output() = *output;
  for (const auto& info : now.value_info()) {
    if (values.defined.count(info.name())) *graph.add_value_info() = info;
  }
  for (std::string_view name : in.existed) {
    // Inference reads a Constant node's value (the shape a Reshape after it takes, say): one the input
    // had, now given by a changed node, could change what nodes outside the region infer.
    if (values.constant_outputs.count(name)) return std::nullopt;
    auto type = in.types.find(name);
    region.kept.emplace_back(std::string(name), type == in.types.end() ? nullptr : type->second);
  }
  return region;
}

}  // namespace rnnstate
