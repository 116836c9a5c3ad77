#pragma once
/// \file
/// Tensors whose payload lives in files beside the model (`data_location = EXTERNAL`): containment
/// checks on read, and keeping them reachable when the model is written to another directory.

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

namespace rnnstate {

/// The distinct external data files the model refers to (the `location` values), in first-use order.
/// Throws Error(kBadInput) for a location that is absolute, contains "..", has no location key, or
/// resolves (through symlinks) outside `model_dir`, or a file that does not exist.
std::vector<std::string> CheckExternalData(const onnx::ModelProto& model, const std::string& model_dir);

/// Makes the external data files `locations` of a model in `from_dir` available to the same model
/// written into `to_dir`, under the same relative names: a hard link where possible, else a copy
/// (through a temporary file and a rename). Nothing to do when both directories are the same. An
/// existing different file at the destination is never overwritten: Error(kCannotWrite).
void ProvideExternalData(const std::vector<std::string>& locations, const std::string& from_dir,
                         const std::string& to_dir);

}  // namespace rnnstate
