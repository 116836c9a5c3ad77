#pragma once
/// \file
/// The one reader of constant values: what the analysis may know about an initializer or a Constant
/// node at analysis time (zero defaults, Slice bounds, Gather indices). A payload that is not in memory —
/// external data, or a large payload the lazy reader left in the file (see model_file.h) — is unknown,
/// never guessed.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph_path.h"
#include "model_index.h"

namespace rnnstate {

/// True when the tensor's values are not in memory (external data, or a deferred payload placeholder).
bool PayloadUnknown(const onnx::TensorProto& tensor);

/// The values of an INT64 or INT32 tensor (plain fields or raw little-endian bytes), or nullopt when they
/// are unknown or the tensor has another type.
std::optional<std::vector<int64_t>> IntegerValues(const onnx::TensorProto& tensor);

/// True when every element of the tensor is known to be zero; false when one is not, or when unknown.
bool KnownAllZero(const onnx::TensorProto& tensor);

/// True when a Constant node's value (any of its `value*` attributes) is known to be all zeros.
bool ConstantNodeIsZero(const onnx::NodeProto& constant);

/// The integer values of `name` seen from the graph at `path`, when it is an initializer that is not an
/// overridable graph input, or the output of a Constant node, in that graph or an enclosing one.
std::optional<std::vector<int64_t>> ConstantIntegers(const ModelIndex& index, const GraphPath& path,
                                                     const std::string& name);

}  // namespace rnnstate
