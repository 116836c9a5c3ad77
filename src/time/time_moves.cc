// The time rules of the views (Reshape, Transpose, Squeeze, Flatten), which move elements without combining
// them, and of the shape computations, whose chunk-length vectors (`Shape(x)`) place the time axis of what
// they build. Data movement (Slice, Gather, Concat...) is time_data_moves.cc.

#include <algorithm>
#include <limits>

#include "graph/proto_access.h"
#include "loops/axis_trace.h"
#include "ops/axis_map.h"
#include "ops/int_fold.h"
#include "ops/op_semantics.h"
#include "time/time_rules.h"
#include "values/constant_value.h"
#include "values/reshape_groups.h"
#include "values/shape_eval.h"

namespace rnnstate {

namespace {

using Kind = TimeFact::Kind;



/// `x` on axis `axis` unfolded: the axis holds time alone.
TimeFact Unfolded(const TimeFact& x, int64_t axis) {
  TimeFact out = MovedTo(x, axis);
  out.folded = false;
  out.outer = true;
  return out;
}

bool SameDim(const SymDim& a, const SymDim& b) { return a.known() && a == b; }

/// A Reshape of frames that the axis maps do not follow (axis_map's MapAxis keeps an axis only
/// through unit axes): time merged with its neighbours into one output axis (`[T, B, H]` -> `[T*B, H]`:
/// folded, outermost), or a folded axis split so that one output axis holds the chunk's length again
/// (`[B*T, F]` -> `[B, T, F]`, the length read from `Shape(x)` or written -1 beside steady sizes).
std::optional<TimeFact> ReshapeFold(const NodeTime& n, const TimeFact& x) {
  const std::optional<SymShape> in = ShapeOf(n.index, n.graph, n.node.input(0));
  const std::optional<SymShape> target = ShapeValue(n.index, n.graph, n.node.input(1));
  if (!in || !target || x.axis >= static_cast<int64_t>(in->size())) return std::nullopt;
  const size_t t = static_cast<size_t>(x.axis);
  SymShape resolved;
  if (const auto groups = ReshapeGroups(*in, *target, IntAttribute(n.node, "allowzero", 0) != 0, &resolved)) {
    for (const ReshapeGroup& group : *groups) {
      if (std::find(group.in.begin(), group.in.end(), t) == group.in.end()) continue;
      if (group.out.size() != 1) break;
      // Time merged with the other axes of its group: outermost when every axis before it there is 1.
      TimeFact out = MovedTo(x, static_cast<int64_t>(group.out.front()));
      out.folded = true;
      for (size_t a : group.in) {
        if (a < t && !((*in)[a].fixed() && (*in)[a].value == 1)) out.outer = false;
      }
      out.outer = out.outer && x.outer;
      return out;
    }
  }
  if (!x.folded) return std::nullopt;
  // Split a folded axis: the axes before and after it must reappear unchanged around the split.
  const size_t rank = in->size(), out_rank = target->size();
  for (size_t i = 0; i < t; ++i) {
    if (i >= out_rank || !SameDim((*in)[i], (*target)[i])) return std::nullopt;
  }
  size_t after = rank - 1 - t;
  if (out_rank < t + after + 1) return std::nullopt;
  for (size_t j = 0; j < after; ++j) {
    const SymDim& a = (*in)[rank - 1 - j];
    const SymDim& b = (*target)[out_rank - 1 - j];
    if (!SameDim(a, b) && !(b.fixed() && b.value == 0)) return std::nullopt;
  }
  const TimeFact& shape = n.In(1);
  std::vector<size_t> candidates;
  for (size_t o = t; o < out_rank - after; ++o) {
    const bool length = shape.kind == Kind::kLength &&
                        std::count(shape.elements.begin(), shape.elements.end(), static_cast<int64_t>(o)) > 0;
    if (length) candidates.push_back(o);
  }
  if (candidates.empty()) {
    // `-1` where the length goes, every other part of the split known.
    const std::optional<std::vector<int64_t>> values = IntValues(n.index, n.graph, n.node.input(1));
    for (size_t o = t; o < out_rank - after; ++o) {
      const bool inferred = values && o < values->size() && (*values)[o] == -1;
      if (inferred)
        candidates.push_back(o);
      else if (!(*target)[o].known())
        return std::nullopt;
    }
  }
  if (candidates.size() != 1) return std::nullopt;
  return Unfolded(x, static_cast<int64_t>(candidates.front()));
}

/// The product of `dims` [from, to), or -1 when one of them is not a fixed size.
int64_t KnownProduct(const SymShape& dims, size_t from, size_t to) {
  int64_t product = 1;
  for (size_t i = from; i < to && i < dims.size(); ++i) {
    if (!dims[i].fixed()) return -1;
    product *= dims[i].value;
  }
  return product;
}

/// A Reshape whose target is built from the chunk's length (`Concat(Shape(x)[0], Shape(x)[1], [-1])`,
/// `Concat(Mul(b, t), [F, C])`): time lands where the target holds the length — alone where it holds it
/// exactly, folded with other axes where it holds it times steady sizes — provided the axes after time
/// keep their number of elements (where the sizes are known).
std::optional<TimeFact> ReshapeByLength(const NodeTime& n, const TimeFact& x) {
  const TimeFact& target = n.In(1);
  const std::optional<int64_t> out_rank = VectorLength(n.index, n.graph, n.node.input(1));
  // The input's shape only checks the sizes after time (an input of unknown shape is taken as it is).
  const std::optional<SymShape> in = ShapeOf(n.index, n.graph, n.node.input(0));
  if (!out_rank || (in && x.axis >= static_cast<int64_t>(in->size()))) return std::nullopt;
  const bool exact = target.elements.size() == 1 && target.folded_elements.empty();
  const bool folded = target.elements.empty() && target.folded_elements.size() == 1;
  if (!exact && !folded) return std::nullopt;
  const int64_t p = exact ? target.elements.front() : target.folded_elements.front();
  const std::optional<SymShape> values = ShapeValue(n.index, n.graph, n.node.input(1));
  const int64_t after_in = in ? KnownProduct(*in, static_cast<size_t>(x.axis) + 1, in->size()) : -1;
  const int64_t after_out = values && static_cast<int64_t>(values->size()) == *out_rank
                                ? KnownProduct(*values, static_cast<size_t>(p) + 1, values->size())
                                : -1;
  if (after_in >= 0 && after_out >= 0 && after_in != after_out) return std::nullopt;
  if (exact) return Unfolded(x, p);
  TimeFact out = MovedTo(x, p);
  out.folded = true;
  // Outermost in the fold only where nothing before time is folded in: every axis before it is 1.
  out.outer = x.outer && p == 0 && in && KnownProduct(*in, 0, static_cast<size_t>(x.axis)) == 1;
  return out;
}

/// Flatten at `axis`: time lands in output axis 0 or 1, alone when the other axes of its side are 1.
TimeFact FlattenTime(const NodeTime& n, const TimeFact& x) {
  const int rank = n.InRank(0);
  const int64_t f = AxisOrNone(AxisAttribute(n.node, n.index.onnx_opset()), rank + 1);
  const std::optional<SymShape> in = ShapeOf(n.index, n.graph, n.node.input(0));
  if (rank < 0 || f < 0 || !in) return n.Mixed("flattens the time axis with axes of unknown size");
  const int64_t from = x.axis < f ? 0 : f, to = x.axis < f ? f : rank;
  TimeFact out = MovedTo(x, x.axis < f ? 0 : 1);
  for (int64_t a = from; a < to; ++a) {
    const SymDim& d = (*in)[static_cast<size_t>(a)];
    if (a == x.axis || (d.fixed() && d.value == 1)) continue;
    out.folded = true;
    if (a < x.axis) out.outer = false;
  }
  return out;
}

/// The rank of a view's input 0, or where it is not known (an If's output) what the output's rank and the
/// axes squeezed or unsqueezed say it is; -1 when neither does.
int InputRankOfView(const NodeTime& n) {
  const int rank = n.InRank(0);
  const int out = n.OutRank(0);
  if (rank >= 0 || out < 0) return rank;
  const AxisEffect effect = EffectOf(n.node, n.index.onnx_opset());
  if (effect == AxisEffect::kPermute) return out;
  if (effect != AxisEffect::kRemoveUnit && effect != AxisEffect::kInsertUnit) return -1;
  const std::optional<std::vector<int64_t>> axes = AxesOperand(n.index, n.graph, n.node);
  if (!axes) return -1;
  const int count = static_cast<int>(axes->size());
  return effect == AxisEffect::kInsertUnit ? out - count : out + count;
}

/// Where axis `axis` goes through a Squeeze or Unsqueeze whose ranks are unknown (an If's output) but whose
/// axes are listed non-negative: positions count from the front, so no rank is needed.
std::optional<int64_t> UnitAxesOfUnknownRank(const NodeTime& n, int64_t axis) {
  const AxisEffect effect = EffectOf(n.node, n.index.onnx_opset());
  if (effect != AxisEffect::kRemoveUnit && effect != AxisEffect::kInsertUnit) return std::nullopt;
  std::optional<std::vector<int64_t>> axes = AxesOperand(n.index, n.graph, n.node);
  if (!axes || axes->empty()) return std::nullopt;
  std::sort(axes->begin(), axes->end());
  if (axes->front() < 0 || std::adjacent_find(axes->begin(), axes->end()) != axes->end()) return std::nullopt;
  if (effect == AxisEffect::kRemoveUnit) {
    if (std::binary_search(axes->begin(), axes->end(), axis)) return std::nullopt;
    return axis - std::count_if(axes->begin(), axes->end(), [&](int64_t a) { return a < axis; });
  }
  for (int64_t a : *axes) axis += a <= axis ? 1 : 0;
  return axis;
}

}  // namespace

TimeFact ViewTime(const NodeTime& n) {
  const TimeFact& x = n.In(0);
  const bool reshape = n.node.op_type() == "Reshape";
  if (reshape && n.node.input_size() > 1 && n.In(1).kind != Kind::kSteady && n.In(1).kind != Kind::kLength) {
    if (n.In(1).kind == Kind::kMixed) return n.In(1);  // the target's own break says where time was lost
    return n.Mixed("reshapes to a target that changes with time");
  }
  if (x.kind == Kind::kLength) {
    if (n.InRank(0) <= 1 && n.OutRank(0) <= 1) return x;  // a shape vector as a vector or a scalar
    return n.Mixed("reshapes the chunk's length");
  }
  if (!x.frames()) {
    if (reshape && n.In(1).kind == Kind::kLength && x.kind != Kind::kMixed)
      return n.Mixed("reshapes a value to the chunk's length");
    return x;
  }
  if (const std::optional<AxisOf> moved = MapAxis(n.index, n.graph, n.node, AxisOf{x.axis, InputRankOfView(n)}, AxisDirection::kForward)) {
    return MovedTo(x, moved->axis);
  }
  if (reshape && n.In(1).kind == Kind::kLength) {
    if (std::optional<TimeFact> placed = ReshapeByLength(n, x)) return *placed;
  }
  if (std::optional<int64_t> axis = UnitAxesOfUnknownRank(n, x.axis)) return MovedTo(x, *axis);
  if (n.node.op_type() == "Flatten") return FlattenTime(n, x);
  if (reshape) {
    if (std::optional<TimeFact> folded = ReshapeFold(n, x)) return *folded;
  }
  if (reshape && !ShapeOf(n.index, n.graph, n.node.input(0))) {
    return n.Mixed("moves the time axis in a way rnnstate does not follow (the shape of its input is unknown)");
  }
  return n.Mixed("moves the time axis in a way rnnstate does not follow");
}

TimeFact ShapeTime(const NodeTime& n) {
  const std::string& op = n.node.op_type();
  const TimeFact& x = n.In(0);
  if (op == "Shape") {
    if (x.kind == Kind::kMixed) return x;  // the value's own break says where time was lost
    if (!x.frames()) return TimeFact::Steady();
    if (x.context > 0) return n.Mixed("reads the length of frames that hold frames of the previous call");

    const int rank = n.InRank(0);
    const int64_t start = std::clamp<int64_t>(AxisOrNone(IntAttribute(n.node, "start", 0), rank), 0, std::max(rank, 0));
    const int64_t end = std::clamp<int64_t>(rank < 0 ? x.axis + 1 : AxisOrNone(IntAttribute(n.node, "end", rank), rank + 1),
                                            start, std::max<int64_t>(rank, x.axis + 1));
    if (x.axis < start || x.axis >= end) return TimeFact::Steady();
    if (x.folded) return TimeFact::Length({}, {x.axis - start});  // time times the axes folded with it
    TimeFact length = TimeFact::Length({x.axis - start});
    length.length_of = n.node.input(0);
    return length;
  }
  if (op == "Size") {
    if (x.frames() || x.kind == Kind::kMixed)
      return n.Mixed("counts the elements of frames: each chunk has its own count");
    return TimeFact::Steady();
  }
  if (op == "ConstantOfShape") {
    if (x.kind != Kind::kLength) return x.steady() ? x : n.Mixed("makes a tensor of a shape that changes with time");
    if (x.elements.size() + x.folded_elements.size() != 1) {
      return n.Mixed("makes a tensor of the chunk's length on several axes");
    }
    if (x.elements.empty()) {
      TimeFact out = TimeFact::Frames(x.folded_elements.front());
      out.folded = true;
      out.outer = false;
      return out;
    }
    return TimeFact::Frames(x.elements.front());
  }
  // Range: positions counted from the start of each call; from 0 in steps of 1, the frames' own.
  if (std::optional<TimeFact> positions = RangePositions(n)) return *positions;
  return n.Mixed(
      "counts from the start of each call (a Range over the chunk's length): positions restart in every chunk");
}

}  // namespace rnnstate
