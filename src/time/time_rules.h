#pragma once
/// \file
/// What each operator of the table (ops/op_semantics.h) does to time: one transfer function per class
/// of operator, from the facts of a node's inputs to those of its outputs (time_fact.h). The flow
/// (time_flow.h) runs them node by node; recurrent operators and control flow are the flow's own.
///
///   Relu(x)                    frames on axis a        -> frames on axis a
///   MatMul(x, W)               frames on a row axis    -> frames on the same axis (W steady)
///   ReduceMean(x, axes=[t])    frames on axis t        -> mixed: reduces over time
///   Conv(x, W) kernel 5 on t   frames on axis t        -> frames on axis t, inexact: a window of 5 frames
///   Gather(Y, -1, axis=t)      frames on axis t        -> final: the last frame
///   ConstantOfShape(Shape(x))  length at [t]           -> frames on axis t

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>
#include <vector>

#include "graph/model_index.h"
#include "time/time_fact.h"

namespace rnnstate {

/// One node as a rule sees it: where it is, and the facts of its inputs.
struct NodeTime {
  const ModelIndex& index;
  const GraphPath& graph;
  int node_index = -1;
  const onnx::NodeProto& node;
  std::vector<const TimeFact*> in;  ///< one per input slot (a steady fact for an omitted input)
  /// The time axis's fixed length in an export without dynamic axes (-1: symbolic): a Slice to it runs to
  /// the end.
  int64_t length = -1;

  const TimeFact& In(int slot) const;
  /// The rank of input `slot` / output `slot`, declared or inferred; -1 when unknown.
  int InRank(int slot) const;
  int OutRank(int slot) const;
  /// A break at this node: "Op 'name'" and `why`.
  TimeBreak Break(std::string why) const;
  /// Every input but `slot` is steady.
  bool OthersSteady(int slot) const;
  /// The first break among the inputs, or nullopt.
  std::optional<TimeBreak> InputBreak() const;
  /// A final fact computed from the inputs: their first break, the first final input's origin.
  TimeFact FinalOfInputs() const;
  /// A mixed fact for an input that is not what the rule can follow.
  TimeFact Mixed(std::string why) const { return TimeFact::Mixed(Break(std::move(why))); }
};

/// "Conv 'enc.0'", or "Conv (output 'c')" for an unnamed node: how messages name node `node_index` of the
/// graph at `graph`.
std::string NodeLabel(const ModelIndex& index, const GraphPath& graph, int node_index);

/// The facts of the outputs of `n.node`, an operator of the default domain or an unknown one (then mixed
/// where any input is not steady). Called only when some input is not steady.
std::vector<TimeFact> TimeThrough(const NodeTime& n);

/// A bound at or past this is "to the end" (exporters write INT64_MAX, INT32_MAX or 9223372036854775807).
constexpr int64_t kToTheEnd = int64_t{1} << 30;

/// `axis` made non-negative for `rank` (NormalizeAxis), -1 when it cannot be.
int64_t AxisOrNone(int64_t axis, int rank);

/// `x` with time moved to `axis`, the rest kept.
TimeFact MovedTo(const TimeFact& x, int64_t axis);

// The frames' positions within a call and the Gather that picks every frame by them (frame_positions.cc).
/// `Range(0, t, 1)` where `t` is the chunk's length read from the shape of a value of this graph: the
/// frames' positions (axis 0), counting that value's frames. nullopt for any other Range (another start or
/// step, a length of another axis), which the caller judges as before.
std::optional<TimeFact> RangePositions(const NodeTime& n);

/// True when `n` adds zero to its input `slot` (`Add(x, 0)`, `Add(0, x)`, `Sub(x, 0)`): the other operand a
/// constant holding one zero (every dim 1). Such an addition keeps a length or positions as they are.
bool AddsZeros(const NodeTime& n, int slot);

/// For a node that reads positions: a mixed fact when it is not one that keeps them (Identity, Squeeze,
/// Unsqueeze, an addition of zeros) nor a Gather taking them as indices; nullopt when the usual rules
/// apply (those keep the positions flag as they move the axis). nullopt too when no input is positions.
std::optional<TimeFact> PositionsGate(const NodeTime& n);

/// A Gather whose indices are positions (PositionsGate let it through): the frames of its data again, time
/// where the indices hold it, when the data's time axis is the gathered one and its frames are those the
/// positions count (the value they were read from, or it through operators that keep every frame: an
/// elementwise one, a Pad that pads other axes only). Mixed otherwise.
TimeFact GatherByPositions(const NodeTime& n);

// The rules of each class, in their own units (time_rules.cc, time_moves.cc, time_data_moves.cc, time_windows.cc).
TimeFact ElementwiseTime(const NodeTime& n);
TimeFact NormalizationTime(const NodeTime& n);
TimeFact ReductionTime(const NodeTime& n);
TimeFact ViewTime(const NodeTime& n);
std::vector<TimeFact> DataMovementTime(const NodeTime& n);
TimeFact ContractionTime(const NodeTime& n);
TimeFact WindowTime(const NodeTime& n);
TimeFact ShapeTime(const NodeTime& n);

}  // namespace rnnstate
