#include "node_builder.h"

#include "graph_path.h"
#include "model_index.h"
#include "proto_access.h"
#include "rnnstate/error.h"

namespace rnnstate {

namespace {

void AddTypeNames(const onnx::TypeProto& type, std::set<std::string>& out) {
  if (type.has_tensor_type()) {
    for (const auto& dim : type.tensor_type().shape().dim()) {
      if (dim.has_dim_param()) out.insert(dim.dim_param());
    }
  } else if (type.has_sequence_type()) {
    AddTypeNames(type.sequence_type().elem_type(), out);
  } else if (type.has_optional_type()) {
    AddTypeNames(type.optional_type().elem_type(), out);
  }
}

template <typename Visit>
void ForEachValueInfo(const onnx::GraphProto& graph, Visit&& visit) {
  for (const auto& v : graph.input()) visit(v);
  for (const auto& v : graph.output()) visit(v);
  for (const auto& v : graph.value_info()) visit(v);
}

}  // namespace

std::set<std::string> ModelDimParams(const onnx::ModelProto& model) {
  std::set<std::string> params;
  GraphPath path;
  ForEachGraph(model.graph(), path, [&](const GraphPath&, const onnx::GraphProto& graph) {
    ForEachValueInfo(graph, [&](const onnx::ValueInfoProto& v) { AddTypeNames(v.type(), params); });
  });
  return params;
}

std::set<std::string> ModelNodeNames(const onnx::ModelProto& model) {
  std::set<std::string> names;
  GraphPath path;
  ForEachGraph(model.graph(), path, [&](const GraphPath&, const onnx::GraphProto& graph) {
    for (const auto& node : graph.node()) names.insert(node.name());
  });
  return names;
}

std::set<std::string> ModelNames(const onnx::ModelProto& model) {
  std::set<std::string> names = ModelDimParams(model);
  GraphPath path;
  ForEachGraph(model.graph(), path, [&](const GraphPath&, const onnx::GraphProto& graph) {
    names.insert(graph.name());
    ForEachValueInfo(graph, [&](const onnx::ValueInfoProto& v) { names.insert(v.name()); });
    for (const auto& tensor : graph.initializer()) names.insert(tensor.name());
    for (const auto& node : graph.node()) {
      names.insert(node.name());
      names.insert(node.input().begin(), node.input().end());
      names.insert(node.output().begin(), node.output().end());
    }
  });
  names.erase("");
  return names;
}

int64_t OnnxOpset(const onnx::ModelProto& model) {
  int64_t opset = 0;
  for (const auto& import : model.opset_import()) {
    if (IsOnnxDomain(import.domain())) opset = import.version();
  }
  return opset;
}

onnx::ValueInfoProto TensorInfo(const std::string& name, int32_t elem_type, const std::vector<MetaDim>& shape) {
  onnx::ValueInfoProto info;
  info.set_name(name);
  auto* tensor = info.mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  auto* proto_shape = tensor->mutable_shape();
  for (const MetaDim& d : shape) {
    auto* dim = proto_shape->add_dim();
    if (d.value >= 0)
      dim->set_dim_value(d.value);
    else if (!d.symbol.empty())
      dim->set_dim_param(d.symbol);
  }
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

onnx::TensorProto ZeroTensorOf(const std::string& name, int32_t elem_type, const std::vector<int64_t>& dims) {
  const std::optional<uint64_t> bytes = DenseTensorBytes(elem_type, dims);
  if (!bytes)
    throw Error(ExitCode::kUnsupported,
                "'" + name + "': a state of element type " + std::to_string(elem_type) + " cannot be packed");
  onnx::TensorProto tensor;
  tensor.set_name(name);
  tensor.set_data_type(elem_type);
  for (int64_t d : dims) tensor.add_dims(d);
  tensor.set_raw_data(std::string(*bytes, '\0'));
  return tensor;
}

onnx::NodeProto& NodeBuilder::Add(const std::string& op, std::vector<std::string> inputs,
                                  std::vector<std::string> outputs) {
  onnx::NodeProto& node = nodes_.emplace_back();
  node.set_op_type(op);
  node.set_name(node_names_.Allocate(outputs.front()));
  for (auto& input : inputs) node.add_input(std::move(input));
  for (auto& output : outputs) node.add_output(std::move(output));
  return node;
}

void NodeBuilder::Int64Constant(const std::string& output, const std::vector<int64_t>& values, bool scalar) {
  onnx::TensorProto tensor;
  tensor.set_data_type(onnx::TensorProto::INT64);
  if (!scalar) tensor.add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) tensor.add_int64_data(v);
  TensorConstant(output, std::move(tensor));
}

void NodeBuilder::TensorConstant(const std::string& output, onnx::TensorProto value) {
  onnx::NodeProto& node = Add("Constant", {}, {output});
  auto* attribute = node.add_attribute();
  attribute->set_name("value");
  attribute->set_type(onnx::AttributeProto::TENSOR);
  value.clear_name();
  *attribute->mutable_t() = std::move(value);
}

void NodeBuilder::AddAxes(onnx::NodeProto& node, const std::string& stem, const std::vector<int64_t>& axes) {
  if (opset_ < 13) {
    SetIntsAttribute(node, "axes", axes);
    return;
  }
  const std::string name = Name(stem + ".axes");
  node.add_input(name);
  // The Constant must come before its reader: move the reader behind it.
  onnx::NodeProto reader = std::move(node);
  nodes_.pop_back();
  Int64Constant(name, axes);
  nodes_.push_back(std::move(reader));
}

void NodeBuilder::Squeeze(const std::string& input, const std::vector<int64_t>& axes, const std::string& output) {
  AddAxes(Add("Squeeze", {input}, {output}), output, axes);
}

void NodeBuilder::Unsqueeze(const std::string& input, const std::vector<int64_t>& axes, const std::string& output) {
  AddAxes(Add("Unsqueeze", {input}, {output}), output, axes);
}

void NodeBuilder::Split(const std::string& input, int64_t axis, const std::vector<int64_t>& sizes,
                        const std::vector<std::string>& outputs) {
  std::string sizes_name;
  if (opset_ >= 13) {
    sizes_name = Name(outputs.front() + ".sizes");
    Int64Constant(sizes_name, sizes);
  }
  onnx::NodeProto& node = Add("Split", {input}, outputs);
  SetIntAttribute(node, "axis", axis);
  if (opset_ >= 13)
    node.add_input(sizes_name);
  else
    SetIntsAttribute(node, "split", sizes);
}

void NodeBuilder::Reshape(const std::string& input, const std::vector<int64_t>& shape, const std::string& output) {
  const std::string shape_name = Name(output + ".shape");
  Int64Constant(shape_name, shape);
  Add("Reshape", {input, shape_name}, {output});
}

void NodeBuilder::Transpose(const std::string& input, const std::vector<int64_t>& perm, const std::string& output) {
  SetIntsAttribute(Add("Transpose", {input}, {output}), "perm", perm);
}

void NodeBuilder::Concat(const std::vector<std::string>& inputs, int64_t axis, const std::string& output) {
  SetIntAttribute(Add("Concat", inputs, {output}), "axis", axis);
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

namespace {

/// Renames reads in `graph`; a subgraph's outputs that are the outer name itself are reads too.
void RenameReads(onnx::GraphProto& graph, const std::string& from, const std::string& to, bool subgraph) {
  for (auto& node : *graph.mutable_node()) {
    for (auto& input : *node.mutable_input()) {
      if (input == from) input = to;
    }
    for (auto& attribute : *node.mutable_attribute()) {
      if (attribute.has_g()) RenameReads(*attribute.mutable_g(), from, to, true);
      for (auto& sub : *attribute.mutable_graphs()) RenameReads(sub, from, to, true);
    }
  }
  if (!subgraph) return;
  for (auto& output : *graph.mutable_output()) {
    if (output.name() == from) output.set_name(to);
  }
}

}  // namespace

void RenameReadsEverywhere(onnx::GraphProto& graph, const std::string& from, const std::string& to) {
  RenameReads(graph, from, to, false);
}

namespace {

template <typename Field>
void RemoveNamed(Field* field, const std::string& name) {
  for (int i = field->size() - 1; i >= 0; --i) {
    if (field->Get(i).name() == name) field->DeleteSubrange(i, 1);
  }
}

}  // namespace

void RemoveGraphInput(onnx::GraphProto& graph, const std::string& name) { RemoveNamed(graph.mutable_input(), name); }
void RemoveGraphOutput(onnx::GraphProto& graph, const std::string& name) { RemoveNamed(graph.mutable_output(), name); }
void RemoveInitializerNamed(onnx::GraphProto& graph, const std::string& name) {
  RemoveNamed(graph.mutable_initializer(), name);
}

onnx::TensorProto* FindInitializerNamed(onnx::GraphProto& graph, const std::string& name) {
  for (auto& tensor : *graph.mutable_initializer()) {
    if (tensor.name() == name) return &tensor;
  }
  return nullptr;
}

void SurroundNodes(onnx::GraphProto& graph, std::vector<onnx::NodeProto> before, std::vector<onnx::NodeProto> after) {
  auto* nodes = graph.mutable_node();
  std::vector<onnx::NodeProto*> old(nodes->size());
  for (int i = nodes->size() - 1; i >= 0; --i) old[i] = nodes->ReleaseLast();
  for (auto& node : before) *nodes->Add() = std::move(node);
  for (onnx::NodeProto* node : old) nodes->AddAllocated(node);
  for (auto& node : after) *nodes->Add() = std::move(node);
}

}  // namespace rnnstate
