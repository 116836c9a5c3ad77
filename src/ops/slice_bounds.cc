#include "ops/slice_bounds.h"

#include "ops/int_fold.h"
#include "ops/op_semantics.h"

namespace rnnstate {

std::optional<SliceBounds> ConstantSliceBounds(const ModelIndex& index, const GraphPath& path,
                                               const onnx::NodeProto& slice, BoundReading reading) {
  SliceOperands given = SliceOperandsOf(index, path, slice);
  SliceBounds bounds;
  // Inputs 1..4 since opset 10 (the attributes before it are read by SliceOperandsOf).
  const std::pair<std::optional<std::vector<int64_t>>*, std::vector<int64_t>*> parts[] = {
      {&given.starts, &bounds.starts}, {&given.ends, &bounds.ends},
      {&given.axes, &bounds.axes}, {&given.steps, &bounds.steps}};
  for (int slot = 1; slot <= 4; ++slot) {
    auto [operand, bound] = parts[slot - 1];
    if (*operand) {
      *bound = std::move(**operand);
      continue;
    }
    if (slot >= slice.input_size() || slice.input(slot).empty()) continue;  // absent: the default
    if (reading != BoundReading::kFolded) return std::nullopt;
    std::optional<IntTensor> folded = FoldInts(index, path, slice.input(slot));
    if (!folded) return std::nullopt;
    *bound = std::move(folded->values);
  }
  return bounds;
}

}  // namespace rnnstate
