// The dispatcher of the time rules by operator class, and the rules of the classes that keep each frame's
// elements where they are: elementwise operators, normalizations and reductions.

#include "time/time_rules.h"

#include <algorithm>

#include "graph/proto_access.h"
#include "loops/axis_trace.h"
#include "ops/op_semantics.h"
#include "values/constant_value.h"
#include "values/shape_eval.h"

namespace rnnstate {

namespace {

const TimeFact kSteadyFact;

/// The fixed size of axis `axis` of input `slot` (1 when the axis does not exist), or -1 when unknown.
int64_t DimOfInput(const NodeTime& n, int slot, int64_t axis) {
  const std::optional<SymShape> shape = ShapeOf(n.index, n.graph, n.node.input(slot));
  if (!shape || axis < 0 || axis >= static_cast<int64_t>(shape->size())) return -1;
  return (*shape)[static_cast<size_t>(axis)].value;
}

/// The axes of input 0 a row's operator names (NamedAxes: its operand, else its default), made
/// non-negative for `rank`; nullopt when they are not constants or out of range, empty when none is named.
std::optional<std::vector<int64_t>> NamedAxesOf(const NodeTime& n, int rank) {
  const std::optional<std::vector<int64_t>> axes = NamedAxes(n.index, n.graph, n.node);
  if (!axes) return std::nullopt;
  return NormalizeAxes(*axes, rank);
}

}  // namespace

int64_t AxisOrNone(int64_t axis, int rank) { return NormalizeAxis(axis, rank).value_or(-1); }

TimeFact MovedTo(const TimeFact& x, int64_t axis) {
  TimeFact out = x;
  out.axis = axis;
  return out;
}

const TimeFact& NodeTime::In(int slot) const {
  return slot >= 0 && static_cast<size_t>(slot) < in.size() && in[slot] != nullptr ? *in[slot] : kSteadyFact;
}

int NodeTime::InRank(int slot) const {
  return slot < node.input_size() && !node.input(slot).empty() ? RankOf(index, graph, node.input(slot)) : -1;
}

int NodeTime::OutRank(int slot) const {
  return slot < node.output_size() && !node.output(slot).empty() ? RankOf(index, graph, node.output(slot)) : -1;
}

std::string NodeLabel(const ModelIndex& index, const GraphPath& graph, int node_index) {
  const onnx::GraphProto* proto = ResolveGraph(index.model(), graph);
  const onnx::NodeProto& node = proto->node(node_index);
  // An unnamed node's label is its index, which a rewrite moves: its output names it steadily.
  return !node.name().empty() || node.output_size() == 0 ? DescribeNode(index.model(), graph, node_index)
                                                         : node.op_type() + " (output '" + node.output(0) + "')";
}

TimeBreak NodeTime::Break(std::string why) const {
  TimeBreak b;
  b.graph = graph;
  b.node = node_index;
  b.op = node.op_type();
  b.what = NodeLabel(index, graph, node_index);
  b.why = std::move(why);
  return b;
}

bool NodeTime::OthersSteady(int slot) const {
  for (size_t k = 0; k < in.size(); ++k) {
    if (static_cast<int>(k) != slot && !In(static_cast<int>(k)).steady()) return false;
  }
  return true;
}

std::optional<TimeBreak> NodeTime::InputBreak() const { return FirstBreak(in); }

TimeFact NodeTime::FinalOfInputs() const {
  TimeFact out = TimeFact::Final(InputBreak());
  for (const TimeFact* f : in) {
    if (f != nullptr && f->kind == TimeFact::Kind::kFinal && !f->origin.empty()) {
      out.origin = f->origin;
      break;
    }
  }
  return out;
}

/// Sequence operators over values without frames (a state packed into a sequence, `--pack sequence`):
/// they keep final states final and steady values steady.
std::optional<TimeFact> SequenceTime(const NodeTime& n) {
  if (!IsOnnxOp(n.node, {"SequenceConstruct", "SequenceAt", "SequenceEmpty", "SequenceInsert", "SequenceErase",
                         "SequenceLength"})) {
    return std::nullopt;
  }
  bool final_seen = false;
  for (size_t k = 0; k < n.in.size(); ++k) {
    const TimeFact& f = n.In(static_cast<int>(k));
    if (f.kind == TimeFact::Kind::kMixed) return f;
    if (!f.steady() && f.kind != TimeFact::Kind::kFinal)
      return n.Mixed("puts values that change with time in a sequence");
    final_seen |= f.kind == TimeFact::Kind::kFinal;
  }
  if (n.node.op_type() == "SequenceLength" || !final_seen) return TimeFact::Steady();
  return n.FinalOfInputs();
}

std::vector<TimeFact> TimeThrough(const NodeTime& n) {
  const OpSemantics* row = FindOpSemantics(n.node, n.index.onnx_opset());
  if (std::optional<TimeFact> sequence = SequenceTime(n)) {
    return std::vector<TimeFact>(std::max(1, n.node.output_size()), *sequence);
  }
  if (std::optional<TimeFact> mixed = PositionsGate(n)) {
    return std::vector<TimeFact>(std::max(1, n.node.output_size()), *mixed);
  }
  if (row == nullptr) {
    return std::vector<TimeFact>(
        std::max(1, n.node.output_size()),
        n.Mixed("is an operator whose effect on time rnnstate does not know (" +
                (n.node.domain().empty() ? std::string() : n.node.domain() + ":") + n.node.op_type() + ")"));
  }
  TimeFact out;
  switch (row->op_class) {
    case OpClass::kElementwiseUnary:
    case OpClass::kElementwiseMany:
      out = ElementwiseTime(n);
      break;
    case OpClass::kNormalization:
      out = NormalizationTime(n);
      break;
    case OpClass::kReduction:
      out = ReductionTime(n);
      break;
    case OpClass::kView:
      out = ViewTime(n);
      break;
    case OpClass::kDataMovement:
      return DataMovementTime(n);
    case OpClass::kContraction:
      out = ContractionTime(n);
      break;
    case OpClass::kWindow:
      out = WindowTime(n);
      break;
    case OpClass::kShapeComputation:
      out = ShapeTime(n);
      break;
  }
  std::vector<TimeFact> outs(std::max(1, n.node.output_size()), out);
  // Dropout's mask and the like follow output 0; a second output of another meaning has no row yet.
  return outs;
}

namespace {

/// Input `k` of an elementwise node is the chunk's length (`f`). The length times steady sizes is time
/// folded with other axes (`Mul(batch, length)`, the first axis of `x.reshape(b * t, f)`); any other
/// arithmetic is no length.
TimeFact LengthArithmeticTime(const NodeTime& n, int k, const TimeFact& f) {
  if (AddsZeros(n, k)) return f;  // nn.Unfold's export adds its padding of 0 to the length
  if (n.node.op_type() == "Mul" && n.OthersSteady(k)) {
    std::vector<int64_t> folded = f.elements;
    folded.insert(folded.end(), f.folded_elements.begin(), f.folded_elements.end());
    // Elements multiplied by a known 0 hold no length (`Shape(x) * [1, 0]`: the batch alone).
    if (n.node.input_size() == 2) {
      const std::optional<std::vector<int64_t>> factor = IntValues(n.index, n.graph, n.node.input(1 - k));
      if (factor && !factor->empty()) {
        auto zero_at = [&](int64_t e) {
          return factor->size() == 1 ? (*factor)[0] == 0
                                     : e >= 0 && e < static_cast<int64_t>(factor->size()) && (*factor)[e] == 0;
        };
        folded.erase(std::remove_if(folded.begin(), folded.end(), zero_at), folded.end());
        if (folded.empty()) return TimeFact::Steady();
      }
    }
    return TimeFact::Length({}, folded);
  }
  return n.Mixed("computes with the chunk's length");
}

/// `frames`, the combined frames of an elementwise node of output rank `rank`, breaks where a steady
/// operand reaches the time axis with more than one element: a fixed length > 1 is a constant of the whole
/// sequence's length (a positional table), which no chunk has.
void BreakOnFixedLengthOperand(const NodeTime& n, int rank, TimeFact& frames) {
  for (int k = 0; k < n.node.input_size(); ++k) {
    if (!n.In(k).steady()) continue;
    const int r = n.InRank(k);
    const int64_t axis = frames.axis - (rank - r);
    const int64_t size = r < 0 || axis < 0 ? 1 : DimOfInput(n, k, axis);
    if (size > 1) {
      frames.broken = n.Break("combines the frames with '" + n.node.input(k) + "', which holds " +
                              std::to_string(size) + " frames along time: a fixed length no chunk has");
      frames.broken->whole = true;
      frames.broken->fixed_length = true;
      break;
    }
  }
}

}  // namespace

TimeFact ElementwiseTime(const NodeTime& n) {
  if (IsElementwiseUnary(n.node)) {
    if (!n.OthersSteady(0)) return n.Mixed("takes a parameter that changes with time");
    const TimeFact& x = n.In(0);
    if (x.kind == TimeFact::Kind::kLength && !IsOnnxOp(n.node, {"Identity", "Cast"})) {
      return n.Mixed("computes with the chunk's length");
    }
    return x;
  }
  int rank = n.OutRank(0);
  for (int k = 0; k < n.node.input_size(); ++k) rank = std::max(rank, n.InRank(k));
  std::optional<TimeFact> frames;  // the combined frames, on the output's axis
  bool final_seen = false, first_seen = false;
  std::string final_name, frames_name;
  for (int k = 0; k < n.node.input_size(); ++k) {
    const TimeFact& f = n.In(k);
    switch (f.kind) {
      case TimeFact::Kind::kSteady:
        break;
      case TimeFact::Kind::kMixed:
        return f;
      case TimeFact::Kind::kLength:
        return LengthArithmeticTime(n, k, f);
      case TimeFact::Kind::kFinal:
        final_seen = true;
        final_name = n.node.input(k);
        break;
      case TimeFact::Kind::kFirst:
        first_seen = true;
        break;
      case TimeFact::Kind::kFrames: {
        const int r = n.InRank(k);
        if (r < 0 || rank < 0) return n.Mixed("broadcasts frames of unknown rank");
        TimeFact moved = f;
        moved.axis = f.axis + (rank - r);
        if (frames && frames->context != moved.context) {
          return n.Mixed("combines frames of which only some hold frames of the previous call");
        }
        if (frames && frames->axis != moved.axis) {
          return n.Mixed("combines frames whose time axes do not line up (axes " + std::to_string(frames->axis) +
                         " and " + std::to_string(moved.axis) + ")");
        }
        if (!frames) {
          frames = moved;
          frames_name = n.node.input(k);
        } else {
          frames->folded = frames->folded || moved.folded;
          frames->outer = frames->outer && moved.outer;
          if (!frames->broken) frames->broken = moved.broken;
        }
        break;
      }
    }
  }
  if (first_seen && (frames || final_seen)) {
    return n.Mixed("combines the first frames with values of later frames");
  }
  if (first_seen) return TimeFact::First();
  if (frames && final_seen) {
    return n.Mixed("combines the frames of '" + frames_name + "' with '" + final_name +
                   "', computed from a final state: every frame would need the end of the sequence");
  }
  if (frames) {
    BreakOnFixedLengthOperand(n, rank, *frames);
    return *frames;
  }
  if (final_seen) return n.FinalOfInputs();
  return TimeFact::Steady();
}

TimeFact NormalizationTime(const NodeTime& n) {
  const OpSemantics* row = FindOpSemantics(n.node, n.index.onnx_opset());
  const TimeFact& x = n.In(0);
  // CumSum's axis is input 1: a constant, steady.
  const int parameters_from = row->axes.input == 1 ? 2 : 1;
  for (int k = parameters_from; k < n.node.input_size(); ++k) {
    if (!n.In(k).steady()) return n.Mixed("normalizes with parameters that change with time");
  }
  if (x.kind == TimeFact::Kind::kLength) return n.Mixed("computes with the chunk's length");
  if (!x.frames()) return x;
  const int rank = n.InRank(0);
  bool mixes = false;
  switch (row->mixing) {
    case AxisMixing::kNone:
    case AxisMixing::kWindow:
      break;
    case AxisMixing::kSpatial:
      mixes = x.axis >= 2;
      break;
    case AxisMixing::kNamedAxes:
    case AxisMixing::kNamedAxisOnward: {
      const std::optional<std::vector<int64_t>> axes = NamedAxesOf(n, rank);
      if (!axes || axes->empty()) {
        mixes = true;
        break;
      }
      const int64_t named = axes->front();
      mixes =
          row->mixing == AxisMixing::kNamedAxes ? std::count(axes->begin(), axes->end(), x.axis) > 0 : x.axis >= named;
      break;
    }
  }
  if (!mixes) return x;
  TimeFact out = x;
  out.broken = n.Break(n.node.op_type() == "CumSum" ? "sums along time from the start of each call"
                                                    : "normalizes over time: every frame needs the whole sequence");
  out.broken->whole = true;
  return out;
}

TimeFact ReductionTime(const NodeTime& n) {
  const OpSemantics* row = FindOpSemantics(n.node, n.index.onnx_opset());
  const TimeFact& x = n.In(0);
  if (!n.OthersSteady(0)) return n.Mixed("reduces along axes that change with time");
  if (x.kind == TimeFact::Kind::kLength) {
    // tf2onnx's trip count `ReduceMax(Unsqueeze(length))`: one element is itself.
    const bool one = (x.elements == std::vector<int64_t>{0} && x.folded_elements.empty()) ||
                     (x.elements.empty() && x.folded_elements == std::vector<int64_t>{0});
    if (KeepsOneElement(n.node) && one && VectorLength(n.index, n.graph, n.node.input(0)).value_or(0) == 1) {
      return x;
    }
    return n.Mixed("computes with the chunk's length");
  }
  if (!x.frames()) return x;
  const int rank = n.InRank(0);
  const bool keep = IntAttribute(n.node, "keepdims", 1) != 0;
  auto over_time = [&](const std::string& how) {
    TimeBreak b = n.Break(how);
    b.whole = true;
    return TimeFact::Mixed(std::move(b));
  };
  if (row->mixing == AxisMixing::kSpatial) {
    if (x.axis >= 2) return over_time("pools over the whole time axis");
    return x;
  }
  std::optional<std::vector<int64_t>> axes = NamedAxesOf(n, rank);
  if (!axes) return n.Mixed("reduces along axes rnnstate cannot read");
  if (axes->empty()) {
    if (IntAttribute(n.node, "noop_with_empty_axes", 0) != 0) return x;
    return over_time("reduces over every axis, time included");
  }
  if (std::count(axes->begin(), axes->end(), x.axis) > 0) return over_time("reduces over time");
  TimeFact out = x;
  if (!keep) out.axis -= std::count_if(axes->begin(), axes->end(), [&](int64_t a) { return a < x.axis; });
  return out;
}

}  // namespace rnnstate
