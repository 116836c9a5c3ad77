// The time rules of data movement: the operators that select, join, repeat or write elements without
// combining them (Slice, Gather, Concat, Split, Expand, Tile, Pad, ScatterND, ConcatFromSequence).

#include <algorithm>

#include "graph/proto_access.h"
#include "loops/axis_trace.h"
#include "ops/op_semantics.h"
#include "ops/pad_amounts.h"
#include "time/time_rules.h"
#include "values/constant_value.h"
#include "values/shape_eval.h"

namespace rnnstate {

namespace {

using Kind = TimeFact::Kind;

TimeFact SliceTime(const NodeTime& n) {
  const TimeFact& x = n.In(0);
  if (!n.OthersSteady(0)) return n.Mixed("slices at bounds that change with the chunk");
  const SliceOperands operands = SliceOperandsOf(n.index, n.graph, n.node);
  const std::optional<std::vector<int64_t>>&starts = operands.starts, &ends = operands.ends;
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
    const int64_t axis = AxisOrNone(axes[i], rank);
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
  const int64_t axis = AxisOrNone(AxisAttribute(n.node, n.index.onnx_opset()), rank);
  if (indices.positions) return GatherByPositions(n);
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
    out.length_of = data.length_of;
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
  const int64_t axis = AxisOrNone(AxisAttribute(n.node, n.index.onnx_opset()), rank);
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
      if (part.kind == Kind::kLength) {
        const bool first = out.elements.empty() && out.folded_elements.empty();
        out.length_of = first || out.length_of == part.length_of ? part.length_of : "";
      }
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
  if (x.frames() && AxisOrNone(AxisAttribute(n.node, n.index.onnx_opset()), n.InRank(0)) == x.axis) {
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
  // Pad (ops/pad_amounts): in every mode, what it adds to time or cuts from it is each chunk's own.
  const std::optional<AxisPadding> padding = PadAmountsOn(n.index, n.graph, n.node, x.axis, rank);
  if (!padding) return n.Mixed("pads by amounts rnnstate cannot read");
  if (padding->None()) return x;
  const std::string before = std::to_string(padding->begin), after = std::to_string(padding->end);
  TimeFact out = x;
  out.broken = n.Break(padding->Crops() ? "crops time by " + before + " frames before and " + after +
                                              " after (negative: padded): each chunk is cropped on its own"
                                        : "pads time with " + before + " frames before and " + after +
                                              " after: each chunk gets its own padding");
  out.broken->past = std::max<int64_t>(padding->begin, 0);
  out.broken->future = std::max<int64_t>(padding->end, 0);
  return out;
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
    out.axis = AxisAttribute(n.node, n.index.onnx_opset());
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

}  // namespace

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

}  // namespace rnnstate
