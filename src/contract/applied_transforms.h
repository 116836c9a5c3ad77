#pragma once
/// \file
/// What the stages after the state rewrite (`--state-layout`, `--pack`) did to a model, read from its
/// metadata alone. A model they changed is final for the state rewrite: the planning keeps its pairs as
/// they are, and the transform stage (pack/state_transform.h) only switches its input mode.

#include <onnx/onnx_pb.h>

namespace rnnstate {

/// What the metadata says the stages after the state rewrite did to a model.
struct AppliedTransforms {
  bool packed = false;       ///< the metadata has a "packed" object
  bool batch_first = false;  ///< some pair has layout "batch-first"
  bool any() const { return packed || batch_first; }
};

/// Reads the `rnnstate` metadata of `model` once for both questions; a model without it has neither.
AppliedTransforms TransformsOf(const onnx::ModelProto& model);

}  // namespace rnnstate
