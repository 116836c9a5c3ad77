#include "exposure/view_ops.h"

#include <algorithm>

#include "graph/proto_access.h"
#include "ops/slice_bounds.h"
#include "states/state_origin.h"
#include "values/reshape_groups.h"
#include "values/shape_eval.h"

namespace rnnstate {

std::string Where(const onnx::NodeProto& node, int index) {
  return node.op_type() + " '" + NodeLabel(node, index) + "'";
}

int32_t ElemType(const ModelIndex& index, const GraphPath& path, const std::string& name) {
  const onnx::TypeProto* type = index.TypeOf(path, name);
  return type != nullptr && type->has_tensor_type() ? type->tensor_type().elem_type() : 0;
}

/// True when every value of element type `narrow` is exactly a value of `wide`.
bool Represents(int32_t wide, int32_t narrow) {
  if (wide == narrow || narrow == 0 || wide == 0) return true;
  using T = onnx::TensorProto;
  switch (wide) {
    case T::DOUBLE:
      return narrow == T::FLOAT || narrow == T::FLOAT16 || narrow == T::BFLOAT16;
    case T::FLOAT:
      return narrow == T::FLOAT16 || narrow == T::BFLOAT16;
    default:
      return false;
  }
}

bool Lossless(const std::vector<int32_t>& chain, int32_t source) {
  return std::all_of(chain.begin(), chain.end(), [&](int32_t t) { return Represents(t, source); });
}

bool InsertUnitAxes(ElementMap& map, const std::vector<int64_t>& axes) {
  std::optional<std::vector<int64_t>> sorted = NormalizeAxes(axes, static_cast<int64_t>(map.rank() + axes.size()));
  if (!sorted) return false;
  // Ascending positions of the result, each at most the rank reached so far: every insertion succeeds.
  for (int64_t a : *sorted) {
    if (!map.InsertUnit(static_cast<size_t>(a))) return false;
  }
  return true;
}

bool RemoveUnitAxes(ElementMap& map, const std::vector<int64_t>& axes) {
  std::optional<std::vector<int64_t>> sorted = NormalizeAxes(axes, static_cast<int64_t>(map.rank()));
  if (!sorted) return false;
  ElementMap removed = map;
  // From the last: removing an axis moves those after it.
  for (auto a = sorted->rbegin(); a != sorted->rend(); ++a) {
    if (!removed.RemoveUnit(static_cast<size_t>(*a))) return false;
  }
  map = std::move(removed);
  return true;
}

std::optional<SliceSpec> SliceOf(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node,
                                 size_t rank) {
  std::optional<SliceBounds> bounds = ConstantSliceBounds(index, path, node);
  if (!bounds || bounds->starts.size() != bounds->ends.size()) return std::nullopt;
  SliceSpec spec;
  spec.starts = std::move(bounds->starts);
  spec.ends = std::move(bounds->ends);
  spec.axes = std::move(bounds->axes);
  spec.steps = std::move(bounds->steps);
  if (spec.axes.empty()) {
    for (size_t i = 0; i < spec.starts.size(); ++i) spec.axes.push_back(static_cast<int64_t>(i));
  }
  if (spec.steps.empty()) spec.steps.assign(spec.starts.size(), 1);
  if (spec.axes.size() != spec.starts.size() || spec.steps.size() != spec.starts.size()) return std::nullopt;
  for (auto& a : spec.axes) {
    std::optional<size_t> axis = AxisIndex(a, rank);
    if (!axis) return std::nullopt;
    a = static_cast<int64_t>(*axis);
  }
  if (!NormalizeAxes(spec.axes, static_cast<int64_t>(rank))) return std::nullopt;  // an axis listed twice
  if (std::find(spec.steps.begin(), spec.steps.end(), 0) != spec.steps.end()) return std::nullopt;
  return spec;
}

std::optional<SliceAxis> ResolveSliceAxis(int64_t start, int64_t end, int64_t step, const SymDim& dim) {
  if (step == 0) return std::nullopt;
  // ceil(span / |step|) for span >= 0, without overflow (|INT64_MIN| does not fit).
  auto count = [](int64_t span, int64_t by) -> int64_t {
    if (span <= 0) return 0;
    const uint64_t magnitude = by > 0 ? static_cast<uint64_t>(by) : static_cast<uint64_t>(-(by + 1)) + 1;
    const uint64_t u = static_cast<uint64_t>(span);
    return static_cast<int64_t>(u / magnitude + (u % magnitude != 0 ? 1 : 0));
  };
  SliceAxis axis;
  axis.step = step;
  if (!dim.fixed()) {
    // Without the size, only a start counted from the front of a forward slice is known.
    if (start < 0 || step < 0) return std::nullopt;
    axis.start = start;
    if (end >= 0) axis.limit = count(end - start, step);
    return axis;
  }
  const int64_t d = dim.value;
  if (start < 0) start += d;  // start >= INT64_MIN + 0: no overflow, d >= 0
  if (end < 0) end += d;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, d);
    end = std::clamp<int64_t>(end, 0, d);
    axis.limit = count(end - start, step);
  } else {
    start = std::clamp<int64_t>(start, 0, std::max<int64_t>(d - 1, 0));
    end = std::clamp<int64_t>(end, -1, d - 1);
    axis.limit = d == 0 ? 0 : count(start - end, step);
  }
  axis.start = start;
  return axis;
}

