#pragma once
/// \file
/// Tensors whose payload lives in files beside the model (`data_location = EXTERNAL`): containment and
/// range checks on read (data_placement.h keeps them reachable when the model is written elsewhere).

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "io/tensor_places.h"

namespace rnnstate {

/// One tensor's `external_data` entries, parsed.
struct ExternalDataRef {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;  ///< absent: the data runs to the end of the file
};

/// The value of an `offset` or `length` entry: decimal digits only (not empty, no sign, no space), at
/// most 2^64 - 1. nullopt for anything else.
std::optional<uint64_t> ParseByteCount(const std::string& text);

/// Reads `tensor`'s `external_data` entries (other keys, such as `checksum`, are not read).
/// Throws Error(kBadInput) naming the rule broken: a key given twice, no `location`, an `offset` or
/// `length` that is not a byte count (ParseByteCount).
ExternalDataRef ParseExternalData(const onnx::TensorProto& tensor);

/// The bytes `tensor`'s dims and data type take when the type has a fixed element size (every numeric
/// type and bool) and no dim is negative; saturates at 2^64 - 1. nullopt otherwise (strings, unknown
/// types).
std::optional<uint64_t> ExpectedByteSize(const onnx::TensorProto& tensor);

/// "FLOAT [1,6,2]": a tensor's data type and dims, as messages about its data name them.
std::string TypeAndDims(const onnx::TensorProto& tensor);

/// Checks `ref` against its data file of `file_size` bytes and returns the tensor's byte length. Throws
/// Error(kBadInput) naming the rule broken: an offset past the end of the file, offset + length past it
/// (overflow included), or a byte length other than ExpectedByteSize (ONNX Runtime loads no other).
uint64_t CheckExternalRange(const onnx::TensorProto& tensor, const ExternalDataRef& ref, uint64_t file_size);

/// Checks every tensor with external data, wherever it lives (graph and sparse initializers, node
/// attributes, nested graphs, function bodies, training info), and returns the distinct external data
/// files (the `location` values) in first-use order. Throws Error(kBadInput), naming the tensor (its name
/// and path in the model) and the location, for entries ParseExternalData refuses; a location that is
/// absolute, contains "..", or resolves (through symlinks) outside `model_dir`; a file that is missing or
/// not a regular file (a FIFO, a device, a socket, a directory: never opened, see RegularFile); a range
/// CheckExternalRange refuses.
std::vector<std::string> CheckExternalData(const onnx::ModelProto& model, const std::string& model_dir);

/// CheckExternalData that also hands every tensor, once its external data passed, to `also_visit` in the
/// same walk over the model: a caller with a per-tensor check of its own walks the model once.
std::vector<std::string> CheckExternalData(const onnx::ModelProto& model, const std::string& model_dir,
                                           const places::TensorVisitor& also_visit);

/// The data file `location` names in `model_dir`, resolved (no symlinks). Throws Error(kBadInput) for a
/// location that is empty, absolute, contains ".." or a NUL, resolves outside `model_dir`, or is missing.
std::filesystem::path ResolveLocation(const std::string& location, const std::filesystem::path& model_dir);

}  // namespace rnnstate
