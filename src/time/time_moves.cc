// The time rules of the operators that move elements without combining them — views (Reshape, Transpose,
// Squeeze, Flatten), data movement (Slice, Gather, Concat, Split, Expand, Tile, Pad) — and of the shape
// computations, whose chunk-length vectors (`Shape(x)`) place the time axis of what they build.

#include <algorithm>
#include <limits>

#include "find/axis_trace.h"
#include "graph/constant_value.h"
#include "graph/int_fold.h"
#include "graph/op_semantics.h"
#include "graph/proto_access.h"
#include "graph/shape_eval.h"
#include "time/time_rules.h"

namespace rnnstate {

namespace {

using Kind = TimeFact::Kind;

/// A bound at or past this is "to the end" (exporters write INT64_MAX, INT32_MAX or 9223372036854775807).
constexpr int64_t kToTheEnd = int64_t{1} << 30;

int64_t Normal(int64_t axis, int rank) { return NormalizeAxis(axis, rank).value_or(-1); }

/// Time moved to `axis`, the rest of `x` kept.
TimeFact MovedTo(const TimeFact& x, int64_t axis) {
  TimeFact out = x;
  out.axis = axis;
  return out;
}

/// `x` on axis `axis` unfolded: the axis holds time alone.
TimeFact Unfolded(const TimeFact& x, int64_t axis) {
  TimeFact out = MovedTo(x, axis);
  out.folded = false;
  out.outer = true;
  return out;
}

bool SameDim(const SymDim& a, const SymDim& b) { return a.known() && a == b; }

/// A Reshape of frames that the axis maps do not follow (op_semantics' AxisForward keeps an axis only
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
  const int64_t f = Normal(IntAttribute(n.node, "axis", 1), rank + 1);
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

/// The constant integer operand of `n` read as attribute `attribute` or input `slot`; nullopt otherwise.
std::optional<std::vector<int64_t>> Ints(const NodeTime& n, const char* attribute, int slot) {
  return IntsOperand(n.index, n.graph, n.node, attribute, slot);
}

TimeFact SliceTime(const NodeTime& n) {
  const TimeFact& x = n.In(0);
  if (!n.OthersSteady(0)) return n.Mixed("slices at bounds that change with the chunk");
  const std::optional<std::vector<int64_t>> starts = Ints(n, "starts", 1), ends = Ints(n, "ends", 2);
  if (!starts || !ends || starts->size() != ends->size()) {
    return x.steady() || x.kind == Kind::kFinal ? x : n.Mixed("slices at bounds rnnstate cannot read");
  }
  std::vector<int64_t> axes(starts->size());
  for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int64_t>(i);
  if (const std::optional<std::vector<int64_t>> given = AxesOperand(n.index, n.graph, n.node)) axes = *given;
  std::vector<int64_t> steps(starts->size(), 1);
  if (n.node.input_size() > 4 && !n.node.input(4).empty()) {
    const std::optional<std::vector<int64_t>> given = IntValues(n.index, n.graph, n.node.input(4));
    if (!given) return n.Mixed("slices with steps rnnstate cannot read");
    steps = *given;
  }
  if (axes.size() != starts->size() || steps.size() != starts->size()) return n.Mixed("slices inconsistently");
  if (x.kind == Kind::kLength) {
    if (starts->size() != 1 || steps[0] != 1) return n.Mixed("slices the chunk's length");
    int64_t begin = (*starts)[0], end = (*ends)[0];
    if (begin < 0 || (end < 0 && end > -kToTheEnd)) {
      // Negative bounds count from the end: the vector's length says where that is.
      const std::optional<int64_t> length = VectorLength(n.index, n.graph, n.node.input(0));
      if (!length) return n.Mixed("slices the chunk's length");
      if (begin < 0) begin = std::max<int64_t>(begin + *length, 0);
      if (end < 0) end = std::max<int64_t>(end + *length, 0);
    }
    return RemapLength(x, [&](int64_t e) -> std::optional<int64_t> {
      if (e >= begin && e < end) return e - begin;
      return std::nullopt;
    });
  }
  if (!x.frames()) return x;
  const int rank = n.InRank(0);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t axis = Normal(axes[i], rank);
    if (axis < 0) return n.Mixed("slices an axis of unknown position");
    if (axis != x.axis) continue;
    const int64_t s = (*starts)[i], e = (*ends)[i];
    const bool to_the_end = e >= kToTheEnd || (n.length > 0 && e >= n.length);
    if (steps[i] == 1 && s == 0 && to_the_end) continue;                           // all of time
    if (steps[i] == 1 && s == -1 && to_the_end) return TimeFact::Final(x.broken);  // the last frame
    // The last frames of a context state's Concat: with at least as many carried in front, the last call
    // holds the sequence's last frames whatever its length (a context's output).
    if (steps[i] == 1 && s < 0 && -s <= x.context && to_the_end) return TimeFact::Final(x.broken);
    if (steps[i] == 1 && s == 0 && e == 1 && x.exact()) return TimeFact::First();  // the first frame
    return n.Mixed("slices frames [" + std::to_string(s) + ":" + (e >= kToTheEnd ? std::string() : std::to_string(e)) +
                   "] of time: each chunk has its own");
  }
  return x;
}

TimeFact GatherTime(const NodeTime& n) {
  const TimeFact& data = n.In(0);
  const TimeFact& indices = n.In(1);
  const int rank = n.InRank(0), index_rank = n.InRank(1);
  const int64_t axis = Normal(IntAttribute(n.node, "axis", 0), rank);
  if (data.kind == Kind::kLength && indices.steady()) {
    const std::optional<std::vector<int64_t>> picked = IntValues(n.index, n.graph, n.node.input(1));
    if (!picked || axis > 0) return n.Mixed("picks from the chunk's length");
    std::optional<int64_t> length;  // needed for negative indices only
    std::vector<int64_t> at(picked->size());
    for (size_t k = 0; k < picked->size(); ++k) {
      at[k] = (*picked)[k];
      if (at[k] < 0 && !length) length = VectorLength(n.index, n.graph, n.node.input(0));
      if (at[k] < 0 && !length) return n.Mixed("picks from the chunk's length");
      if (at[k] < 0) at[k] += *length;
    }
    // Element k of the output is element at[k] of the input: an input position may be picked twice.
    TimeFact out = TimeFact::Length({});
    for (size_t k = 0; k < at.size(); ++k) {
      const TimeFact one = RemapLength(data, [&](int64_t e) -> std::optional<int64_t> {
        return e == at[k] ? std::optional<int64_t>(static_cast<int64_t>(k)) : std::nullopt;
      });
      out.elements.insert(out.elements.end(), one.elements.begin(), one.elements.end());
      out.folded_elements.insert(out.folded_elements.end(), one.folded_elements.begin(), one.folded_elements.end());
    }
    return out.elements.empty() && out.folded_elements.empty() ? TimeFact::Steady() : out;
  }
  if (data.frames() && indices.steady()) {
    if (axis < 0 || index_rank < 0) return n.Mixed("gathers along an axis of unknown position");
    if (axis != data.axis) return MovedTo(data, data.axis < axis ? data.axis : data.axis + index_rank - 1);
    const std::optional<std::vector<int64_t>> picked = IntValues(n.index, n.graph, n.node.input(1));
    if (picked && picked->size() == 1 && (*picked)[0] == -1) return TimeFact::Final(data.broken);  // the last frame
    if (picked && picked->size() == 1 && (*picked)[0] == 0 && data.exact()) return TimeFact::First();
    return n.Mixed("picks frames of time by index: each chunk has its own");
  }
  if (data.steady() && indices.frames()) {
    if (axis < 0) return n.Mixed("gathers along an axis of unknown position");
    return MovedTo(indices, axis + indices.axis);  // an embedding: indices' axes take the gathered axis's place
  }
  if ((data.kind == Kind::kFinal || data.kind == Kind::kFirst) && indices.steady()) return data;
  if (data.kind == Kind::kMixed) return data;
  return n.Mixed("gathers by indices that change with time");
}

TimeFact ConcatTime(const NodeTime& n) {
  const int rank = n.OutRank(0) >= 0 ? n.OutRank(0) : n.InRank(0);
  const int64_t axis = Normal(IntAttribute(n.node, "axis", 0), rank);
  bool any_frames = false, any_final = false, any_length = false, any_first = false;
  for (int k = 0; k < n.node.input_size(); ++k) {
    const TimeFact& f = n.In(k);
    if (f.kind == Kind::kMixed) return f;
    any_first |= f.kind == Kind::kFirst;
    any_frames |= f.frames();
    any_final |= f.kind == Kind::kFinal;
    any_length |= f.kind == Kind::kLength;
  }
  if (any_first) {
    if (any_frames || any_final || any_length) return n.Mixed("joins the first frames with values of later frames");
    return TimeFact::First();
  }
  if (any_length) {
    TimeFact out = TimeFact::Length({});
    int64_t offset = 0;
    for (int k = 0; k < n.node.input_size(); ++k) {
      const std::optional<int64_t> length = VectorLength(n.index, n.graph, n.node.input(k));
      if (!length || any_frames || any_final) return n.Mixed("joins the chunk's length with values of unknown size");
      const TimeFact part = RemapLength(n.In(k), [&](int64_t e) -> std::optional<int64_t> { return offset + e; });
      out.elements.insert(out.elements.end(), part.elements.begin(), part.elements.end());
      out.folded_elements.insert(out.folded_elements.end(), part.folded_elements.begin(), part.folded_elements.end());
      offset += *length;
    }
    return out;
  }
  if (any_frames && any_final) return n.Mixed("joins frames with a final state");
  if (!any_frames) return n.FinalOfInputs();
  std::optional<TimeFact> out;
  for (int k = 0; k < n.node.input_size(); ++k) {
    const TimeFact& f = n.In(k);
    if (!f.frames()) return n.Mixed("joins frames with '" + n.node.input(k) + "', whose length along time is fixed");
    if (out && out->axis != f.axis) return n.Mixed("joins frames whose time axes do not line up");
    if (!out)
      out = f;
    else if (!out->broken)
      out->broken = f.broken;
  }
  if (out->axis == axis) return n.Mixed("joins values along time: each chunk holds its own");
  return *out;
}

std::vector<TimeFact> SplitTime(const NodeTime& n) {
  const TimeFact& x = n.In(0);
  const int outputs = std::max(1, n.node.output_size());
  if (!n.OthersSteady(0)) return std::vector<TimeFact>(outputs, n.Mixed("splits at sizes that change with time"));
  if (x.frames() && Normal(IntAttribute(n.node, "axis", 0), n.InRank(0)) == x.axis) {
    return std::vector<TimeFact>(outputs, n.Mixed("splits the time axis: each chunk has its own parts"));
  }
  if (x.kind == Kind::kLength) return std::vector<TimeFact>(outputs, n.Mixed("splits the chunk's length"));
  return std::vector<TimeFact>(outputs, x);
}

TimeFact ExpandTime(const NodeTime& n) {
  const TimeFact& data = n.In(0);
  const TimeFact& shape = n.In(1);
  if (shape.kind == Kind::kMixed) return shape;
  if (shape.kind == Kind::kFrames || shape.kind == Kind::kFinal) return n.Mixed("expands to a shape read from frames");
  const int rank = n.OutRank(0);
  const std::optional<int64_t> length = VectorLength(n.index, n.graph, n.node.input(1));
  // Output axis `axis` is element `axis - (rank - length)` of the shape vector (both right-aligned).
  auto element = [&](int64_t axis) { return length && rank >= 0 ? axis - (rank - *length) : int64_t{-1}; };
  if (data.frames()) {
    const int r = n.InRank(0);
    if (r < 0 || rank < 0) return n.Mixed("expands frames of unknown rank");
    const int64_t axis = data.axis + (rank - r);
    const int64_t e = element(axis);
    const bool to_length = shape.kind == Kind::kLength && std::count(shape.elements.begin(), shape.elements.end(), e);
    const std::optional<SymShape> target = ShapeValue(n.index, n.graph, n.node.input(1));
    if (!to_length && target && e >= 0 && e < static_cast<int64_t>(target->size())) {
      const SymDim& d = (*target)[static_cast<size_t>(e)];
      if (d.fixed() && d.value > 1) {
        TimeFact out = n.Mixed("expands the time axis to the fixed length " + std::to_string(d.value));
        out.broken->fixed_length = true;
        return out;
      }
    }
    return MovedTo(data, axis);
  }
  if (shape.kind != Kind::kLength) return data;
  if (data.kind == Kind::kFinal) return n.Mixed("repeats a final state over the chunk's frames");
  if (shape.elements.size() != 1) return n.Mixed("expands to the chunk's length on several axes");
  if (!length || rank < 0) return n.Mixed("expands to the chunk's length on an axis of unknown position");
  return TimeFact::Frames(shape.elements.front() + (rank - *length));
}

TimeFact TileOrPadTime(const NodeTime& n) {
  const TimeFact& x = n.In(0);
  if (!n.OthersSteady(0)) return n.Mixed("takes sizes that change with time");
  if (x.kind == Kind::kLength) return n.Mixed("repeats the chunk's length");
  if (!x.frames()) return x;
  const int rank = n.InRank(0);
  if (n.node.op_type() == "Tile") {
    const std::optional<std::vector<int64_t>> repeats = IntValues(n.index, n.graph, n.node.input(1));
    if (!repeats || x.axis >= static_cast<int64_t>(repeats->size()) || (*repeats)[x.axis] != 1) {
      return n.Mixed("repeats frames along time");
    }
    return x;
  }
  // Pad: `pads` (attribute before opset 11, input 1 since) is [begin_0, ..., end_0, ...] over `axes`.
  std::optional<std::vector<int64_t>> pads = Ints(n, "pads", 1);
  if (!pads && n.node.input_size() > 1) {
    // PyTorch computes the amounts of `F.pad` with a chain of constant nodes.
    if (std::optional<IntTensor> folded = FoldInts(n.index, n.graph, n.node.input(1))) pads = folded->values;
  }
  std::vector<int64_t> axes;
  const int rank_of_pads = rank >= 0 ? rank : pads ? static_cast<int>(pads->size() / 2) : -1;
  if (n.node.input_size() > 3 && !n.node.input(3).empty()) {
    const std::optional<std::vector<int64_t>> given = IntValues(n.index, n.graph, n.node.input(3));
    if (!given) return n.Mixed("pads axes rnnstate cannot read");
    for (int64_t a : *given) axes.push_back(Normal(a, rank));
  } else {
    for (int a = 0; a < rank_of_pads; ++a) axes.push_back(a);
  }
  if (!pads || pads->size() != 2 * axes.size()) return n.Mixed("pads by amounts rnnstate cannot read");
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] != x.axis) continue;
    const int64_t before = (*pads)[i], after = (*pads)[i + axes.size()];
    if (before == 0 && after == 0) return x;
    TimeFact out = x;
    out.broken = n.Break("pads time with " + std::to_string(before) + " frames before and " + std::to_string(after) +
                         " after: each chunk gets its own padding");
    out.broken->past = std::max<int64_t>(before, 0);
    out.broken->future = std::max<int64_t>(after, 0);
    return out;
  }
  return x;
}

