#include "values/constant_value.h"

#include <algorithm>
#include <cstring>

#include "graph/payload_placeholder.h"
#include "graph/proto_access.h"

namespace rnnstate {

namespace {

template <typename Narrow>
std::optional<std::vector<int64_t>> FromRaw(const std::string& raw) {
  if (raw.size() % sizeof(Narrow) != 0) return std::nullopt;
  std::vector<Narrow> values(raw.size() / sizeof(Narrow));
  std::memcpy(values.data(), raw.data(), raw.size());  // little endian, as on every host we build for
  return std::vector<int64_t>(values.begin(), values.end());
}

template <typename Wide>
std::optional<std::vector<double>> NumbersFromRaw(const std::string& raw) {
  if (raw.size() % sizeof(Wide) != 0) return std::nullopt;
  std::vector<Wide> values(raw.size() / sizeof(Wide));
  std::memcpy(values.data(), raw.data(), raw.size());  // little endian, as FromRaw
  return std::vector<double>(values.begin(), values.end());
}

/// The values of a FLOAT or DOUBLE tensor, or nullopt.
std::optional<std::vector<double>> FloatingValues(const onnx::TensorProto& tensor) {
  if (PayloadUnknown(tensor)) return std::nullopt;
  if (tensor.data_type() == onnx::TensorProto::FLOAT) {
    if (tensor.has_raw_data()) return NumbersFromRaw<float>(tensor.raw_data());
    return std::vector<double>(tensor.float_data().begin(), tensor.float_data().end());
  }
  if (tensor.data_type() == onnx::TensorProto::DOUBLE) {
    if (tensor.has_raw_data()) return NumbersFromRaw<double>(tensor.raw_data());
    return std::vector<double>(tensor.double_data().begin(), tensor.double_data().end());
  }
  return std::nullopt;
}

template <typename Values>
bool AllZero(const Values& values) {
  return std::all_of(values.begin(), values.end(), [](auto v) { return v == 0; });
}

/// The forms of a Constant's value attributes, by name.
struct AttributeForm {
  const char* name;
  ConstantValue::Form form;
  int32_t elem_type;
};
const AttributeForm kAttributeForms[] = {
    {"value", ConstantValue::Form::kTensor, 0},
    {"value_int", ConstantValue::Form::kInt, onnx::TensorProto::INT64},
    {"value_ints", ConstantValue::Form::kInts, onnx::TensorProto::INT64},
    {"value_float", ConstantValue::Form::kFloat, onnx::TensorProto::FLOAT},
    {"value_floats", ConstantValue::Form::kFloats, onnx::TensorProto::FLOAT},
    {"value_string", ConstantValue::Form::kString, onnx::TensorProto::STRING},
    {"value_strings", ConstantValue::Form::kStrings, onnx::TensorProto::STRING},
    {"sparse_value", ConstantValue::Form::kSparse, 0},
};

}  // namespace

bool PayloadUnknown(const onnx::TensorProto& tensor) {
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) return true;
  const std::string& raw = tensor.raw_data();
  return IsPayloadPlaceholder(raw);
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

std::optional<std::vector<bool>> BoolValues(const onnx::TensorProto& tensor) {
  if (PayloadUnknown(tensor) || tensor.data_type() != onnx::TensorProto::BOOL) return std::nullopt;
  std::vector<bool> values;
  if (tensor.has_raw_data()) {
    for (char byte : tensor.raw_data()) values.push_back(byte != 0);
  } else {
    for (int32_t v : tensor.int32_data()) values.push_back(v != 0);
  }
  return values;
}

bool KnownAllZero(const onnx::TensorProto& tensor) {
  if (PayloadUnknown(tensor)) return false;
  int64_t elements = 1;
  for (auto d : tensor.dims()) elements *= d;
  if (elements == 0) return true;
  if (tensor.has_raw_data()) {
    const std::string& raw = tensor.raw_data();
    return !raw.empty() && AllZero(raw);
  }
  bool has_values = tensor.float_data_size() || tensor.double_data_size() || tensor.int32_data_size() ||
                    tensor.int64_data_size() || tensor.uint64_data_size();
  return has_values && AllZero(tensor.float_data()) && AllZero(tensor.double_data()) && AllZero(tensor.int32_data()) &&
         AllZero(tensor.int64_data()) && AllZero(tensor.uint64_data());
}

ConstantValue ConstantOfTensor(const onnx::TensorProto& tensor) {
  ConstantValue constant;
  constant.form = ConstantValue::Form::kTensor;
  constant.tensor = &tensor;
  constant.elem_type = tensor.data_type();
  constant.dims.assign(tensor.dims().begin(), tensor.dims().end());
  return constant;
}

ConstantValue ConstantOfNode(const onnx::NodeProto& node) {
  for (const auto& attribute : node.attribute()) {
    const auto* known = std::find_if(std::begin(kAttributeForms), std::end(kAttributeForms),
                                     [&](const AttributeForm& form) { return attribute.name() == form.name; });
    if (known == std::end(kAttributeForms)) continue;
    ConstantValue constant;
    if (known->form == ConstantValue::Form::kTensor) constant = ConstantOfTensor(attribute.t());
    constant.form = known->form;
    constant.attribute = &attribute;
    if (known->elem_type != 0) constant.elem_type = known->elem_type;
    switch (known->form) {
      case ConstantValue::Form::kInts:
        constant.dims = {attribute.ints_size()};
        break;
      case ConstantValue::Form::kFloats:
        constant.dims = {attribute.floats_size()};
        break;
      case ConstantValue::Form::kStrings:
        constant.dims = {attribute.strings_size()};
        break;
      case ConstantValue::Form::kSparse:
        constant.elem_type = attribute.sparse_tensor().values().data_type();
        constant.dims.assign(attribute.sparse_tensor().dims().begin(), attribute.sparse_tensor().dims().end());
        break;
      default:
        break;
    }
    return constant;
  }
  return ConstantValue{};
}

std::optional<ConstantValue> FindConstant(const ModelIndex& index, const GraphPath& path, const std::string& name) {
  if (name.empty()) return std::nullopt;
  const ResolvedName resolved = index.Resolve(path, name);
  const onnx::GraphProto* graph = ResolveGraph(index.model(), resolved.graph);
  if (graph == nullptr) return std::nullopt;
  if (resolved.producer.kind == Producer::Kind::kInitializer) {
    return ConstantOfTensor(graph->initializer(resolved.producer.index));
  }
  if (resolved.node == nullptr || !IsOnnxOp(*resolved.node, {"Constant"})) return std::nullopt;
  return ConstantOfNode(*resolved.node);
}

std::optional<std::vector<int64_t>> IntegerValues(const ConstantValue& constant) {
  switch (constant.form) {
    case ConstantValue::Form::kTensor:
      return IntegerValues(*constant.tensor);
    case ConstantValue::Form::kInt:
      return std::vector<int64_t>{constant.attribute->i()};
    case ConstantValue::Form::kInts:
      return std::vector<int64_t>(constant.attribute->ints().begin(), constant.attribute->ints().end());
    default:
      return std::nullopt;
  }
}

std::optional<std::vector<double>> NumberValues(const ConstantValue& constant) {
  if (std::optional<std::vector<int64_t>> integers = IntegerValues(constant)) {
    return std::vector<double>(integers->begin(), integers->end());
  }
  switch (constant.form) {
    case ConstantValue::Form::kTensor:
      return FloatingValues(*constant.tensor);
    case ConstantValue::Form::kFloat:
      return std::vector<double>{constant.attribute->f()};
    case ConstantValue::Form::kFloats:
      return std::vector<double>(constant.attribute->floats().begin(), constant.attribute->floats().end());
    default:
      return std::nullopt;
  }
}

std::optional<bool> OneBool(const ConstantValue& constant) {
  if (constant.form != ConstantValue::Form::kTensor) return std::nullopt;
  const std::optional<std::vector<bool>> values = BoolValues(*constant.tensor);
  if (!values || values->size() != 1) return std::nullopt;
  return values->front();
}

bool KnownAllZero(const ConstantValue& constant) {
  switch (constant.form) {
    case ConstantValue::Form::kTensor:
      return KnownAllZero(*constant.tensor);
    case ConstantValue::Form::kInt:
      return constant.attribute->i() == 0;
    case ConstantValue::Form::kInts:
      return AllZero(constant.attribute->ints());
    case ConstantValue::Form::kFloat:
      return constant.attribute->f() == 0.0f;
    case ConstantValue::Form::kFloats:
      return AllZero(constant.attribute->floats());
    default:
      return false;
  }
}

bool ConstantNodeIsZero(const onnx::NodeProto& node) { return KnownAllZero(ConstantOfNode(node)); }

std::optional<std::vector<int64_t>> ConstantIntegers(const ModelIndex& index, const GraphPath& path,
                                                     const std::string& name) {
  const std::optional<ConstantValue> constant = FindConstant(index, path, name);
  return constant ? IntegerValues(*constant) : std::nullopt;
}

std::optional<std::vector<int64_t>> ConstantDims(const ModelIndex& index, const GraphPath& path,
                                                 const std::string& name) {
  using Form = ConstantValue::Form;
  std::optional<ConstantValue> constant = FindConstant(index, path, name);
  if (!constant || (constant->form != Form::kTensor && constant->form != Form::kInt && constant->form != Form::kFloat))
    return std::nullopt;
  return std::move(constant->dims);
}

std::optional<double> ConstantNumber(const ModelIndex& index, const GraphPath& path, const std::string& name) {
  const std::optional<ConstantValue> constant = FindConstant(index, path, name);
  const std::optional<std::vector<double>> values = constant ? NumberValues(*constant) : std::nullopt;
  if (!values || values->size() != 1) return std::nullopt;
  return values->front();
}

std::optional<int64_t> ConstantScalar(const ModelIndex& index, const GraphPath& path, const std::string& name) {
  const std::optional<std::vector<int64_t>> values = ConstantIntegers(index, path, name);
  if (!values || values->size() != 1) return std::nullopt;
  return values->front();
}

}  // namespace rnnstate
