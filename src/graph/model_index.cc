#include "graph/model_index.h"

#include <future>
#include <stdexcept>

#include "graph/helper_thread.h"
#include "graph/proto_access.h"
#include "graph/shape_inference.h"

namespace rnnstate {

namespace {

const Consumers kNoConsumers;

/// How many value infos each subgraph below `main` declares, by its address (what inference appends comes
/// after them): validate/'s changed region compares a rewritten body's declarations with these.
std::shared_ptr<const std::unordered_map<const onnx::GraphProto*, int>> DeclaredInSubgraphs(
    const onnx::GraphProto& main) {
  auto declared = std::make_shared<std::unordered_map<const onnx::GraphProto*, int>>();
  GraphPath root;
  ForEachGraph(main, root, [&](const GraphPath& path, const onnx::GraphProto& graph) {
    if (!path.empty()) declared->emplace(&graph, graph.value_info_size());
  });
  return declared;
}

void CollectDimParams(const onnx::TypeProto& type, NameViews& out) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return;
  for (const auto& dim : type.tensor_type().shape().dim()) {
    if (dim.has_dim_param()) out.insert(dim.dim_param());
  }
}

/// The structure of `graph` into `index`: every value's producer and uses, the inputs, initializers and
/// outputs by name, and the names its subgraphs read from outer scopes. Reads `graph` only.
void IndexStructure(const onnx::GraphProto& graph, GraphIndex& index, OuterReferences& references) {
  // Room for about one value per initializer, input and node, made once rather than by rehashing.
  index.values.reserve(static_cast<size_t>(graph.initializer_size() + graph.input_size() + graph.node_size()));
  for (int i = 0; i < graph.initializer_size(); ++i) {
    index.initializers[graph.initializer(i).name()] = i;
    index.values[graph.initializer(i).name()].producer = Producer{Producer::Kind::kInitializer, i, -1};
  }
  for (int i = 0; i < graph.input_size(); ++i) {
    const std::string& name = graph.input(i).name();
    index.inputs[name] = i;
    bool defaulted = index.initializers.count(name) > 0;
    index.values[name].producer =
        Producer{defaulted ? Producer::Kind::kDefaultedInput : Producer::Kind::kGraphInput, i, -1};
  }
  for (int n = 0; n < graph.node_size(); ++n) {
    const auto& node = graph.node(n);
    for (int s = 0; s < node.output_size(); ++s) {
      if (!node.output(s).empty()) index.values[node.output(s)].producer = Producer{Producer::Kind::kNode, n, s};
    }
    for (int s = 0; s < node.input_size(); ++s) {
      if (!node.input(s).empty()) index.values[node.input(s)].consumers.push_back(Consumer{n, s});
    }
    std::set<std::string> outer = references.OfNode(node);
    if (outer.empty()) continue;
    // Kept first: the values are keyed by views of the names kept here.
    const std::set<std::string>& kept = index.outer_references[n] = std::move(outer);
    for (const auto& name : kept) index.values[name].consumers.push_back(Consumer{n, -1});
  }
  for (int i = 0; i < graph.output_size(); ++i) index.outputs[graph.output(i).name()] = i;
}

/// The types of `inferred` (the same graph after shape inference) into `index`: declared types first,
/// then inferred ones where nothing was declared, then the initializers' own. The dim_params of the
/// types taken go to `dim_params` (an initializer's type has none).
void AddTypes(const onnx::GraphProto& inferred, GraphIndex& index, google::protobuf::Arena& arena,
              NameViews& dim_params) {
  auto add_type = [&](const onnx::ValueInfoProto& info) {
    if (!info.has_type()) return;
    const onnx::TypeProto*& type = index.values[info.name()].type;
    if (type != nullptr) return;
    type = &info.type();
    CollectDimParams(*type, dim_params);
  };
  for (const auto& info : inferred.input()) add_type(info);
  for (const auto& info : inferred.output()) add_type(info);
  for (const auto& info : inferred.value_info()) add_type(info);
  for (const auto& tensor : inferred.initializer()) {
    const onnx::TypeProto*& known = index.values[tensor.name()].type;
    if (known == nullptr) known = InitializerType(tensor, arena);
  }
}

}  // namespace

Producer GraphIndex::ProducerOf(const std::string& name) const {
  auto it = values.find(name);
  return it == values.end() ? Producer{} : it->second.producer;
}