/// ScatterND, ScatterElements, GatherElements, GatherND, ConcatFromSequence: elements picked or written by
/// index. Without frames among them they only mix final states with steady values (an authors' cache
/// updated with a layer's final state: `ScatterND(cache, [[0]], Y_h)`); the indices must be steady.
TimeFact ScatterOrSelectTime(const NodeTime& n) {
  const std::string& op = n.node.op_type();
  const bool scatter = op == "ScatterND" || op == "ScatterElements";
  if (op == "ConcatFromSequence") {
    const TimeFact& x = n.In(0);
    if (!x.frames() || !x.sequence) return x.frames() ? n.Mixed("concatenates a sequence of frames") : x;
    TimeFact out = x;
    out.sequence = false;
    out.axis = IntAttribute(n.node, "axis", 0);
    if (out.axis < 0) out.axis += n.OutRank(0);
    return out;
  }
  const int index_slot = 1;
  if (!n.In(index_slot).steady()) return n.Mixed("selects or writes elements at indices that change with time");
  std::vector<const TimeFact*> values = {&n.In(0)};
  if (scatter) values.push_back(&n.In(2));
  for (const TimeFact* f : values) {
    if (f->kind == Kind::kMixed) return *f;
    if (!f->steady() && f->kind != Kind::kFinal) return n.Mixed("selects or writes elements by index across time");
  }
  return n.FinalOfInputs();
}

