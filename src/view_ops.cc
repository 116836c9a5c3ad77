#include "view_ops.h"

#include <algorithm>

#include "proto_access.h"
#include "shape_eval.h"

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

std::optional<std::vector<int64_t>> AxesOperand(const ModelIndex& index, const GraphPath& path,
                                                const onnx::NodeProto& node) {
  if (const onnx::AttributeProto* a = FindAttribute(node, "axes")) {
    return std::vector<int64_t>(a->ints().begin(), a->ints().end());
  }
  if (node.input_size() > 1 && !node.input(1).empty()) return IntValues(index, path, node.input(1));
  return std::nullopt;
}

std::vector<int64_t> Normalized(std::vector<int64_t> axes, int64_t rank) {
  for (auto& a : axes) a = a < 0 ? a + rank : a;
  std::sort(axes.begin(), axes.end());
  return axes;
}

void InsertUnitAxes(ElementMap& map, const std::vector<int64_t>& axes) {
  const int64_t rank = static_cast<int64_t>(map.rank() + axes.size());
  for (int64_t a : Normalized(axes, rank)) map.InsertUnit(static_cast<size_t>(a));
}

bool RemoveUnitAxes(ElementMap& map, const std::vector<int64_t>& axes) {
  std::vector<int64_t> sorted = Normalized(axes, static_cast<int64_t>(map.rank()));
  // From the last: removing an axis moves those after it.
  for (auto a = sorted.rbegin(); a != sorted.rend(); ++a) {
    if (!map.RemoveUnit(static_cast<size_t>(*a))) return false;
  }
  return true;
}

std::optional<SliceSpec> SliceOf(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node,
                                 size_t rank) {
  auto operand = [&](int slot, const char* attribute) -> std::optional<std::vector<int64_t>> {
    if (const onnx::AttributeProto* a = FindAttribute(node, attribute)) {
      return std::vector<int64_t>(a->ints().begin(), a->ints().end());
    }
    if (slot < node.input_size() && !node.input(slot).empty()) return IntValues(index, path, node.input(slot));
    return std::vector<int64_t>{};
  };
  SliceSpec spec;
  auto starts = operand(1, "starts"), ends = operand(2, "ends"), axes = operand(3, "axes"), steps = operand(4, "steps");
  if (!starts || !ends || !axes || !steps || starts->size() != ends->size()) return std::nullopt;
  spec.starts = *starts;
  spec.ends = *ends;
  spec.axes = *axes;
  spec.steps = *steps;
  if (spec.axes.empty()) {
    for (size_t i = 0; i < spec.starts.size(); ++i) spec.axes.push_back(static_cast<int64_t>(i));
  }
  if (spec.steps.empty()) spec.steps.assign(spec.starts.size(), 1);
  if (spec.axes.size() != spec.starts.size() || spec.steps.size() != spec.starts.size()) return std::nullopt;
  for (auto& a : spec.axes) a = a < 0 ? a + static_cast<int64_t>(rank) : a;
  return spec;
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
  }
  for (size_t g = groups.size(); g-- > 0;) {
    const std::vector<size_t>& from = forward ? groups[g].in : groups[g].out;
    const std::vector<size_t>& to = forward ? groups[g].out : groups[g].in;
    const SymShape& from_shape = forward ? in : out;
    const SymShape& to_shape = forward ? out : in;
    if (from.size() == 1 && to.size() == 1) continue;
    if (from.empty()) {
      map.InsertUnit(start[g]);
    } else if (to.empty()) {
      if (!map.RemoveUnit(start[g])) return false;
    } else if (to.size() == 1) {
      std::vector<int64_t> sizes;
      for (size_t a : from) sizes.push_back(from_shape[a].value);
      map.Merge(start[g], sizes);
    } else {
      std::vector<int64_t> sizes;
      for (size_t a : to) sizes.push_back(to_shape[a].value);
      if (!map.Split(start[g], sizes)) return false;
    }
  }
  return true;
}

bool SameShape(const SymShape& a, const SymShape& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i].known() || !(a[i] == b[i])) return false;
  }
  return true;
}

/// The constant indices of a ScatterND as rows of coordinates, or nullopt.
std::optional<std::vector<std::vector<int64_t>>> ScatterRows(const ModelIndex& index, const GraphPath& path,
                                                             const std::string& indices) {
  std::optional<std::vector<int64_t>> values = IntValues(index, path, indices);
  std::optional<SymShape> shape = ShapeOf(index, path, indices);
  if (!values || values->empty()) return std::nullopt;
  size_t width = 1;  // Unsqueeze(Range(...), -1) and friends: the last axis of the indices
  if (shape && !shape->empty() && shape->back().fixed()) width = static_cast<size_t>(shape->back().value);
  if (width == 0 || values->size() % width != 0) return std::nullopt;
  std::vector<std::vector<int64_t>> rows;
  for (size_t i = 0; i < values->size(); i += width)
    rows.emplace_back(values->begin() + i, values->begin() + i + width);
  return rows;
}

Overlap RowOverlap(const ElementMap& map, const std::vector<int64_t>& row) {
  bool inside = true;
  for (size_t k = 0; k < row.size() && k < map.rank(); ++k) {
    std::optional<std::pair<int64_t, int64_t>> range = map.Range(k);
    if (range && (row[k] < range->first || row[k] > range->second)) return Overlap::kApart;
    inside &= range && range->first == row[k] && range->second == row[k];
  }
  return inside ? Overlap::kInside : Overlap::kPartly;
}

}  // namespace rnnstate
