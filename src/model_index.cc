#include "rnnstate/model_index.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include "rnnstate/proto_access.h"

namespace rnnstate {

namespace {

const std::vector<Consumer> kNoConsumers;

/// Copies `src` into `dst` without initializer payloads, recursing into subgraph attributes, so that
/// shape inference never costs a copy of the weights.
void CopyGraphStructure(const onnx::GraphProto& src, onnx::GraphProto* dst) {
  dst->Clear();
  dst->set_name(src.name());
  *dst->mutable_node() = src.node();
  *dst->mutable_input() = src.input();
  *dst->mutable_output() = src.output();
  *dst->mutable_value_info() = src.value_info();
  for (const auto& tensor : src.initializer()) {
    onnx::TensorProto* copy = dst->add_initializer();
    copy->set_name(tensor.name());
    copy->set_data_type(tensor.data_type());
    *copy->mutable_dims() = tensor.dims();
  }
}

/// Removes initializer payloads from every subgraph of `graph` (the top level was copied without them).
void StripSubgraphPayloads(onnx::GraphProto* graph) {
  for (auto& node : *graph->mutable_node()) {
    for (auto& attribute : *node.mutable_attribute()) {
      if (attribute.has_g()) {
        onnx::GraphProto stripped;
        CopyGraphStructure(attribute.g(), &stripped);
        *attribute.mutable_g() = std::move(stripped);
        StripSubgraphPayloads(attribute.mutable_g());
      }
      for (auto& sub : *attribute.mutable_graphs()) {
        onnx::GraphProto stripped;
        CopyGraphStructure(sub, &stripped);
        sub = std::move(stripped);
        StripSubgraphPayloads(&sub);
      }
    }
  }
}

void CollectDimParams(const onnx::TypeProto& type, std::set<std::string>& out) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return;
  for (const auto& dim : type.tensor_type().shape().dim()) {
    if (dim.has_dim_param()) out.insert(dim.dim_param());
  }
}

void IndexGraph(const onnx::GraphProto& graph, GraphIndex& index, google::protobuf::Arena& arena) {
  for (int i = 0; i < graph.initializer_size(); ++i) {
    index.initializers[graph.initializer(i).name()] = i;
    index.producers[graph.initializer(i).name()] = Producer{Producer::Kind::kInitializer, i, -1};
  }
  for (int i = 0; i < graph.input_size(); ++i) {
    const std::string& name = graph.input(i).name();
    index.inputs[name] = i;
    bool defaulted = index.initializers.count(name) > 0;
    index.producers[name] = Producer{defaulted ? Producer::Kind::kDefaultedInput : Producer::Kind::kGraphInput, i, -1};
  }
  for (int n = 0; n < graph.node_size(); ++n) {
    const auto& node = graph.node(n);
    for (int s = 0; s < node.output_size(); ++s) {
      if (!node.output(s).empty()) index.producers[node.output(s)] = Producer{Producer::Kind::kNode, n, s};
    }
    for (int s = 0; s < node.input_size(); ++s) {
      if (!node.input(s).empty()) index.consumers[node.input(s)].push_back(Consumer{n, s});
    }
    std::set<std::string> outer = SubgraphReferences(node);
    for (const auto& name : outer) index.consumers[name].push_back(Consumer{n, -1});
    if (!outer.empty()) index.outer_references[n] = std::move(outer);
  }
  for (int i = 0; i < graph.output_size(); ++i) index.outputs[graph.output(i).name()] = i;

  // Declared types first, then inferred ones where nothing was declared.
  auto add_type = [&](const onnx::ValueInfoProto& info) {
    if (info.has_type()) index.types.emplace(info.name(), &info.type());
  };
  for (const auto& info : graph.input()) add_type(info);
  for (const auto& info : graph.output()) add_type(info);
  for (const auto& info : graph.value_info()) add_type(info);
  for (const auto& tensor : graph.initializer()) {
    if (index.types.count(tensor.name())) continue;
    auto* type = google::protobuf::Arena::CreateMessage<onnx::TypeProto>(&arena);
    type->mutable_tensor_type()->set_elem_type(tensor.data_type());
    auto* shape = type->mutable_tensor_type()->mutable_shape();
    for (auto dim : tensor.dims()) shape->add_dim()->set_dim_value(dim);
    index.types.emplace(tensor.name(), type);
  }
}

}  // namespace

Producer GraphIndex::ProducerOf(const std::string& name) const {
  auto it = producers.find(name);
  return it == producers.end() ? Producer{} : it->second;
}

