// The time rules of the operators that combine elements across an axis: contractions (MatMul, Gemm), which
// keep frames apart unless they contract the time axis, and windows (Conv, ConvTranspose, pooling), which
// keep each frame to itself only with a kernel of one frame.

#include "graph/proto_access.h"
#include "ops/op_semantics.h"
#include "time/time_rules.h"
#include "time/time_window.h"
#include "time/upsample_windows.h"

namespace rnnstate {

namespace {

using Kind = TimeFact::Kind;

/// Where axis `axis` of a MatMul operand of rank `rank` goes in the output of rank `out_rank`, when the
/// operand is A (`a`) or B: the two matrix axes are A's rows / B's columns, the others broadcast batch
/// axes; -1 when it is contracted.
int64_t MatMulAxis(int64_t axis, int rank, int out_rank, bool a, int other_rank) {
  if (rank == 1) return -1;  // a vector's only axis is contracted
  const int64_t contracted = a ? rank - 1 : rank - 2;
  if (axis == contracted) return -1;
  if (axis == (a ? rank - 2 : rank - 1)) {
    if (other_rank == 1) return out_rank - 1;  // the other is a vector: this axis is the last one left
    return a ? out_rank - 2 : out_rank - 1;
  }
  return axis + (out_rank - rank);
}

TimeFact MatMulTime(const NodeTime& n) {
  const TimeFact& a = n.In(0);
  const TimeFact& b = n.In(1);
  const int ra = n.InRank(0), rb = n.InRank(1);
  if (a.kind == Kind::kMixed) return a;
  if (b.kind == Kind::kMixed) return b;
  if (a.kind == Kind::kLength || b.kind == Kind::kLength) return n.Mixed("multiplies by the chunk's length");
  if (a.kind == Kind::kFirst || b.kind == Kind::kFirst) {
    if (a.steady() || b.steady()) return TimeFact::First();
    return n.Mixed("multiplies the first frames by values of later frames");
  }
  const bool frames = a.frames() || b.frames();
  const bool final_state = a.kind == Kind::kFinal || b.kind == Kind::kFinal;
  if (frames && final_state) {
    return n.Mixed(
        "multiplies frames by a value computed from a final state: every frame would need the end of "
        "the sequence");
  }
  if (!frames) return n.FinalOfInputs();
  if (ra < 0 || rb < 0) return n.Mixed("multiplies frames of unknown rank");
  const int out_rank = n.OutRank(0) >= 0 ? n.OutRank(0) : std::max(ra, rb) - (ra == 1 || rb == 1 ? 1 : 0);
  const int64_t from_a = a.frames() ? MatMulAxis(a.axis, ra, out_rank, true, rb) : -2;
  const int64_t from_b = b.frames() ? MatMulAxis(b.axis, rb, out_rank, false, ra) : -2;
  if (from_a == -1 || from_b == -1) return n.Mixed("contracts the time axis (a product summed over frames)");
  if (a.frames() && b.frames()) {
    // Both hold time: fine only as one broadcast batch axis (a product per frame); otherwise frames meet
    // frames across time, as attention does.
    const bool batch_a = a.axis < ra - 2, batch_b = b.axis < rb - 2;
    if (!(batch_a && batch_b && from_a == from_b)) {
      TimeBreak b_break = n.Break("multiplies frames by frames across time (attention over time)");
      b_break.whole = true;
      return TimeFact::Mixed(std::move(b_break));
    }
  }
  TimeFact out = a.frames() ? a : b;
  out.axis = a.frames() ? from_a : from_b;
  if (!out.broken) out.broken = n.InputBreak();
  return out;
}

TimeFact GemmTime(const NodeTime& n) {
  const TimeFact& a = n.In(0);
  const TimeFact& b = n.In(1);
  if (!n.In(2).steady()) return n.Mixed("adds a bias that changes with time");
  if (a.kind == Kind::kMixed) return a;
  if (b.kind == Kind::kMixed) return b;
  if ((a.kind == Kind::kFirst && b.steady()) || (b.kind == Kind::kFirst && a.steady())) return TimeFact::First();
  if (a.frames() && b.steady()) {
    const int64_t rows = IntAttribute(n.node, "transA", 0) != 0 ? 1 : 0;
    if (a.axis != rows) return n.Mixed("contracts the time axis (a product summed over frames)");
    TimeFact out = a;
    out.axis = 0;
    return out;
  }
  if (b.frames() && a.steady()) {
    const int64_t columns = IntAttribute(n.node, "transB", 0) != 0 ? 0 : 1;
    if (b.axis != columns) return n.Mixed("contracts the time axis (a product summed over frames)");
    TimeFact out = b;
    out.axis = 1;
    return out;
  }
  if (!a.frames() && !b.frames() && a.kind != Kind::kLength && b.kind != Kind::kLength) {
    return n.FinalOfInputs();
  }
  return n.Mixed("multiplies values that both change with time");
}

/// A window over frames that hold `x.context` frames of the previous call in front of the chunk: without
/// padding, a window spanning exactly those frames gives the chunk's own frames again (each with all the
/// context it needs; with a stride, one per `stride` frames of chunks whose length is a multiple of it);
/// at stride 1, spanning fewer leaves the rest in front.
TimeFact ContextWindow(const NodeTime& n, const TimeFact& x, const TimeWindow& window) {
  const bool fits = !window.transpose && window.pad_before == 0 && window.pad_after == 0 &&
                    (window.stride == 1 ? window.Span() <= x.context : window.Span() == x.context);
  if (!fits) {
    return n.Mixed(window.Text() + " over frames that hold " + std::to_string(x.context) +
                   " frames of the previous call in front: it needs none before them, and at most that span "
                   "(exactly that span with a stride)");
  }
  TimeFact out = x;
  out.context = x.context - window.Span();
  out.multiple = x.multiple * window.stride;
  return out;
}

/// True when each window lies within `stride` frames of its own (no padding, a span shorter than the
/// stride): chunks whose length is a multiple of the stride hold their windows whole.
bool WindowsApart(const TimeWindow& window) {
  return !window.transpose && window.stride > 1 && window.pad_before == 0 && window.pad_after == 0 &&
         window.Span() < window.stride;
}

}  // namespace

TimeFact ContractionTime(const NodeTime& n) {
  if (n.node.op_type() == "Gemm") return GemmTime(n);
  return MatMulTime(n);
}

TimeFact WindowTime(const NodeTime& n) {
  const TimeFact& x = n.In(0);
  if (!n.OthersSteady(0)) return n.Mixed("convolves with weights that change with time");
  if (x.kind == Kind::kLength) return n.Mixed("convolves the chunk's length");
  if (!x.frames()) return x;
  if (x.axis == 0) return x;  // time in the batch axis: each frame on its own
  if (x.axis == 1) return n.Mixed("combines channels that hold time");
  const std::optional<TimeWindow> window = ReadTimeWindow(n.index, n.graph, n.node, x.axis, n.InRank(0));
  if (!window) return n.Mixed("slides a window of unknown size over time");
  if (std::optional<TimeFact> upsampled = UpsampleTime(n, x, *window)) return *upsampled;
  if (x.context > 0) return ContextWindow(n, x, *window);
  if (window->PerFrame()) return x;
  TimeFact out = x;
  if (WindowsApart(*window)) {
    out.multiple = x.multiple * window->stride;
    return out;
  }
  std::string why = window->Text();
  if (window->transpose) {
    const std::string problem = UpsampleProblem(n.node, *window, x.axis);
    why += problem.empty() ? ": its overlap with the next chunk's frames is lost" : problem;
  } else if (window->pad_before > 0 || window->Span() > 0) {
    why += ": each chunk's first frames lack the frames before them, which the previous chunk held";
  }
  if (window->pad_after > 0 && !window->transpose) {  // a ConvTranspose's pads crop its output
    why +=
        "; it looks " + std::to_string(window->pad_after) + (window->pad_after == 1 ? " frame" : " frames") + " ahead";
  }
  if (window->stride > 1 && !window->transpose) why += "; its stride makes each chunk's frames start a new phase";
  if (out.broken) return out;  // the first break is the one to show
  out.broken = n.Break(why);
  out.broken->past = window->transpose ? window->Span() : window->Span() - window->pad_after;
  out.broken->future = window->pad_after;
  return out;
}

}  // namespace rnnstate
