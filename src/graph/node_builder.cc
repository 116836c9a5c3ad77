#include "graph/node_builder.h"

#include "graph/graph_edit.h"
#include "graph/graph_path.h"
#include "graph/model_index.h"
#include "graph/proto_access.h"
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

bool ConstantOfShapeTakes(int32_t elem_type, int64_t opset) {
  if (opset < 9) return false;
  switch (elem_type) {
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::FLOAT:
    case onnx::TensorProto::DOUBLE:
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::INT64:
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::UINT16:
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT64:
    case onnx::TensorProto::BOOL:
      return true;
    case onnx::TensorProto::BFLOAT16:
      return opset >= 20;
    default:
      return false;
  }
}

onnx::NodeProto& NodeBuilder::Add(const std::string& op, std::vector<std::string> inputs,
                                  std::vector<std::string> outputs) {
  Push(MakeNode(op, std::move(inputs), std::move(outputs)));
  return nodes_.back();
}

void NodeBuilder::Push(onnx::NodeProto node) {
  node.set_name(node_names_.Allocate(node.name()));
  nodes_.push_back(std::move(node));
}

void NodeBuilder::Int64Constant(const std::string& output, const std::vector<int64_t>& values, bool scalar) {
  Push(Int64ConstantNode(output, values, scalar));
}

void NodeBuilder::TensorConstant(const std::string& output, onnx::TensorProto value) {
  Push(TensorConstantNode(output, std::move(value)));
}

void NodeBuilder::ZerosOfShape(const std::string& shape, int32_t elem_type, const std::string& output) {
  onnx::NodeProto& node = Add("ConstantOfShape", {shape}, {output});
  auto* value = node.add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  *value->mutable_t() = ZeroTensor("", elem_type, {1});
  value->mutable_t()->clear_name();
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

}  // namespace rnnstate
