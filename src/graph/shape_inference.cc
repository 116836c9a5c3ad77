#include "graph/shape_inference.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <string>
#include <unordered_map>
#include <vector>

#include "graph/contrib_schemas.h"
#include "graph/proto_access.h"

namespace rnnstate {

namespace {

/// Adds `tensor` to `dst`'s initializers: whole when small, else only its name, type and dims.
void AddInitializerStructure(const onnx::TensorProto& tensor, onnx::GraphProto* dst) {
  if (CopiedWhole(tensor)) {
    *dst->add_initializer() = tensor;
    return;
  }
  onnx::TensorProto* copy = dst->add_initializer();
  copy->set_name(tensor.name());
  copy->set_data_type(tensor.data_type());
  *copy->mutable_dims() = tensor.dims();
}

/// Copies `src` into `dst` without the payloads of large initializers, so that shape inference never
/// costs a copy of the weights. Its nodes are copied whole (their subgraphs are stripped afterwards).
void CopyGraphStructure(const onnx::GraphProto& src, onnx::GraphProto* dst) {
  dst->Clear();
  dst->set_name(src.name());
  *dst->mutable_node() = src.node();
  *dst->mutable_input() = src.input();
  *dst->mutable_output() = src.output();
  *dst->mutable_value_info() = src.value_info();
  for (const auto& tensor : src.initializer()) AddInitializerStructure(tensor, dst);
}

/// Makes `graph`, a subgraph in the copy, what CopyGraphStructure makes of it, in place: its nodes,
/// inputs, outputs and value infos are moved (a swap on one arena), not copied again — copying each
/// level's subtree again cost the copy time and memory quadratic in the nesting depth.
void StripGraph(onnx::GraphProto* graph) {
  auto* kept = google::protobuf::Arena::CreateMessage<onnx::GraphProto>(graph->GetArena());
  kept->set_name(graph->name());
  kept->mutable_node()->Swap(graph->mutable_node());
  kept->mutable_input()->Swap(graph->mutable_input());
  kept->mutable_output()->Swap(graph->mutable_output());
  kept->mutable_value_info()->Swap(graph->mutable_value_info());
  for (const auto& tensor : graph->initializer()) AddInitializerStructure(tensor, kept);
  graph->Swap(kept);
  if (kept->GetArena() == nullptr) delete kept;
}

/// Calls `visit` with every subgraph of `graph`, at any depth, each before the subgraphs in it (which it may
/// replace: they are reached through it afterwards).
template <typename Visit>
void ForEachSubgraph(onnx::GraphProto& graph, const Visit& visit) {
  for (auto& node : *graph.mutable_node()) {
    for (auto& attribute : *node.mutable_attribute()) {
      if (attribute.has_g()) {
        visit(*attribute.mutable_g());
        ForEachSubgraph(*attribute.mutable_g(), visit);
      }
      for (auto& sub : *attribute.mutable_graphs()) {
        visit(sub);
        ForEachSubgraph(sub, visit);
      }
    }
  }
}

/// Removes initializer payloads from every subgraph of `graph` (the top level was copied without them).
void StripSubgraphPayloads(onnx::GraphProto* graph) {
  ForEachSubgraph(*graph, [](onnx::GraphProto& sub) { StripGraph(&sub); });
}

/// The first node (at any depth) of the default domain that lacks an attribute its schema requires, or
/// has one of the wrong type. onnx's shape inference dereferences such attributes unchecked (a Scan
/// without num_scan_inputs crashes it), so it is not run on such a model.
std::string MalformedAttributes(const onnx::GraphProto& graph, int64_t opset) {
  for (const auto& node : graph.node()) {
    if (IsOnnxDomain(node.domain())) {
      if (const onnx::OpSchema* schema = OnnxSchemaAt(node.op_type(), opset)) {
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

}  // namespace

const onnx::OpSchema* OnnxSchemaAt(const std::string& op_type, int64_t opset) {
  thread_local std::unordered_map<int64_t, std::unordered_map<std::string, const onnx::OpSchema*>> by_opset;
  auto& schemas = by_opset[opset];
  auto [known, fresh] = schemas.try_emplace(op_type, nullptr);
  if (fresh) known->second = onnx::OpSchemaRegistry::Schema(op_type, static_cast<int>(opset), "");
  return known->second;
}

bool CopiedWhole(const onnx::TensorProto& tensor) {
  // Shape inference reads small constants (Slice bounds, Reshape targets, Squeeze axes given as
  // initializers); weights are never this small.
  constexpr size_t kSmallInitializerBytes = 1024;
  return tensor.ByteSizeLong() <= kSmallInitializerBytes && tensor.data_location() != onnx::TensorProto::EXTERNAL;
}

const onnx::TypeProto* InitializerType(const onnx::TensorProto& tensor, google::protobuf::Arena& arena) {
  auto* type = google::protobuf::Arena::CreateMessage<onnx::TypeProto>(&arena);
  type->mutable_tensor_type()->set_elem_type(tensor.data_type());
  auto* shape = type->mutable_tensor_type()->mutable_shape();
  for (auto dim : tensor.dims()) shape->add_dim()->set_dim_value(dim);
  return type;
}

google::protobuf::ArenaOptions StructuralCopyArenaOptions() {
  google::protobuf::ArenaOptions options;
  options.max_block_size = size_t{1} << 20;
  return options;
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

OwnedCopy MakeStructuralCopy(const onnx::ModelProto& model) {
  OwnedCopy copy{std::make_unique<google::protobuf::Arena>(StructuralCopyArenaOptions()), nullptr};
  copy.model = StructuralCopy(model, *copy.arena);
  return copy;
}

void BindKnownValues(onnx::ModelProto& copy, const std::vector<KnownValue>& known) {
  for (const KnownValue& value : known) {
    onnx::GraphProto* graph = ResolveGraph(copy, value.graph);
    if (graph == nullptr || value.node < 0 || value.node >= graph->node_size()) continue;
    onnx::NodeProto& node = *graph->mutable_node(value.node);
    if (node.output_size() != 1) continue;
    // The same output name, so every type inferred downstream is keyed as in the model.
    const std::string output = node.output(0);
    node.Clear();
    node.set_op_type("Constant");
    node.add_output(output);
    onnx::AttributeProto* attribute = node.add_attribute();
    attribute->set_name("value");
    attribute->set_type(onnx::AttributeProto::TENSOR);
    onnx::TensorProto* tensor = attribute->mutable_t();
    tensor->set_data_type(value.element_type);
    tensor->add_dims(static_cast<int64_t>(value.values.size()));
    for (int64_t v : value.values) {
      if (value.element_type == onnx::TensorProto::INT32) {
        tensor->add_int32_data(static_cast<int32_t>(v));
      } else {
        tensor->add_int64_data(v);
      }
    }
  }
}

std::string InferShapes(onnx::ModelProto& copy) {
  const int64_t opset = OnnxOpset(copy);
  if (std::string problem = MalformedAttributes(copy.graph(), opset); !problem.empty()) return problem;
  RegisterContribSchemas();
  // Data propagation at an opset newer than onnx knows reads nodes by older schemas: onnx 1.12's crashed
  // (a segmentation fault) on a PyTorch export raised to opset 18 whose Pads list their axes
  // (models/opset18/sfe_conv_gru_axes.onnx). Shapes are still inferred, without values computed from them.
  const int newest = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at(onnx::ONNX_DOMAIN).second;
  try {
    onnx::ShapeInferenceOptions options(/*check_type=*/false, /*strict_mode=*/0, /*data_prop=*/opset <= newest);
    onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

namespace {

/// What onnx's inference may write in one graph: its inputs, outputs and value infos, as they were.
struct SavedInterface {
  onnx::GraphProto* graph = nullptr;
  onnx::GraphProto* saved = nullptr;  ///< on the graph's arena, so that the fields swap back, not copy
};

/// Saves the interface of `graph` and of every subgraph in it into `saved`.
void SaveInterfaces(onnx::GraphProto& graph, std::vector<SavedInterface>& saved) {
  const auto save = [&saved](onnx::GraphProto& one) {
    auto* copy = google::protobuf::Arena::CreateMessage<onnx::GraphProto>(one.GetArena());
    *copy->mutable_input() = one.input();
    *copy->mutable_output() = one.output();
    *copy->mutable_value_info() = one.value_info();
    saved.push_back(SavedInterface{&one, copy});
  };
  save(graph);
  ForEachSubgraph(graph, save);
}

/// Puts back what SaveInterfaces saved (inference adds and removes no node or attribute: the graphs are
/// where they were).
void RestoreInterfaces(std::vector<SavedInterface>& saved) {
  for (SavedInterface& interface : saved) {
    interface.graph->mutable_input()->Swap(interface.saved->mutable_input());
    interface.graph->mutable_output()->Swap(interface.saved->mutable_output());
    interface.graph->mutable_value_info()->Swap(interface.saved->mutable_value_info());
    if (interface.saved->GetArena() == nullptr) delete interface.saved;
  }
  saved.clear();
}

}  // namespace

std::string InferShapesInPlace(onnx::ModelProto& model) {
  std::vector<SavedInterface> saved;
  SaveInterfaces(*model.mutable_graph(), saved);
  std::string verdict;
  try {
    verdict = InferShapes(model);
  } catch (...) {
    RestoreInterfaces(saved);
    throw;
  }
  RestoreInterfaces(saved);
  return verdict;
}

}  // namespace rnnstate
