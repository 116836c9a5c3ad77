#pragma once
/// \file
/// Internal to the exposure walks (exposure.cc reads, exposure_write.cc writes): what the view operators
/// do to an element map, and the operands they take.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "element_map.h"
#include "model_index.h"
#include "shape_eval.h"

namespace rnnstate {

/// "Slice '/Slice_1'": a node, for messages.
std::string Where(const onnx::NodeProto& node, int index);

/// The element type of `name` seen from `path`, 0 when unknown.
int32_t ElemType(const ModelIndex& index, const GraphPath& path, const std::string& name);

/// True when every value of element type `narrow` is exactly a value of `wide`.
bool Represents(int32_t wide, int32_t narrow);

/// True when every type of a Cast chain represents the values of `source` (the chain loses nothing).
bool Lossless(const std::vector<int32_t>& chain, int32_t source);

/// The axes of a Squeeze or Unsqueeze (attribute before opset 13, constant input after).
std::optional<std::vector<int64_t>> AxesOperand(const ModelIndex& index, const GraphPath& path,
                                                const onnx::NodeProto& node);

/// `axes` made non-negative for `rank`, sorted.
std::vector<int64_t> Normalized(std::vector<int64_t> axes, int64_t rank);

/// Unit axes inserted at `axes` (positions in the result, as Unsqueeze's).
void InsertUnitAxes(ElementMap& map, const std::vector<int64_t>& axes);

/// Unit axes `axes` removed (positions in `map`, as Squeeze's); false when one is not a unit axis.
bool RemoveUnitAxes(ElementMap& map, const std::vector<int64_t>& axes);

/// Slice's starts, ends, axes, steps (attributes before opset 10, inputs after), axes non-negative.
struct SliceSpec {
  std::vector<int64_t> starts, ends, axes, steps;
};
std::optional<SliceSpec> SliceOf(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node,
                                 size_t rank);

/// Applies Reshape groups to `map`: over the input's axes towards the output's when `forward`, else back.
bool ApplyReshape(const std::vector<ReshapeGroup>& groups, const SymShape& in, const SymShape& out, bool forward,
                  ElementMap& map);

/// True when both shapes are fully known and equal (sizes, or the same names).
bool SameShape(const SymShape& a, const SymShape& b);

/// The constant indices of a ScatterND as rows of coordinates, or nullopt.
std::optional<std::vector<std::vector<int64_t>>> ScatterRows(const ModelIndex& index, const GraphPath& path,
                                                             const std::string& indices);

/// How the state's region relates to the place a ScatterND row writes.
enum class Overlap { kApart, kInside, kPartly };
Overlap RowOverlap(const ElementMap& map, const std::vector<int64_t>& row);

}  // namespace rnnstate
