#pragma once
/// \file
/// Small integer tensors folded from the chains of constant nodes exporters write for what is one
/// constant (PyTorch 1.13's `F.pad` amounts: ConstantOfShape, Concat, Reshape, Slice with step -1,
/// Transpose, Reshape, Cast). Where shape_eval evaluates shape vectors symbolically, this folds whole
/// tensors of known values, with their dims; payloads not in memory stay unknown.
///
///   pads = Cast(Reshape(Transpose(Slice(Reshape(Concat([2, 0], ConstantOfShape([4])), [-1, 2]),
///                                       [-1], [INT_MIN], [0], [-1])), [-1]))        -> [0, 0, 2, 0, 0, 0]

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph/model_index.h"

namespace rnnstate {

/// An integer tensor: its dims and its values, row-major.
struct IntTensor {
  std::vector<int64_t> dims;
  std::vector<int64_t> values;
};

/// The value of `name` (seen from the graph at `path`) when constants decide it: initializers, Constant
/// nodes, Shape of fixed shapes, and ConstantOfShape, Concat, Reshape, Slice, Transpose, Gather, Squeeze,
/// Unsqueeze, Cast, Identity, Neg and integer Add/Sub/Mul of those; at most 4096 elements. nullopt
/// otherwise.
std::optional<IntTensor> FoldInts(const ModelIndex& index, const GraphPath& path, const std::string& name);

}  // namespace rnnstate