/// The rank of a view's input 0, or where it is not known (an If's output) what the output's rank and the
/// axes squeezed or unsqueezed say it is; -1 when neither does.
int InputRankOfView(const NodeTime& n) {
  const int rank = n.InRank(0);
  const int out = n.OutRank(0);
  if (rank >= 0 || out < 0) return rank;
  const std::string& op = n.node.op_type();
  if (op == "Transpose") return out;
  if (op != "Squeeze" && op != "Unsqueeze") return -1;
  const std::optional<std::vector<int64_t>> axes = AxesOperand(n.index, n.graph, n.node);
  if (!axes) return -1;
  const int count = static_cast<int>(axes->size());
  return op == "Unsqueeze" ? out - count : out + count;
}

/// Where axis `axis` goes through a Squeeze or Unsqueeze whose ranks are unknown (an If's output) but whose
/// axes are listed non-negative: positions count from the front, so no rank is needed.
std::optional<int64_t> UnitAxesOfUnknownRank(const NodeTime& n, int64_t axis) {
  const std::string& op = n.node.op_type();
  if (op != "Squeeze" && op != "Unsqueeze") return std::nullopt;
  std::optional<std::vector<int64_t>> axes = AxesOperand(n.index, n.graph, n.node);
  if (!axes || axes->empty()) return std::nullopt;
  std::sort(axes->begin(), axes->end());
  if (axes->front() < 0 || std::adjacent_find(axes->begin(), axes->end()) != axes->end()) return std::nullopt;
  if (op == "Squeeze") {
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
    return n.Mixed("reshapes to a target that changes with time");
  }
  if (x.kind == Kind::kLength) {
    if (n.InRank(0) <= 1 && n.OutRank(0) <= 1) return x;  // a shape vector as a vector or a scalar
    return n.Mixed("reshapes the chunk's length");
  }
  if (!x.frames()) {
    if (reshape && n.In(1).kind == Kind::kLength) return n.Mixed("reshapes a value to the chunk's length");
    return x;
  }
  if (const std::optional<AxisOf> moved = AxisForward(n.index, n.graph, n.node, AxisOf{x.axis, InputRankOfView(n)})) {
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
  return n.Mixed("moves the time axis in a way rnnstate does not follow");
}

std::vector<TimeFact> DataMovementTime(const NodeTime& n) {
  const std::string& op = n.node.op_type();
  if (op == "Split") return SplitTime(n);
  TimeFact out;
  if (op == "Slice")
    out = SliceTime(n);
  else if (op == "Gather")
    out = GatherTime(n);
  else if (op == "Concat")
    out = ConcatTime(n);
  else if (op == "Expand")
    out = ExpandTime(n);
  else if (op == "Tile" || op == "Pad")
    out = TileOrPadTime(n);
  else
    out = ScatterOrSelectTime(n);
  return std::vector<TimeFact>(std::max(1, n.node.output_size()), out);
}

TimeFact ShapeTime(const NodeTime& n) {
  const std::string& op = n.node.op_type();
  const TimeFact& x = n.In(0);
  if (op == "Shape") {
    if (x.kind == Kind::kMixed) return n.Mixed("reads the shape of a value that depends on time");
    if (!x.frames()) return TimeFact::Steady();
    if (x.context > 0) return n.Mixed("reads the length of frames that hold frames of the previous call");

    const int rank = n.InRank(0);
    const int64_t start = std::clamp<int64_t>(Normal(IntAttribute(n.node, "start", 0), rank), 0, std::max(rank, 0));
    const int64_t end = std::clamp<int64_t>(rank < 0 ? x.axis + 1 : Normal(IntAttribute(n.node, "end", rank), rank + 1),
                                            start, std::max<int64_t>(rank, x.axis + 1));
    if (x.axis < start || x.axis >= end) return TimeFact::Steady();
    if (x.folded) return TimeFact::Length({}, {x.axis - start});  // time times the axes folded with it
    return TimeFact::Length({x.axis - start});
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
  // Range: positions counted from the start of each call.
  return n.Mixed(
      "counts from the start of each call (a Range over the chunk's length): positions restart in every chunk");
}

}  // namespace rnnstate