const std::vector<Consumer>& GraphIndex::ConsumersOf(const std::string& name) const {
  auto it = consumers.find(name);
  return it == consumers.end() ? kNoConsumers : it->second;
}

const onnx::TypeProto* GraphIndex::TypeOf(const std::string& name) const {
  auto it = types.find(name);
  return it == types.end() ? nullptr : it->second;
}

/// The first node (at any depth) of the default domain that lacks an attribute its schema requires, or
/// has one of the wrong type. onnx's shape inference dereferences such attributes unchecked (a Scan
/// without num_scan_inputs crashes it), so it is not run on such a model.
std::string MalformedAttributes(const onnx::GraphProto& graph, int64_t opset) {
  for (const auto& node : graph.node()) {
    if (IsOnnxDomain(node.domain())) {
      if (const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset), "")) {
        for (const auto& [name, spec] : schema->attributes()) {
          const onnx::AttributeProto* found = FindAttribute(node, name);
          if (found == nullptr && spec.required) return node.op_type() + " lacks its required attribute '" + name + "'";
          if (found != nullptr && found->type() != spec.type) {
            return node.op_type() + " has attribute '" + name + "' of the wrong type";
          }
        }
      }
    }
    for (const auto& attribute : node.attribute()) {
      if (attribute.has_g()) {
        if (std::string problem = MalformedAttributes(attribute.g(), opset); !problem.empty()) return problem;
      }
      for (const auto& sub : attribute.graphs()) {
        if (std::string problem = MalformedAttributes(sub, opset); !problem.empty()) return problem;
      }
    }
  }
  return "";
}

onnx::ModelProto* StructuralCopy(const onnx::ModelProto& model, google::protobuf::Arena& arena) {
  auto* copy = google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
  // Everything shape inference reads, and the graph without initializer payloads.
  *copy->mutable_opset_import() = model.opset_import();
  copy->set_ir_version(model.ir_version());
  *copy->mutable_functions() = model.functions();
  CopyGraphStructure(model.graph(), copy->mutable_graph());
  StripSubgraphPayloads(copy->mutable_graph());
  return copy;
}

ModelIndex::ModelIndex(const onnx::ModelProto& model)
    : model_(&model), arena_(std::make_unique<google::protobuf::Arena>()) {
  for (const auto& opset : model.opset_import()) {
    if (IsOnnxDomain(opset.domain())) onnx_opset_ = opset.version();
  }

  onnx::ModelProto& inferred = *StructuralCopy(model, *arena_);
  inference_error_ = MalformedAttributes(model.graph(), onnx_opset_);
  if (inference_error_.empty()) {
    try {
      onnx::ShapeInferenceOptions options(/*check_type=*/false, /*strict_mode=*/0, /*data_prop=*/false);
      onnx::shape_inference::InferShapes(inferred, onnx::OpSchemaRegistry::Instance(), options);
    } catch (const std::exception& e) {
      inference_error_ = e.what();
    }
  }

  GraphPath root;
  std::vector<GraphPath> stack;
  ForEachGraph(inferred.graph(), root, [&](const GraphPath& path, const onnx::GraphProto& graph) {
    GraphIndex& index = graphs_[path];
    index.path = path;
    if (!path.empty()) index.parent = GraphPath(path.begin(), path.end() - 1);
    IndexGraph(graph, index, *arena_);
    if (!graph.name().empty()) used_names_.insert(graph.name());
    for (const auto& [name, producer] : index.producers) used_names_.insert(name);
    for (const auto& [name, uses] : index.consumers) used_names_.insert(name);
    for (const auto& info : graph.value_info()) used_names_.insert(info.name());
    for (const auto& info : graph.output()) used_names_.insert(info.name());
    for (const auto& node : graph.node()) {
      if (!node.name().empty()) used_names_.insert(node.name());
    }
    for (const auto& [name, type] : index.types) CollectDimParams(*type, used_dim_params_);
  });
}

}  // namespace rnnstate

namespace rnnstate {

ResolvedName ModelIndex::Resolve(const GraphPath& path, const std::string& name) const {
  GraphPath current = path;
  while (true) {
    const GraphIndex& index = graph(current);
    Producer producer = index.ProducerOf(name);
    if (producer.kind != Producer::Kind::kOuterScope || current.empty()) return ResolvedName{current, producer};
    current.pop_back();
  }
}

const onnx::TypeProto* ModelIndex::TypeOf(const GraphPath& path, const std::string& name) const {
  GraphPath current = path;
  while (true) {
    if (const onnx::TypeProto* type = graph(current).TypeOf(name)) return type;
    if (current.empty()) return nullptr;
    current.pop_back();
  }
}

}  // namespace rnnstate
