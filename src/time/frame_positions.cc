// The frames' own positions within a call, and the Gather that picks every frame by them: how PyTorch
// exports `nn.Unfold` with a kernel of one frame on time (GTCRN's subband feature extraction unfolds
// over frequency only):
//
//   t   = Gather(Shape(v), 2)                 the chunk's length, read from frames v (time on axis 2)
//   pos = Range(0, t, 1)                      positions 0 .. t-1: restart in every chunk
//   idx = Add(Unsqueeze(pos, [0]), [[0]])     the kernel's one offset, 0
//   g   = Gather(Pad(v, frequency only), idx, axis = 2)
//                                             every frame of v once, in order: the frames again
//
// The positions themselves are no frames a chunk reproduces (TimeFact::positions carries a break); only
// views, additions of zeros and such a Gather read them. Anything else that computes with them — an
// offset, a step, a table indexed by them, a Gather of frames of another length — is mixed.
//
// The rules are declared in time_rules.h with those of the operator classes.

#include <algorithm>

#include "graph/proto_access.h"
#include "ops/op_semantics.h"
#include "ops/pad_amounts.h"
#include "time/time_rules.h"
#include "values/constant_value.h"
#include "values/shape_eval.h"

namespace rnnstate {

namespace {

/// How far the structural walks below follow a chain: exports put a handful of nodes in one.
constexpr int kLongestChain = 32;

/// The node of this graph (not an enclosing one) that produces `name`, or nullptr.
const onnx::NodeProto* ProducerHere(const NodeTime& n, const std::string& name) {
  const ResolvedName resolved = n.index.Resolve(n.graph, name);
  return resolved.graph == n.graph ? resolved.node : nullptr;
}

/// `name` is a constant holding one zero (of any rank, every dim 1): adding it changes no value and, as a
/// broadcast, no axis's length.
bool OneZero(const NodeTime& n, const std::string& name) {
  const std::optional<ConstantValue> constant = FindConstant(n.index, n.graph, name);
  const std::optional<std::vector<int64_t>> dims = ConstantDims(n.index, n.graph, name);
  return constant && dims && KnownAllZero(*constant) &&
         std::all_of(dims->begin(), dims->end(), [](int64_t d) { return d == 1; });
}

/// `pad` leaves axis `axis` as it is (ops/pad_amounts; in any mode).
bool PadsNothingOn(const NodeTime& n, const onnx::NodeProto& pad, int64_t axis) {
  const std::optional<AxisPadding> padding =
      PadAmountsOn(n.index, n.graph, pad, axis, RankOf(n.index, n.graph, pad.input(0)));
  return padding && padding->None();
}

/// `data` is `source`, or computed from it by operators that keep every frame where it is along `axis`
/// (elementwise ones, a Pad of other axes): it has as many frames as `source`.
bool HoldsTheFramesOf(const NodeTime& n, std::string data, const std::string& source, int64_t axis) {
  for (int step = 0; step < kLongestChain; ++step) {
    if (data == source) return true;
    const onnx::NodeProto* p = ProducerHere(n, data);
    if (p == nullptr || p->input_size() == 0) return false;
    const bool keeps =
        IsElementwiseUnary(*p) || IsOnnxOp(*p, {"Identity"}) || (IsOnnxOp(*p, {"Pad"}) && PadsNothingOn(n, *p, axis));
    if (!keeps) return false;
    data = p->input(0);
  }
  return false;
}

const char* const kRestart = "restart in every chunk";

}  // namespace

bool AddsZeros(const NodeTime& n, int slot) {
  if (n.node.input_size() != 2 || (slot != 0 && slot != 1)) return false;
  const bool add = IsOnnxOp(n.node, {"Add"}), sub = IsOnnxOp(n.node, {"Sub"}) && slot == 0;
  return (add || sub) && n.OthersSteady(slot) && OneZero(n, n.node.input(1 - slot));
}

std::optional<TimeFact> RangePositions(const NodeTime& n) {
  if (!IsOnnxOp(n.node, {"Range"}) || n.node.input_size() != 3 || !n.OthersSteady(1)) return std::nullopt;
  const TimeFact& limit = n.In(1);
  // The limit is the length of one value's time axis (read from its Shape, time_moves.cc).
  if (limit.kind != TimeFact::Kind::kLength || limit.elements != std::vector<int64_t>{0} ||
      !limit.folded_elements.empty() || limit.length_of.empty()) {
    return std::nullopt;
  }
  if (IntValues(n.index, n.graph, n.node.input(0)) != std::vector<int64_t>{0} ||
      IntValues(n.index, n.graph, n.node.input(2)) != std::vector<int64_t>{1}) {
    return std::nullopt;
  }
  TimeFact out =
      TimeFact::Frames(0, n.Break(std::string("counts the frames' positions within the call, which ") + kRestart));
  out.positions = true;
  out.positions_of = limit.length_of;
  return out;
}

std::optional<TimeFact> PositionsGate(const NodeTime& n) {
  int slot = -1, count = 0;
  for (size_t k = 0; k < n.in.size(); ++k) {
    if (n.In(static_cast<int>(k)).positions) {
      slot = static_cast<int>(k);
      ++count;
    }
  }
  if (count == 0) return std::nullopt;
  const bool gathers_by_them = count == 1 && slot == 1 && IsOnnxOp(n.node, {"Gather"});
  const bool views_them =
      count == 1 && slot == 0 && IsOnnxOp(n.node, {"Identity", "Squeeze", "Unsqueeze"}) && n.OthersSteady(0);
  if (gathers_by_them || views_them || (count == 1 && AddsZeros(n, slot))) return std::nullopt;
  return n.Mixed(std::string("computes with the frames' positions within the call, which ") + kRestart);
}

TimeFact GatherByPositions(const NodeTime& n) {
  const TimeFact& data = n.In(0);
  const TimeFact& positions = n.In(1);
  const int64_t axis = AxisOrNone(AxisAttribute(n.node, n.index.onnx_opset()), n.InRank(0));
  const std::string picks = "picks by the frames' positions within the call, which restart in every chunk, ";
  if (!data.frames()) return n.Mixed(picks + "from a value without time");
  if (axis < 0 || axis != data.axis) return n.Mixed(picks + "along another axis than time");
  if (data.folded || data.sequence || data.context > 0) {
    return n.Mixed(picks + "from frames that are not the chunk's own along their axis");
  }
  if (!HoldsTheFramesOf(n, n.node.input(0), positions.positions_of, axis)) {
    return n.Mixed(picks + "counting the frames of '" + positions.positions_of +
                   "', which are not shown to be as many as those gathered from");
  }
  // Every frame once, in order: the data's frames (and break), time where the indices hold it.
  return MovedTo(data, axis + positions.axis);
}

}  // namespace rnnstate
