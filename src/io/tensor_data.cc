#include "io/tensor_data.h"

#include <optional>

#include "io/external_data.h"
#include "io/tensor_places.h"

namespace rnnstate {

namespace {

using onnx::TensorProto;

/// The typed field that holds a data type's values without raw_data, and how many values an element takes.
struct TypedField {
  const char* name = nullptr;  ///< nullptr: the type has none rnnstate knows
  int count = 0;               ///< the number of values in it
  int per_element = 1;
};

TypedField TypedFieldOf(const TensorProto& tensor) {
  switch (tensor.data_type()) {
    case TensorProto::FLOAT:
      return {"float_data", tensor.float_data_size()};
    case TensorProto::COMPLEX64:
      return {"float_data", tensor.float_data_size(), 2};
    case TensorProto::DOUBLE:
      return {"double_data", tensor.double_data_size()};
    case TensorProto::COMPLEX128:
      return {"double_data", tensor.double_data_size(), 2};
    case TensorProto::INT64:
      return {"int64_data", tensor.int64_data_size()};
    case TensorProto::UINT32:
    case TensorProto::UINT64:
      return {"uint64_data", tensor.uint64_data_size()};
    case TensorProto::INT32:
    case TensorProto::INT16:
    case TensorProto::INT8:
    case TensorProto::UINT16:
    case TensorProto::UINT8:
    case TensorProto::BOOL:
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16:
    case 17:  // the float8 types (onnx 1.14+, unnamed in 1.12): one value per element in int32_data
    case 18:
    case 19:
    case 20:
      return {"int32_data", tensor.int32_data_size()};
    case TensorProto::STRING:
      return {"string_data", tensor.string_data_size()};
    default:
      return {};
  }
}

/// The number of elements `tensor`'s dims take (1 for a scalar), or nullopt above 2^64 - 1. No dim is
/// negative.
std::optional<uint64_t> ElementCount(const TensorProto& tensor) {
  uint64_t count = 1;
  for (const int64_t dim : tensor.dims()) {
    if (dim == 0) return 0;
  }
  for (const int64_t dim : tensor.dims()) {
    const auto size = static_cast<uint64_t>(dim);
    if (count > UINT64_MAX / size) return std::nullopt;
    count *= size;
  }
  return count;
}

std::string Counted(uint64_t count, const char* noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

}  // namespace

std::string InlineDataProblem(const TensorProto& tensor, std::optional<uint64_t> raw_size) {
  for (const int64_t dim : tensor.dims()) {
    if (dim < 0) return "dim " + std::to_string(dim) + " is negative (" + TypeAndDims(tensor) + ")";
  }
  if (tensor.data_location() == TensorProto::EXTERNAL) return "";
  const TypedField field = TypedFieldOf(tensor);
  if (field.name == nullptr) return "";
  const std::optional<uint64_t> elements = ElementCount(tensor);
  // Worded only for a refused tensor: nearly every tensor is fine.
  const auto takes = [&tensor] { return ", but " + TypeAndDims(tensor) + " takes "; };
  if (tensor.has_raw_data()) {
    if (tensor.data_type() == TensorProto::STRING || !raw_size) return "";
    const std::optional<uint64_t> bytes = ExpectedByteSize(tensor);  // saturates at 2^64 - 1
    if (!bytes || (elements && *raw_size == *bytes)) return "";
    return "raw_data has " + Counted(*raw_size, "byte") + takes() +
           (elements && *bytes != UINT64_MAX ? std::to_string(*bytes) : std::string("more than 2^64 - 1")) + " bytes";
  }
  const auto values = static_cast<uint64_t>(field.count);
  if (elements && *elements <= UINT64_MAX / field.per_element && values == *elements * field.per_element) return "";
  return std::string(field.name) + " has " + Counted(values, "value") + takes() +
         (elements && *elements <= UINT64_MAX / field.per_element ? std::to_string(*elements * field.per_element)
                                                                  : std::string("more than 2^64 - 1"));
}

std::string InlineDataProblemAt(const TensorProto& tensor, const places::TensorPath& path,
                                std::optional<uint64_t> raw_size) {
  std::string found = InlineDataProblem(tensor, raw_size);
  if (found.empty()) return found;
  return (tensor.name().empty() ? "unnamed tensor" : "tensor '" + tensor.name() + "'") + " at " + path.ToString() +
         ": " + found;
}

std::string FirstInlineDataProblem(const onnx::ModelProto& model, const RawDataSize& raw_size) {
  std::string problem;
  places::ForEachTensor(model, [&](const TensorProto& tensor, const places::TensorPath& path) {
    if (problem.empty()) problem = InlineDataProblemAt(tensor, path, raw_size(tensor));
  });
  return problem;
}

}  // namespace rnnstate
