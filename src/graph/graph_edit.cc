#include "graph/graph_edit.h"

#include <functional>
#include <set>
#include <optional>
#include <utility>

#include "graph/proto_access.h"
#include "rnnstate/error.h"

namespace rnnstate {

onnx::NodeProto MakeNode(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs) {
  onnx::NodeProto node;
  node.set_op_type(op);
  if (!outputs.empty()) node.set_name(outputs.front());
  for (auto& input : inputs) node.add_input(std::move(input));
  for (auto& output : outputs) node.add_output(std::move(output));
  return node;
}

onnx::NodeProto TensorConstantNode(const std::string& output, onnx::TensorProto value) {
  onnx::NodeProto node = MakeNode("Constant", {}, {output});
  auto* attribute = node.add_attribute();
  attribute->set_name("value");
  attribute->set_type(onnx::AttributeProto::TENSOR);
  value.clear_name();
  *attribute->mutable_t() = std::move(value);
  return node;
}

onnx::TensorProto Int64Tensor(const std::string& name, const std::vector<int64_t>& values, bool scalar) {
  onnx::TensorProto tensor;
  tensor.set_name(name);
  tensor.set_data_type(onnx::TensorProto::INT64);
  if (!scalar) tensor.add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) tensor.add_int64_data(v);
  return tensor;
}

onnx::NodeProto Int64ConstantNode(const std::string& output, const std::vector<int64_t>& values, bool scalar) {
  return TensorConstantNode(output, Int64Tensor("", values, scalar));
}

void SetIntAttribute(onnx::NodeProto& node, const std::string& name, int64_t value) {
  auto* attribute = node.add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INT);
  attribute->set_i(value);
}

void SetIntsAttribute(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& values) {
  auto* attribute = node.add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) attribute->add_ints(v);
}

void SetGraphAttribute(onnx::NodeProto& node, const std::string& name, onnx::GraphProto graph) {
  auto* attribute = node.add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::GRAPH);
  *attribute->mutable_g() = std::move(graph);
}

onnx::TensorProto ZeroTensor(const std::string& name, int32_t elem_type, const std::vector<int64_t>& dims) {
  const std::optional<uint64_t> bytes = DenseTensorBytes(elem_type, dims);
  if (!bytes) {
    throw Error(ExitCode::kUnsupported,
                "'" + name + "': zeros of element type " + DataTypeName(elem_type) + " are not supported");
  }
  onnx::TensorProto tensor;
  tensor.set_name(name);
  tensor.set_data_type(elem_type);
  for (int64_t d : dims) tensor.add_dims(d);
  tensor.set_raw_data(std::string(*bytes, '\0'));
  return tensor;
}

namespace {

void SetTensorInfoOf(onnx::ValueInfoProto& info, const std::string& name, int32_t elem_type, size_t rank,
                     const std::function<void(size_t, onnx::TensorShapeProto_Dimension&)>& set_dim) {
  std::string kept_name = name;  // `name` may be `info`'s own, which Clear empties
  info.Clear();
  info.set_name(std::move(kept_name));
  auto* tensor = info.mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  auto* shape = tensor->mutable_shape();
  for (size_t i = 0; i < rank; ++i) set_dim(i, *shape->add_dim());
}

}  // namespace

void SetTensorInfo(onnx::ValueInfoProto& info, const std::string& name, int32_t elem_type,
                   const std::vector<Dim>& shape) {
  SetTensorInfoOf(info, name, elem_type, shape.size(), [&](size_t i, onnx::TensorShapeProto_Dimension& dim) {
    if (shape[i].fixed())
      dim.set_dim_value(shape[i].value);
    else if (!shape[i].param.empty())
      dim.set_dim_param(shape[i].param);
  });
}

void SetTensorInfo(onnx::ValueInfoProto& info, const std::string& name, int32_t elem_type,
                   const std::vector<MetaDim>& shape) {
  SetTensorInfoOf(info, name, elem_type, shape.size(), [&](size_t i, onnx::TensorShapeProto_Dimension& dim) {
    if (shape[i].value >= 0)
      dim.set_dim_value(shape[i].value);
    else if (!shape[i].symbol.empty())
      dim.set_dim_param(shape[i].symbol);
  });
}

onnx::ValueInfoProto TensorInfo(const std::string& name, int32_t elem_type, const std::vector<Dim>& shape) {
  onnx::ValueInfoProto info;
  SetTensorInfo(info, name, elem_type, shape);
  return info;
}

onnx::ValueInfoProto TensorInfo(const std::string& name, int32_t elem_type, const std::vector<MetaDim>& shape) {
  onnx::ValueInfoProto info;
  SetTensorInfo(info, name, elem_type, shape);
  return info;
}

onnx::ValueInfoProto SequenceInfo(const std::string& name, int32_t elem_type) {
  onnx::ValueInfoProto info;
  info.set_name(name);
  info.mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(elem_type);
  return info;
}

