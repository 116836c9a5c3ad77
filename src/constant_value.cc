#include "constant_value.h"

#include <algorithm>
#include <cstring>

#include "model_file.h"
#include "proto_access.h"

namespace rnnstate {

namespace {

template <typename Narrow>
std::optional<std::vector<int64_t>> FromRaw(const std::string& raw) {
  if (raw.size() % sizeof(Narrow) != 0) return std::nullopt;
  std::vector<Narrow> values(raw.size() / sizeof(Narrow));
  std::memcpy(values.data(), raw.data(), raw.size());  // little endian, as on every host we build for
  return std::vector<int64_t>(values.begin(), values.end());
}

bool AllZero(const std::vector<int64_t>& values) {
  return std::all_of(values.begin(), values.end(), [](int64_t v) { return v == 0; });
}

}  // namespace

bool PayloadUnknown(const onnx::TensorProto& tensor) {
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) return true;
  const std::string& raw = tensor.raw_data();
  return raw.size() == ModelFile::kPlaceholderSize &&
         std::memcmp(raw.data(), ModelFile::kPlaceholderMagic, sizeof(ModelFile::kPlaceholderMagic)) == 0;
}

std::optional<std::vector<int64_t>> IntegerValues(const onnx::TensorProto& tensor) {
  if (PayloadUnknown(tensor)) return std::nullopt;
  if (tensor.data_type() == onnx::TensorProto::INT64) {
    if (tensor.has_raw_data()) return FromRaw<int64_t>(tensor.raw_data());
    return std::vector<int64_t>(tensor.int64_data().begin(), tensor.int64_data().end());
  }
  if (tensor.data_type() == onnx::TensorProto::INT32) {
    if (tensor.has_raw_data()) return FromRaw<int32_t>(tensor.raw_data());
    return std::vector<int64_t>(tensor.int32_data().begin(), tensor.int32_data().end());
  }
  return std::nullopt;
}

bool KnownAllZero(const onnx::TensorProto& tensor) {
  if (PayloadUnknown(tensor)) return false;
  int64_t elements = 1;
  for (auto d : tensor.dims()) elements *= d;
  if (elements == 0) return true;
  if (tensor.has_raw_data()) {
    const std::string& raw = tensor.raw_data();
    return !raw.empty() && std::all_of(raw.begin(), raw.end(), [](char c) { return c == 0; });
  }
  auto all_zero = [](const auto& values) {
    return std::all_of(values.begin(), values.end(), [](auto v) { return v == 0; });
  };
  bool has_values = tensor.float_data_size() || tensor.double_data_size() || tensor.int32_data_size() ||
                    tensor.int64_data_size() || tensor.uint64_data_size();
  return has_values && all_zero(tensor.float_data()) && all_zero(tensor.double_data()) &&
         all_zero(tensor.int32_data()) && all_zero(tensor.int64_data()) && all_zero(tensor.uint64_data());
}

bool ConstantNodeIsZero(const onnx::NodeProto& node) {
  for (const auto& attribute : node.attribute()) {
    if (attribute.name() == "value") return KnownAllZero(attribute.t());
    if (attribute.name() == "value_float") return attribute.f() == 0.0f;
    if (attribute.name() == "value_floats") {
      return std::all_of(attribute.floats().begin(), attribute.floats().end(), [](float v) { return v == 0.0f; });
    }
    if (attribute.name() == "value_int") return attribute.i() == 0;
    if (attribute.name() == "value_ints") {
      return AllZero(std::vector<int64_t>(attribute.ints().begin(), attribute.ints().end()));
    }
  }
  return false;
}

std::optional<std::vector<int64_t>> ConstantIntegers(const ModelIndex& index, const GraphPath& path,
                                                     const std::string& name) {
  if (name.empty()) return std::nullopt;
  const ResolvedName resolved = index.Resolve(path, name);
  const onnx::GraphProto* graph = ResolveGraph(index.model(), resolved.graph);
  if (graph == nullptr) return std::nullopt;
  const Producer& producer = resolved.producer;
  if (producer.kind == Producer::Kind::kInitializer) return IntegerValues(graph->initializer(producer.index));
  if (producer.kind != Producer::Kind::kNode) return std::nullopt;
  const onnx::NodeProto& node = graph->node(producer.index);
  if (node.op_type() != "Constant" || !IsOnnxDomain(node.domain())) return std::nullopt;
  for (const auto& attribute : node.attribute()) {
    if (attribute.name() == "value") return IntegerValues(attribute.t());
    if (attribute.name() == "value_ints") return std::vector<int64_t>(attribute.ints().begin(), attribute.ints().end());
    if (attribute.name() == "value_int") return std::vector<int64_t>{attribute.i()};
  }
  return std::nullopt;
}

}  // namespace rnnstate
