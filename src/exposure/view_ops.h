#pragma once
/// \file
/// Internal to the exposure walks (exposure.cc reads, exposure_write.cc writes): what the view operators
/// do to an element map, and the operands they take.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph/model_index.h"
#include "ops/op_semantics.h"
#include "values/element_map.h"
#include "values/reshape_groups.h"
#include "values/shape_eval.h"

namespace rnnstate {

/// "Slice '/Slice_1'": a node, for messages.
std::string Where(const onnx::NodeProto& node, int index);

/// The element type of `name` seen from `path`, 0 when unknown.
int32_t ElemType(const ModelIndex& index, const GraphPath& path, const std::string& name);

/// True when every value of element type `narrow` is exactly a value of `wide`.
bool Represents(int32_t wide, int32_t narrow);

/// True when every type of a Cast chain represents the values of `source` (the chain loses nothing).
bool Lossless(const std::vector<int32_t>& chain, int32_t source);

/// Unit axes inserted at `axes` (positions in the result, as Unsqueeze's); false (the map unchanged) when
/// an axis is out of range or listed twice.
[[nodiscard]] bool InsertUnitAxes(ElementMap& map, const std::vector<int64_t>& axes);

/// Unit axes `axes` removed (positions in `map`, as Squeeze's); false (the map unchanged) when one is not
/// a unit axis, out of range or listed twice.
[[nodiscard]] bool RemoveUnitAxes(ElementMap& map, const std::vector<int64_t>& axes);

/// Slice's starts, ends, axes, steps (attributes before opset 10, inputs after): of one length, axes
/// non-negative, in range and distinct, no step 0 (else nullopt).
struct SliceSpec {
  std::vector<int64_t> starts, ends, axes, steps;
};
std::optional<SliceSpec> SliceOf(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node,
                                 size_t rank);

/// One axis of a Slice with ONNX's rules applied (negative starts and ends count from the end of the
/// axis; both are clamped to it): output index t is input index `start + step * t`, for t < `limit`.
struct SliceAxis {
  int64_t start = 0;
  int64_t step = 1;
  /// The output's length on the axis (when the axis size is unknown: an upper bound, from a
  /// non-negative end), or nullopt when unknown.
  std::optional<int64_t> limit;
};
/// nullopt when step is 0, or when the start cannot be placed without the axis's size `dim` (a negative
/// start or step on an axis of unknown size).
std::optional<SliceAxis> ResolveSliceAxis(int64_t start, int64_t end, int64_t step, const SymDim& dim);

/// Applies Reshape groups to `map`: over the input's axes towards the output's when `forward`, else back.
bool ApplyReshape(const std::vector<ReshapeGroup>& groups, const SymShape& in, const SymShape& out, bool forward,
                  ElementMap& map);

/// True when both shapes are fully known and equal (sizes, or the same names).
bool SameShape(const SymShape& a, const SymShape& b);

/// A ScatterND with constant indices: indices of shape [lead..., k] are rows of k coordinates, one per
/// position of the leading axes (row-major), which are also the leading axes of the updates.
struct ScatterSpec {
  std::vector<std::vector<int64_t>> rows;  ///< coordinates non-negative (counted from the data's axis sizes)
  std::vector<int64_t> lead;               ///< the indices' shape without its last axis
  std::string reduction;                   ///< "none" (a write) or "add", "mul", "max", "min"
  /// True when another row has the same coordinates as row `r` (with reduction "none" ONNX leaves the
  /// result there undefined).
  bool Duplicated(size_t r) const;
};

/// The ScatterND `node` whose data has shape `data` (its rank at least): nullopt, with `why` (" writes at
/// ..."), when its indices are not constants of a known shape, or a coordinate is out of the data's range
/// or negative on an axis of unknown size.
std::optional<ScatterSpec> ScatterOf(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node,
                                     const std::optional<SymShape>& data, std::string* why);

/// How the state's region relates to the place a ScatterND row writes (a row longer than the map's rank
/// is kPartly: no proof either way).
enum class Overlap { kApart, kInside, kPartly };
Overlap RowOverlap(const ElementMap& map, const std::vector<int64_t>& row);

/// True when `node` passes its input `slot` (a value of rank `rank`) on unchanged: an Add (either operand)
/// or a Sub (the minuend) whose other operand is provably zero and broadcasts to nothing (a scalar, or
/// unit axes of no higher rank). Exporters write `stateN + Cast(sr * 0)` to keep an input used.
bool AddsZero(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node, int slot, size_t rank);

/// The training_mode of a Dropout is absent or a constant false (before opset 12 it has none): the
/// Dropout's output 0 is its input.
bool InferenceDropout(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node);

}  // namespace rnnstate
