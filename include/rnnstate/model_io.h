#pragma once
/// \file
/// Stage 1 and 8: read a model file safely, write one atomically.

#include <onnx/onnx_pb.h>

#include <string>

namespace rnnstate {

/// Reads and parses the ONNX model at `path`. Throws Error(kBadInput) naming the problem: missing,
/// a directory, empty, too large for one protobuf message, not an ONNX model, truncated.
onnx::ModelProto LoadModel(const std::string& path);

/// Writes `model` to `path` through a temporary file in the same directory and a rename, so that
/// `path` is either untouched or complete. Throws Error(kCannotWrite).
void WriteModelAtomically(const onnx::ModelProto& model, const std::string& path);

}  // namespace rnnstate
