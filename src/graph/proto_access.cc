#include "graph/proto_access.h"

#include <string_view>
#include <unordered_set>

namespace rnnstate {

int64_t OnnxOpset(const onnx::ModelProto& model) {
  int64_t opset = 0;
  for (const auto& import : model.opset_import()) {
    if (IsOnnxDomain(import.domain())) opset = import.version();
  }
  return opset;
}

std::string Printable(const std::string& name) {
  std::string out;
  for (const unsigned char c : name) {
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      const char* hex = "0123456789abcdef";
      out += std::string("\\x") + hex[c >> 4] + hex[c & 15];
    }
  }
  return out;
}

size_t StateElementSize(int32_t elem_type) {
  switch (elem_type) {
    case onnx::TensorProto::FLOAT:
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::UINT32:
      return 4;
    case onnx::TensorProto::DOUBLE:
    case onnx::TensorProto::INT64:
    case onnx::TensorProto::UINT64:
      return 8;
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16:
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::UINT16:
      return 2;
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::BOOL:
      return 1;
    default: return 0;
  }
}

std::string DataTypeName(int32_t elem_type) {
  if (onnx::TensorProto_DataType_IsValid(elem_type)) {
    return onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(elem_type));
  }
  return "data type " + std::to_string(elem_type);
}

std::string ShapeText(const onnx::TensorShapeProto& shape) {
  std::string out = "[";
  for (int i = 0; i < shape.dim_size(); ++i) {
    const auto& d = shape.dim(i);
    out += (i ? "," : "") + (d.has_dim_value()   ? std::to_string(d.dim_value())
                             : d.has_dim_param() ? d.dim_param()
                                                 : "?");
  }
  return out + "]";
}

std::optional<uint64_t> DenseTensorBytes(int32_t elem_type, const std::vector<int64_t>& dims) {
  uint64_t bytes = StateElementSize(elem_type);
  if (bytes == 0) return std::nullopt;
  for (int64_t d : dims) {
    if (d < 0 || __builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes)) return std::nullopt;
  }
  return bytes;
}

bool IsOnnxOp(const onnx::NodeProto& node, std::initializer_list<const char*> ops) {
  if (!node.domain().empty() && node.domain() != "ai.onnx") return false;
  for (const char* op : ops) {
    if (node.op_type() == op) return true;
  }
  return false;
}

const onnx::AttributeProto* FindAttribute(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& attribute : node.attribute()) {
    if (attribute.name() == name) return &attribute;
  }
  return nullptr;
}

int64_t IntAttribute(const onnx::NodeProto& node, const std::string& name, int64_t fallback) {
  const onnx::AttributeProto* attribute = FindAttribute(node, name);
  return attribute ? attribute->i() : fallback;
}

std::string StringAttribute(const onnx::NodeProto& node, const std::string& name, const std::string& fallback) {
  const onnx::AttributeProto* attribute = FindAttribute(node, name);
  return attribute ? attribute->s() : fallback;
}

const onnx::GraphProto* GraphAttribute(const onnx::NodeProto& node, const std::string& name) {
  const onnx::AttributeProto* attribute = FindAttribute(node, name);
  return attribute && attribute->has_g() ? &attribute->g() : nullptr;
}

onnx::GraphProto* GraphAttribute(onnx::NodeProto& node, const std::string& name) {
  for (auto& attribute : *node.mutable_attribute()) {
    if (attribute.name() == name) return attribute.has_g() ? attribute.mutable_g() : nullptr;
  }
  return nullptr;
}

std::set<std::string> FreeNames(const onnx::GraphProto& graph) { return OuterReferences().Of(graph); }

std::set<std::string> SubgraphReferences(const onnx::NodeProto& node) { return OuterReferences().OfNode(node); }

const std::set<std::string>& OuterReferences::Of(const onnx::GraphProto& graph) {
  if (auto known = free_.find(&graph); known != free_.end()) return known->second;
  std::unordered_set<std::string_view> defined;
  for (const auto& input : graph.input()) defined.insert(input.name());
  for (const auto& tensor : graph.initializer()) defined.insert(tensor.name());
  for (const auto& node : graph.node()) defined.insert(node.output().begin(), node.output().end());
  std::set<std::string> free;
  auto use = [&](const std::string& name) {
    if (!name.empty() && !defined.count(name)) free.insert(name);
  };
  for (const auto& node : graph.node()) {
    for (const auto& input : node.input()) use(input);
    for (const auto& name : OfNode(node)) use(name);
  }
  for (const auto& output : graph.output()) use(output.name());
  return free_[&graph] = std::move(free);
}

std::set<std::string> OuterReferences::OfNode(const onnx::NodeProto& node) {
  std::set<std::string> references;
  for (const auto& attribute : node.attribute()) {
    if (attribute.has_g()) {
      const std::set<std::string>& free = Of(attribute.g());
      references.insert(free.begin(), free.end());
    }
    for (const auto& sub : attribute.graphs()) {
      const std::set<std::string>& free = Of(sub);
      references.insert(free.begin(), free.end());
    }
  }
  return references;
}

}  // namespace rnnstate
