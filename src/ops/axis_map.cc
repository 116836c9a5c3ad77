// MapAxis: one function per axis effect, each with both directions side by side, so that forward and
// backward are read from the same description (the row's effect, its named axis, its operands).

#include "ops/axis_map.h"

#include <algorithm>
#include <vector>

#include "graph/proto_access.h"
#include "values/reshape_groups.h"
#include "values/shape_eval.h"

namespace rnnstate {

namespace {

using Dir = AxisDirection;

/// The rank of input `slot` of `node` (-1 when unknown or absent).
int InputRank(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node, int slot) {
  return slot < node.input_size() ? RankOf(index, path, node.input(slot)) : -1;
}

/// Axis `axis` through a Reshape of `in` to `target`: kept when its group holds it as the only axis of
/// size other than 1 on both sides (unit axes moved, added or removed around it).
std::optional<int64_t> ReshapeAxis(const SymShape& in, const SymShape& target, bool allow_zero, int64_t axis,
                                   bool forward) {
  SymShape resolved;
  const std::optional<std::vector<ReshapeGroup>> groups = ReshapeGroups(in, target, allow_zero, &resolved);
  if (!groups) return std::nullopt;
  const SymShape& from_shape = forward ? in : resolved;
  const SymShape& to_shape = forward ? resolved : in;
  auto not_unit = [](const SymShape& shape, const std::vector<size_t>& axes) {
    std::vector<size_t> kept;
    for (size_t a : axes) {
      if (!(shape[a].fixed() && shape[a].value == 1)) kept.push_back(a);
    }
    return kept;
  };
  for (const ReshapeGroup& group : *groups) {
    const std::vector<size_t>& from = forward ? group.in : group.out;
    const std::vector<size_t>& to = forward ? group.out : group.in;
    if (std::find(from.begin(), from.end(), static_cast<size_t>(axis)) == from.end()) continue;
    const std::vector<size_t> from_kept = not_unit(from_shape, from);
    const std::vector<size_t> to_kept = not_unit(to_shape, to);
    if (from_kept.size() == 1 && to_kept.size() == 1 && from_kept[0] == static_cast<size_t>(axis)) {
      return static_cast<int64_t>(to_kept[0]);
    }
    return std::nullopt;
  }
  return std::nullopt;
}

/// Unit axes: `listed` (non-negative, sorted) are the unit axes of the side with more axes, of rank
/// `more_rank`. From the side with more axes, `axis` loses the listed axes before it (none when it is
/// one); from the side with fewer, it is the axis-th axis not listed.
std::optional<int64_t> UnitAxesMap(const std::vector<int64_t>& listed, int64_t axis, bool from_more, int more_rank) {
  if (from_more) {
    if (std::binary_search(listed.begin(), listed.end(), axis)) return std::nullopt;
    return axis - std::count_if(listed.begin(), listed.end(), [&](int64_t a) { return a < axis; });
  }
  for (int64_t a = 0, kept = 0; a < more_rank; ++a) {
    if (!std::binary_search(listed.begin(), listed.end(), a) && kept++ == axis) return a;
  }
  return std::nullopt;
}

/// Squeeze (`insert` false) and Unsqueeze (true), both directions.
std::optional<AxisOf> UnitAxes(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node, AxisOf at,
                               Dir dir, bool insert) {
  const int in_rank = dir == Dir::kForward ? at.rank : InputRank(index, path, node, 0);
  const std::optional<std::vector<int64_t>> axes = AxesOperand(index, path, node);
  if (!axes || in_rank < 0) return std::nullopt;
  const int count = static_cast<int>(axes->size());
  const int out_rank = insert ? in_rank + count : in_rank - count;
  if (out_rank < 0) return std::nullopt;
  const int more_rank = insert ? out_rank : in_rank;
  const std::optional<std::vector<int64_t>> listed = NormalizeAxes(*axes, more_rank);
  if (!listed) return std::nullopt;
  // Forward from the input: the side with more axes unless inserting; backward the other way round.
  const bool from_more = (dir == Dir::kForward) != insert;
  const std::optional<int64_t> axis = UnitAxesMap(*listed, at.axis, from_more, more_rank);
  if (!axis) return std::nullopt;
  return AxisOf{*axis, dir == Dir::kForward ? out_rank : in_rank};
}

/// Transpose: output axis k is input axis perm[k].
std::optional<AxisOf> Permute(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node, AxisOf at,
                              Dir dir) {
  if (dir == Dir::kForward) {
    const std::optional<std::vector<int64_t>> perm = PermOf(node, at.rank);
    if (!perm) return std::nullopt;
    for (size_t k = 0; k < perm->size(); ++k) {
      if ((*perm)[k] == at.axis) return AxisOf{static_cast<int64_t>(k), static_cast<int>(perm->size())};
    }
    return std::nullopt;
  }
  const int in_rank = InputRank(index, path, node, 0);
  const std::optional<std::vector<int64_t>> perm = PermOf(node, in_rank >= 0 ? in_rank : at.rank);
  if (!perm || at.axis >= static_cast<int64_t>(perm->size())) return std::nullopt;
  return AxisOf{(*perm)[static_cast<size_t>(at.axis)], static_cast<int>(perm->size())};
}

/// Reshape: the axis when unit axes alone move around it.
std::optional<AxisOf> Reshape(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node, AxisOf at,
                              Dir dir) {
  if (node.input_size() < 2) return std::nullopt;
  const std::optional<SymShape> shape = ShapeOf(index, path, node.input(0));
  const std::optional<SymShape> target = ShapeValue(index, path, node.input(1));
  const bool forward = dir == Dir::kForward;
  if (!shape || !target || at.axis >= static_cast<int64_t>((forward ? shape : target)->size())) return std::nullopt;
  const std::optional<int64_t> axis =
      ReshapeAxis(*shape, *target, IntAttribute(node, "allowzero", 0) != 0, at.axis, forward);
  if (!axis) return std::nullopt;
  return AxisOf{*axis, static_cast<int>((forward ? target : shape)->size())};
}

/// Broadcasting: operands right-aligned to the output's rank.
std::optional<AxisOf> Broadcast(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node, AxisOf at,
                                Dir dir, AxisPort port) {
  if (port.input >= node.input_size()) return std::nullopt;
  if (dir == Dir::kBackward) {
    const int in_rank = InputRank(index, path, node, port.input);
    if (in_rank < 0 || at.rank < 0 || at.axis - (at.rank - in_rank) < 0) return std::nullopt;
    return AxisOf{at.axis - (at.rank - in_rank), in_rank};
  }
  int out_rank = at.rank;
  for (const std::string& operand : node.input()) {
    if (operand != node.input(port.input)) out_rank = std::max(out_rank, RankOf(index, path, operand));
  }
  // Of unknown rank, the value keeps its axes only when no operand adds leading axes (a vector may).
  if (at.rank < 0) return out_rank > 1 ? std::nullopt : std::optional<AxisOf>(AxisOf{at.axis, -1});
  return AxisOf{at.axis + (out_rank - at.rank), out_rank};
}

/// Reductions: the named axes removed (keepdims 0) or kept as 1.
std::optional<AxisOf> Reduce(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node, AxisOf at,
                             Dir dir) {
  const std::optional<std::vector<int64_t>> named = NamedAxes(index, path, node);
  if (!named || named->empty()) return std::nullopt;
  const bool keep = IntAttribute(node, "keepdims", 1) != 0;
  const int in_rank = dir == Dir::kForward ? at.rank : InputRank(index, path, node, 0);
  std::vector<int64_t> reduced;
  for (int64_t a : *named) {
    const std::optional<int64_t> axis = NormalizeAxis(a, in_rank);
    if (!axis) return std::nullopt;
    reduced.push_back(*axis);
  }
  const int count = static_cast<int>(reduced.size());
  const int out_rank = in_rank < 0 ? -1 : keep ? in_rank : in_rank - count;
  if (dir == Dir::kForward) {
    if (std::count(reduced.begin(), reduced.end(), at.axis) > 0) return std::nullopt;
    const auto before = std::count_if(reduced.begin(), reduced.end(), [&](int64_t a) { return a < at.axis; });
    return AxisOf{keep ? at.axis : at.axis - before, out_rank};
  }
  if (in_rank < 0) return std::nullopt;
  std::sort(reduced.begin(), reduced.end());
  const std::optional<int64_t> axis =
      keep ? std::optional<int64_t>(at.axis) : UnitAxesMap(reduced, at.axis, /*from_more=*/false, in_rank);
  if (!axis || std::binary_search(reduced.begin(), reduced.end(), *axis)) return std::nullopt;
  return AxisOf{*axis, in_rank};
}

/// Gather: the named axis replaced by the indices' axes.
std::optional<AxisOf> Gather(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node, AxisOf at,
                             Dir dir) {
  const int i_rank = InputRank(index, path, node, 1);
  const int64_t attribute = AxisAttribute(node, index.onnx_opset());
  if (dir == Dir::kForward) {
    const std::optional<int64_t> gathered = NormalizeAxis(attribute, at.rank);
    if (!gathered || *gathered == at.axis || i_rank < 0) return std::nullopt;
    return AxisOf{at.axis < *gathered ? at.axis : at.axis + i_rank - 1, at.rank < 0 ? -1 : at.rank + i_rank - 1};
  }
  const int in_rank = InputRank(index, path, node, 0);
  const int64_t gathered = NormalizeAxis(attribute, in_rank).value_or(-1);
  if (i_rank < 0 || in_rank < 0) return std::nullopt;
  if (at.axis < gathered) return AxisOf{at.axis, in_rank};
  if (at.axis >= gathered + i_rank) return AxisOf{at.axis - i_rank + 1, in_rank};
  return std::nullopt;
}

/// Concat and Split: every axis but the named one.
std::optional<AxisOf> JoinOrSplit(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node,
                                  AxisOf at, Dir dir, AxisPort port) {
  const int64_t attribute = AxisAttribute(node, index.onnx_opset());
  if (dir == Dir::kForward) {
    const std::optional<int64_t> named = NormalizeAxis(attribute, at.rank);
    if (!named || *named == at.axis) return std::nullopt;
    return at;
  }
  const int in_rank = InputRank(index, path, node, port.input);
  if (in_rank < 0 || in_rank != at.rank || NormalizeAxis(attribute, in_rank) == at.axis) return std::nullopt;
  return AxisOf{at.axis, in_rank};
}

/// MatMul and Gemm: the leading axes of input 0 (a Gemm's rows unless transA).
std::optional<AxisOf> Contract(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node, AxisOf at,
                               Dir dir, bool gemm) {
  if (gemm && IntAttribute(node, "transA", 0) != 0) return std::nullopt;
  if (dir == Dir::kBackward) {
    const int in_rank = InputRank(index, path, node, 0);
    if (in_rank < 2 || in_rank != at.rank || at.axis >= at.rank - 1) return std::nullopt;
    return AxisOf{at.axis, in_rank};
  }
  if (gemm) return at.axis == 0 ? std::optional<AxisOf>(AxisOf{0, 2}) : std::nullopt;
  const int b_rank = InputRank(index, path, node, 1);
  if (b_rank < 1 || b_rank > 2 || at.rank < 2 || at.axis >= at.rank - 1) return std::nullopt;
  return AxisOf{at.axis, b_rank == 1 ? at.rank - 1 : at.rank};
}

}  // namespace

std::optional<AxisOf> MapAxis(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node, AxisOf at,
                              AxisDirection direction, AxisPort port) {
  if (at.axis < 0 || node.input_size() == 0) return std::nullopt;
  const AxisEffect effect = EffectOf(node, index.onnx_opset());
  const bool forward = direction == Dir::kForward;
  // Every effect but broadcasting and joining maps input 0 alone.
  if (port.input != 0 && effect != AxisEffect::kBroadcast && effect != AxisEffect::kConcat) return std::nullopt;
  switch (effect) {
    case AxisEffect::kSame:
      return at;
    case AxisEffect::kBroadcast:
      return Broadcast(index, path, node, at, direction, port);
    case AxisEffect::kNormalize: {
      if (forward) return at;
      // The shape is kept: the axis, when the ranks inference gives agree.
      const int in_rank = InputRank(index, path, node, 0);
      return in_rank >= 0 && in_rank == at.rank ? std::optional<AxisOf>(at) : std::nullopt;
    }
    case AxisEffect::kPermute:
      return Permute(index, path, node, at, direction);
    case AxisEffect::kRemoveUnit:
    case AxisEffect::kInsertUnit:
      return UnitAxes(index, path, node, at, direction, effect == AxisEffect::kInsertUnit);
    case AxisEffect::kReshape:
      return Reshape(index, path, node, at, direction);
    case AxisEffect::kReduce:
      return Reduce(index, path, node, at, direction);
    case AxisEffect::kCut:
    case AxisEffect::kPad:
    case AxisEffect::kScatter:
      return forward ? at : AxisOf{at.axis, InputRank(index, path, node, 0)};
    case AxisEffect::kGather:
      return Gather(index, path, node, at, direction);
    case AxisEffect::kConcat:
    case AxisEffect::kSplit:
      return JoinOrSplit(index, path, node, at, direction, port);
    case AxisEffect::kMatMul:
    case AxisEffect::kGemm:
      return Contract(index, path, node, at, direction, effect == AxisEffect::kGemm);
    case AxisEffect::kWindow:
      if (at.axis != 0 || (!forward && port.output != 0)) return std::nullopt;
      return AxisOf{0, forward ? at.rank : InputRank(index, path, node, 0)};
    case AxisEffect::kFlatten:
    case AxisEffect::kNone:
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace rnnstate