const Consumers& GraphIndex::ConsumersOf(const std::string& name) const {
  auto it = values.find(name);
  return it == values.end() ? kNoConsumers : it->second.consumers;
}

const onnx::TypeProto* GraphIndex::TypeOf(const std::string& name) const {
  auto it = values.find(name);
  return it == values.end() ? nullptr : it->second.type;
}

ModelIndex::ModelIndex(const onnx::ModelProto& model, OwnedCopy copy)
    : model_(&model),
      arena_(std::move(copy.arena)),
      inferred_(copy.model),
      memory_(std::make_unique<std::pmr::monotonic_buffer_resource>()),
      used_names_(memory_.get()),
      used_dim_params_(memory_.get()) {
  onnx_opset_ = OnnxOpset(model);

  // Producers, uses and names come from `model` itself, indexed on another thread while shape inference
  // runs on the copy (both only read `model`; a small model's on this thread, helper_thread.h); the types
  // are attached once inference is done.
  std::future<void> structure = StartBeside(model, [this, &model] {
    GraphPath root;
    OuterReferences references;  // each subgraph's free names, worked out once
    ForEachGraph(model.graph(), root, [&](const GraphPath& path, const onnx::GraphProto& graph) {
      GraphIndex& index = graphs_.try_emplace(path, memory_.get()).first->second;
      index.path = path;
      if (!path.empty()) {
        index.parent = GraphPath(path.begin(), path.end() - 1);
        index.parent_index = &graphs_.at(*index.parent);  // parents come first; map nodes do not move
      }
      index.proto = &graph;
      IndexStructure(graph, index, references);
      CollectNames(graph, index);
    });
  });
  onnx::ModelProto& inferred = *copy.model;
  declared_value_infos_ = inferred.graph().value_info_size();
  declared_in_subgraphs_ = DeclaredInSubgraphs(inferred.graph());
  inference_error_ = InferShapes(inferred);
  structure.get();
  by_path_.reserve(graphs_.size());
  for (auto& [path, index] : graphs_) {
    AddTypes(*ResolveGraph(inferred, path), index, *arena_, used_dim_params_);
    by_path_.emplace(path, &index);
  }
  main_ = by_path_.at(GraphPath{});
}

const GraphIndex& ModelIndex::graph(const GraphPath& path) const {
  if (path.empty()) return *main_;
  const auto found = by_path_.find(path);
  if (found == by_path_.end()) throw std::out_of_range("no graph at this path in the model");
  return *found->second;
}

void ModelIndex::CollectNames(const onnx::GraphProto& graph, const GraphIndex& index) {
  // The main graph's values are found in its map (UsesName): only the other names are copied here.
  const bool main = index.path.empty();
  if (!graph.name().empty()) used_names_.insert(graph.name());
  if (!main) {
    for (const auto& [name, value] : index.values) used_names_.insert(name);
  }
  auto named = [&](const std::string& name) {
    if (!main || !index.values.count(name)) used_names_.insert(name);
  };
  for (const auto& info : graph.value_info()) named(info.name());
  for (const auto& info : graph.output()) named(info.name());
  for (const auto& node : graph.node()) {
    if (!node.name().empty()) used_names_.insert(node.name());
  }
}

bool ModelIndex::UsesName(const std::string& name) const {
  return used_names_.count(name) > 0 || graph(GraphPath{}).values.count(name) > 0;
}

}  // namespace rnnstate

namespace rnnstate {

ResolvedName ModelIndex::Resolve(const GraphPath& path, const std::string& name) const {
  for (const GraphIndex* index = &graph(path);; index = index->parent_index) {
    const Producer producer = index->ProducerOf(name);
    if (producer.kind == Producer::Kind::kNode) {
      return ResolvedName{index->path, producer, &index->proto->node(producer.index), index};
    }
    if (producer.kind != Producer::Kind::kOuterScope || index->parent_index == nullptr) {
      return ResolvedName{index->path, producer, nullptr, index};
    }
  }
}

const onnx::TypeProto* ModelIndex::TypeOf(const GraphPath& path, const std::string& name) const {
  for (const GraphIndex* index = &graph(path); index != nullptr; index = index->parent_index) {
    if (const onnx::TypeProto* type = index->TypeOf(name)) return type;
  }
  return nullptr;
}

}  // namespace rnnstate