/// Applies Reshape groups to `map` (over the input's axes when `forward`, else over the output's).
bool ApplyReshape(const std::vector<ReshapeGroup>& groups, const SymShape& in, const SymShape& out, bool forward,
                  ElementMap& map) {
  // Positions of each group's axes on the side the map is over, before any change; processed from the
  // last group so that earlier positions stay valid.
  std::vector<size_t> start(groups.size());
  size_t position = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    start[g] = position;
    position += forward ? groups[g].in.size() : groups[g].out.size();
    for (size_t a : groups[g].in) {
      if (a >= in.size()) return false;
    }
    for (size_t a : groups[g].out) {
      if (a >= out.size()) return false;
    }
  }
  if (position != map.rank()) return false;  // the shapes inference gave are not the map's
  ElementMap result = map;
  for (size_t g = groups.size(); g-- > 0;) {
    const std::vector<size_t>& from = forward ? groups[g].in : groups[g].out;
    const std::vector<size_t>& to = forward ? groups[g].out : groups[g].in;
    const SymShape& from_shape = forward ? in : out;
    const SymShape& to_shape = forward ? out : in;
    if (from.size() == 1 && to.size() == 1) continue;
    std::vector<int64_t> sizes;
    for (size_t a : to.size() == 1 ? from : to) sizes.push_back((to.size() == 1 ? from_shape : to_shape)[a].value);
    const bool done = from.empty()     ? result.InsertUnit(start[g])
                      : to.empty()     ? result.RemoveUnit(start[g])
                      : to.size() == 1 ? result.Merge(start[g], sizes)
                                       : result.Split(start[g], sizes);
    if (!done) return false;
  }
  map = std::move(result);
  return true;
}

bool SameShape(const SymShape& a, const SymShape& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i].known() || !(a[i] == b[i])) return false;
  }
  return true;
}

bool ScatterSpec::Duplicated(size_t r) const {
  for (size_t o = 0; o < rows.size(); ++o) {
    if (o != r && rows[o] == rows[r]) return true;
  }
  return false;
}

std::optional<ScatterSpec> ScatterOf(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node,
                                     const std::optional<SymShape>& data, std::string* why) {
  ScatterSpec spec;
  const onnx::AttributeProto* reduction = FindAttribute(node, "reduction");
  spec.reduction = reduction != nullptr && !reduction->s().empty() ? reduction->s() : "none";
  std::optional<std::vector<int64_t>> values =
      node.input_size() > 2 ? IntValues(index, path, node.input(1)) : std::nullopt;
  std::optional<SymShape> shape = node.input_size() > 2 ? ShapeOf(index, path, node.input(1)) : std::nullopt;
  if (!values || !shape || shape->empty()) {
    *why = " writes at indices that are not constants";
    return std::nullopt;
  }
  // The last axis must be known; one other axis may not be (computed indices, Unsqueeze(Range(...), -1)):
  // the number of values decides it.
  uint64_t count = 1;
  std::optional<size_t> unknown;
  for (size_t i = 0; i < shape->size(); ++i) {
    const SymDim& d = (*shape)[i];
    if (!d.fixed() && !unknown && i + 1 < shape->size()) {
      unknown = i;
    } else if (!d.fixed() || __builtin_mul_overflow(count, static_cast<uint64_t>(d.value), &count)) {
      *why = " writes at indices of unknown shape";
      return std::nullopt;
    }
  }
  if (count == 0 || values->size() % count != 0 || (!unknown && count != values->size())) {
    *why = " writes at indices that do not fit its data";
    return std::nullopt;
  }
  const auto width = static_cast<size_t>(shape->back().value);
  if (data && width > data->size()) {
    *why = " writes at indices that do not fit its data";
    return std::nullopt;
  }
  for (size_t i = 0; i + 1 < shape->size(); ++i) {
    spec.lead.push_back(unknown && i == *unknown ? static_cast<int64_t>(values->size() / count) : (*shape)[i].value);
  }
  for (size_t i = 0; i < values->size(); i += width) {
    std::vector<int64_t> row(values->begin() + static_cast<std::ptrdiff_t>(i),
                             values->begin() + static_cast<std::ptrdiff_t>(i + width));
    for (size_t k = 0; k < row.size(); ++k) {
      const SymDim dim = data && k < data->size() ? (*data)[k] : SymDim{};
      if (dim.fixed() ? (row[k] < -dim.value || row[k] >= dim.value) : row[k] < 0) {
        *why = " writes at index " + std::to_string(row[k]) +
               (dim.fixed() ? ", out of range" : " of an axis of unknown size");
        return std::nullopt;
      }
      if (row[k] < 0) row[k] += dim.value;
    }
    spec.rows.push_back(std::move(row));
  }
  return spec;
}

Overlap RowOverlap(const ElementMap& map, const std::vector<int64_t>& row) {
  if (row.size() > map.rank()) return Overlap::kPartly;
  bool inside = true;
  for (size_t k = 0; k < row.size(); ++k) {
    std::optional<std::pair<int64_t, int64_t>> range = map.Range(k);
    if (range && (row[k] < range->first || row[k] > range->second)) return Overlap::kApart;
    inside &= range && range->first == row[k] && range->second == row[k];
  }
  return inside ? Overlap::kInside : Overlap::kPartly;
}

bool AddsZero(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node, int slot, size_t rank) {
  if (!IsOnnxDomain(node.domain()) || node.input_size() != 2 || slot < 0 || slot > 1) return false;
  if (node.op_type() != "Add" && !(node.op_type() == "Sub" && slot == 0)) return false;
  const std::string& other = node.input(1 - slot);
  const std::optional<SymShape> shape = ShapeOf(index, path, other);
  if (!shape || shape->size() > rank) return false;
  for (const SymDim& dim : *shape) {
    if (!dim.fixed() || dim.value != 1) return false;
  }
  return IsProvablyZero(index, path, other);
}

bool InferenceDropout(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node) {
  // A bool constant false is all zero bytes.
  return node.input_size() < 3 || node.input(2).empty() || IsProvablyZero(index, path, node.input(2));
}

}  // namespace rnnstate
