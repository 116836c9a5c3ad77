#include "ops/slice_bounds.h"

#include <set>
#include <utility>

#include "graph/proto_access.h"
#include "ops/int_fold.h"
#include "ops/op_semantics.h"
#include "values/constant_value.h"
#include "values/shape_eval.h"

namespace rnnstate {

std::optional<SliceBounds> ConstantSliceBounds(const ModelIndex& index, const GraphPath& path,
                                               const onnx::NodeProto& slice, BoundReading reading) {
  SliceOperands given = SliceOperandsOf(index, path, slice);
  SliceBounds bounds;
  // Inputs 1..4 since opset 10 (the attributes before it are read by SliceOperandsOf).
  const std::pair<std::optional<std::vector<int64_t>>*, std::vector<int64_t>*> parts[] = {
      {&given.starts, &bounds.starts},
      {&given.ends, &bounds.ends},
      {&given.axes, &bounds.axes},
      {&given.steps, &bounds.steps}};
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

namespace {

/// The computed operands of `slice` (slots 1..4, given and not constants) as values to bind, added to
/// `known` once per computing node (`seen`); nothing when the bounds are not all known.
void AddComputedOperands(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& slice,
                         std::set<std::pair<GraphPath, int>>& seen, std::vector<KnownValue>& known) {
  if (slice.input_size() < 2 || !ConstantSliceBounds(index, path, slice, BoundReading::kFolded)) return;
  for (int slot = 1; slot < slice.input_size() && slot <= 4; ++slot) {
    const std::string& name = slice.input(slot);
    if (name.empty() || ConstantIntegers(index, path, name)) continue;  // onnx reads these itself
    const ResolvedName at = index.Resolve(path, name);
    const onnx::TypeProto* type = index.TypeOf(path, name);
    if (at.node == nullptr || at.node->output_size() != 1 || type == nullptr || !type->has_tensor_type()) continue;
    const int32_t element = type->tensor_type().elem_type();
    if (element != onnx::TensorProto::INT64 && element != onnx::TensorProto::INT32) continue;
    std::optional<IntTensor> value = FoldInts(index, path, name);
    std::optional<std::vector<int64_t>> ints = value ? std::optional(value->values) : IntValues(index, path, name);
    if (!ints || !seen.emplace(at.graph, at.producer.index).second) continue;
    known.push_back(KnownValue{at.graph, at.producer.index, element, std::move(*ints)});
  }
}

}  // namespace

std::vector<KnownValue> ComputedSliceOperands(const ModelIndex& index) {
  std::set<std::pair<GraphPath, int>> seen;
  std::vector<KnownValue> known;
  for (const auto& [path, graph] : index.graphs()) {
    for (const onnx::NodeProto& node : graph.proto->node()) {
      if (IsOnnxOp(node, {"Slice"})) AddComputedOperands(index, path, node, seen, known);
    }
  }
  return known;
}

}  // namespace rnnstate
