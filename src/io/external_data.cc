#include "io/external_data.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <system_error>

#include "graph/proto_access.h"
#include "io/regular_file.h"
#include "io/tensor_places.h"
#include "rnnstate/error.h"

namespace rnnstate {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void Refuse(const std::string& problem) { throw Error(ExitCode::kBadInput, problem); }

/// Bytes per element of the data types (TensorProto.DataType values) with a fixed element size; 0 for
/// the others (strings, undefined, unknown, and the 4-bit types two elements share a byte of).
uint64_t ElementSize(int32_t type) {
  switch (type) {
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::BOOL:
    case 17:  // FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ (onnx 1.14+, unnamed in 1.12)
    case 18:
    case 19:
    case 20:
      return 1;
    case onnx::TensorProto::UINT16:
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16:
      return 2;
    case onnx::TensorProto::FLOAT:
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::UINT32:
      return 4;
    case onnx::TensorProto::INT64:
    case onnx::TensorProto::UINT64:
    case onnx::TensorProto::DOUBLE:
    case onnx::TensorProto::COMPLEX64:
      return 8;
    case onnx::TensorProto::COMPLEX128:
      return 16;
    default:
      return 0;
  }
}

uint64_t ByteCount(const char* key, const std::string& value) {
  const std::optional<uint64_t> count = ParseByteCount(value);
  if (!count) {
    Refuse(std::string(key) + " '" + Printable(value) +
           "' is not a byte count (decimal digits only, no sign, below 2^64)");
  }
  return *count;
}

/// True when `path` (absolute, normalized) lies inside `dir` (absolute, normalized).
bool Inside(const fs::path& path, const fs::path& dir) {
  auto mismatch = std::mismatch(dir.begin(), dir.end(), path.begin(), path.end());
  return mismatch.first == dir.end();
}

}  // namespace

fs::path ResolveLocation(const std::string& location, const fs::path& model_dir) {
  fs::path relative(location);
  if (location.find('\0') != std::string::npos) Refuse("the location contains a NUL character");
  if (location.empty() || relative.is_absolute()) Refuse("the location must be a relative path");
  for (const auto& part : relative) {
    if (part == "..") Refuse("the location leaves the model's directory");
  }
  std::error_code error;
  fs::path dir = fs::canonical(model_dir, error);
  fs::path file = error ? fs::path() : fs::canonical(model_dir / relative, error);
  if (error) Refuse("the file is missing: " + error.message());
  if (!Inside(file, dir)) Refuse("the location resolves outside the model's directory (symlink)");
  return file;
}

namespace {

/// "tensor 'W' at graph.initializer[0], external data 'w.bin'": where a problem is.
std::string Describe(const onnx::TensorProto& tensor, const places::TensorPath& path) {
  std::string text = (tensor.name().empty() ? "unnamed tensor" : "tensor '" + Printable(tensor.name()) + "'") + " at " +
                     path.ToString();
  for (const auto& entry : tensor.external_data()) {
    if (entry.key() == "location") return text + ", external data '" + Printable(entry.value()) + "'";
  }
  return text;
}

}  // namespace

std::string TypeAndDims(const onnx::TensorProto& tensor) {
  const std::string& name = onnx::TensorProto_DataType_Name(tensor.data_type());
  std::string text = name.empty() ? "data type " + std::to_string(tensor.data_type()) : name;
  text += " [";
  for (int i = 0; i < tensor.dims_size(); ++i) text += (i ? "," : "") + std::to_string(tensor.dims(i));
  return text + "]";
}

std::optional<uint64_t> ParseByteCount(const std::string& text) {
  if (text.empty()) return std::nullopt;
  uint64_t value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const auto digit = static_cast<uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

ExternalDataRef ParseExternalData(const onnx::TensorProto& tensor) {
  ExternalDataRef ref;
  std::set<std::string> keys;
  for (const auto& entry : tensor.external_data()) {
    if (!keys.insert(entry.key()).second) Refuse("external_data key '" + Printable(entry.key()) + "' is given twice");
    if (entry.key() == "location") ref.location = entry.value();
    if (entry.key() == "offset") ref.offset = ByteCount("offset", entry.value());
    if (entry.key() == "length") ref.length = ByteCount("length", entry.value());
  }
  if (keys.count("location") == 0) Refuse("external data without a location");
  return ref;
}

std::optional<uint64_t> ExpectedByteSize(const onnx::TensorProto& tensor) {
  const uint64_t element = ElementSize(tensor.data_type());
  const auto& dims = tensor.dims();
  if (element == 0 || std::any_of(dims.begin(), dims.end(), [](int64_t dim) { return dim < 0; })) return std::nullopt;
  if (std::find(dims.begin(), dims.end(), 0) != dims.end()) return 0;
  uint64_t bytes = element;
  for (const int64_t dim : dims) {
    const auto size = static_cast<uint64_t>(dim);
    if (bytes > UINT64_MAX / size) return UINT64_MAX;  // more than any file holds
    bytes *= size;
  }
  return bytes;
}

uint64_t CheckExternalRange(const onnx::TensorProto& tensor, const ExternalDataRef& ref, uint64_t file_size) {
  const std::string end = "the end of the file (" + std::to_string(file_size) + " bytes)";
  const std::string offset = std::to_string(ref.offset);
  if (ref.offset > file_size) Refuse("offset " + offset + " is past " + end);
  const uint64_t available = file_size - ref.offset;
  if (ref.length && *ref.length > available) {
    Refuse("offset " + offset + " + length " + std::to_string(*ref.length) + " runs past " + end);
  }
  const uint64_t length = ref.length.value_or(available);
  const std::optional<uint64_t> expected = ExpectedByteSize(tensor);
  if (expected && length != *expected) {
    const std::string given = ref.length ? "length " + std::to_string(length)
                                         : std::to_string(length) + " bytes from offset " + offset +
                                               " to the end of the file (no length given)";
    Refuse(given + " does not match the tensor: " + TypeAndDims(tensor) + " takes " + std::to_string(*expected) +
           " bytes (ONNX Runtime loads no other length)");
  }
  return length;
}

std::vector<std::string> CheckExternalData(const onnx::ModelProto& model, const std::string& model_dir) {
  return CheckExternalData(model, model_dir, [](const onnx::TensorProto&, const places::TensorPath&) {});
}

std::vector<std::string> CheckExternalData(const onnx::ModelProto& model, const std::string& model_dir,
                                           const places::TensorVisitor& also_visit) {
  const fs::path dir = model_dir.empty() ? fs::path(".") : fs::path(model_dir);
  std::vector<std::string> locations;
  std::map<std::string, uint64_t> file_sizes;  // by location: each file is resolved and opened once
  places::ForEachTensor(model, [&](const onnx::TensorProto& tensor, const places::TensorPath& path) {
    if (tensor.data_location() != onnx::TensorProto::EXTERNAL) {
      also_visit(tensor, path);
      return;
    }
    try {
      const ExternalDataRef ref = ParseExternalData(tensor);
      auto found = file_sizes.find(ref.location);
      if (found == file_sizes.end()) {
        // Only a regular file is opened: a FIFO or a device is refused from its stat.
        const uint64_t size = input::RegularFile::Open(ResolveLocation(ref.location, dir).string()).size();
        found = file_sizes.emplace(ref.location, size).first;
        locations.push_back(ref.location);
      }
      CheckExternalRange(tensor, ref, found->second);
    } catch (Error& e) {
      e.AppendContext(Describe(tensor, path));
      throw;
    }
    also_visit(tensor, path);
  });
  return locations;
}

}  // namespace rnnstate
