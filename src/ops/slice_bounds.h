#pragma once
/// \file
/// A Slice's bounds as constants, for the analyses that follow what a Slice cuts (the exposure walks, the
/// context judge, the causal windows): each operand read where the operator table says (attribute before
/// opset 10, input since), an absent one empty, a given one that is not a constant making the whole unknown.
///
///   Slice(x, starts=[-3], ends=[INT64_MAX], axes=[1])   -> {starts [-3], ends [INT64_MAX], axes [1], steps []}
///   Slice(x, starts=[0], ends=Shape(x)[1:2])            -> nullopt unless ends is a constant (shape_eval)

#include <cstdint>
#include <optional>
#include <vector>

#include "graph/model_index.h"
#include "graph/shape_inference.h"

namespace rnnstate {

/// A Slice's operands as given: an operand the node does not give is empty (its default applies: every
/// axis from 0 for `axes`, 1 for `steps`).
struct SliceBounds {
  std::vector<int64_t> starts, ends, axes, steps;
};

/// How far a bound is read: a constant shape_eval computes, or also an integer tensor folded from a chain of
/// constant nodes (ops/int_fold; PyTorch's exports of F.pad and its slices).
enum class BoundReading { kConstants, kFolded };

/// The bounds of `slice` (seen from the graph at `path`); nullopt when an operand it gives cannot be read
/// as `reading` says.
std::optional<SliceBounds> ConstantSliceBounds(const ModelIndex& index, const GraphPath& path,
                                               const onnx::NodeProto& slice,
                                               BoundReading reading = BoundReading::kConstants);

/// The Slice operands, in every graph of `index`, that nodes compute and ConstantSliceBounds (folded) reads
/// as fixed integers, where onnx 1.12's inference sees no constant and so loses the Slice's output shape:
/// torch.chunk's `k * ((Shape(x)[1] + 1) / 2)` (its Div ends onnx's data propagation). Only Slices whose
/// every given operand is then known; each computing node once. Bound in the copy inference runs on
/// (graph/shape_inference's BindKnownValues), they give the analysis the shapes after such Slices.
std::vector<KnownValue> ComputedSliceOperands(const ModelIndex& index);

}  // namespace rnnstate