onnx::ValueInfoProto RankOnlyInfo(const std::string& name, int32_t elem_type, size_t rank) {
  return TensorInfo(name, elem_type, std::vector<MetaDim>(rank));
}

namespace {

void RenameReadsIn(onnx::GraphProto& graph, const std::string& from, const std::string& to, bool subgraph);

void RenameReadsOf(onnx::NodeProto& node, const std::string& from, const std::string& to) {
  for (auto& input : *node.mutable_input()) {
    if (input == from) input = to;
  }
  for (auto& attribute : *node.mutable_attribute()) {
    if (attribute.has_g()) RenameReadsIn(*attribute.mutable_g(), from, to, true);
    for (auto& sub : *attribute.mutable_graphs()) RenameReadsIn(sub, from, to, true);
  }
}

void RenameReadsIn(onnx::GraphProto& graph, const std::string& from, const std::string& to, bool subgraph) {
  for (auto& node : *graph.mutable_node()) RenameReadsOf(node, from, to);
  if (!subgraph) return;
  for (auto& output : *graph.mutable_output()) {
    if (output.name() == from) output.set_name(to);
  }
}

template <typename Field>
void RemoveNamed(Field* field, const std::string& name) {
  for (int i = field->size() - 1; i >= 0; --i) {
    if (field->Get(i).name() == name) field->DeleteSubrange(i, 1);
  }
}

}  // namespace

void RenameReads(onnx::GraphProto& graph, const std::string& from, const std::string& to) {
  RenameReadsIn(graph, from, to, /*subgraph=*/false);
}

void RenameNodeReads(onnx::NodeProto& node, const std::string& from, const std::string& to) {
  RenameReadsOf(node, from, to);
}

void RemoveGraphInput(onnx::GraphProto& graph, const std::string& name) { RemoveNamed(graph.mutable_input(), name); }
void RemoveGraphOutput(onnx::GraphProto& graph, const std::string& name) { RemoveNamed(graph.mutable_output(), name); }
void RemoveInitializer(onnx::GraphProto& graph, const std::string& name) {
  RemoveNamed(graph.mutable_initializer(), name);
}

const onnx::TensorProto* FindInitializer(const onnx::GraphProto& graph, const std::string& name) {
  for (const auto& tensor : graph.initializer()) {
    if (tensor.name() == name) return &tensor;
  }
  return nullptr;
}

onnx::TensorProto* FindInitializer(onnx::GraphProto& graph, const std::string& name) {
  return const_cast<onnx::TensorProto*>(FindInitializer(std::as_const(graph), name));
}

bool HasGraphOutput(const onnx::GraphProto& graph, const std::string& name) {
  for (const auto& output : graph.output()) {
    if (output.name() == name) return true;
  }
  return false;
}

std::vector<onnx::NodeProto*> ReleaseNodes(onnx::GraphProto& graph) {
  auto* nodes = graph.mutable_node();
  std::vector<onnx::NodeProto*> released(nodes->size());
  for (int i = nodes->size() - 1; i >= 0; --i) released[i] = nodes->UnsafeArenaReleaseLast();
  return released;
}

void SurroundNodes(onnx::GraphProto& graph, std::vector<onnx::NodeProto> before, std::vector<onnx::NodeProto> after) {
  if (before.empty() && after.empty()) return;
  const std::vector<onnx::NodeProto*> old = ReleaseNodes(graph);
  auto* nodes = graph.mutable_node();
  for (auto& node : before) *nodes->Add() = std::move(node);
  for (onnx::NodeProto* node : old) nodes->UnsafeArenaAddAllocated(node);
  for (auto& node : after) *nodes->Add() = std::move(node);
}

void InsertNodesBefore(onnx::GraphProto& graph, std::map<int, std::vector<onnx::NodeProto>> before) {
  if (before.empty()) return;
  const std::vector<onnx::NodeProto*> old = ReleaseNodes(graph);
  auto* nodes = graph.mutable_node();
  auto add_before = [&](int k) {
    auto found = before.find(k);
    if (found == before.end()) return;
    for (auto& node : found->second) *nodes->Add() = std::move(node);
  };
  for (size_t k = 0; k < old.size(); ++k) {
    add_before(static_cast<int>(k));
    nodes->UnsafeArenaAddAllocated(old[k]);
  }
  add_before(static_cast<int>(old.size()));
}

void RaiseIrForUndeclaredInitializers(onnx::ModelProto& model) {
  if (model.ir_version() >= 4) return;
  const onnx::GraphProto& main = model.graph();
  std::set<std::string> declared;
  for (const auto& input : main.input()) declared.insert(input.name());
  for (const auto& tensor : main.initializer()) {
    if (!declared.count(tensor.name())) {
      model.set_ir_version(4);
      return;
    }
  }
}

}  // namespace rnnstate
