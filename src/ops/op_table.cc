// The rows of the operator table (op_semantics.h): one per operator and opset range. Adding an operator the
// analyses should follow is one row here plus its test in tests/unit/ops/op_semantics_test.cc, which pins
// every row against onnx's schemas.

#include "ops/op_semantics.h"

namespace rnnstate {

namespace {

using C = OpClass;
using M = AxisMixing;
using E = AxisEffect;
constexpr int kLast = OpSemantics::kLatestOpset;

/// The axis effect every row of class `c` has unless the row names its own.
E EffectOfClass(C c) {
  switch (c) {
    case C::kElementwiseUnary:
      return E::kSame;
    case C::kElementwiseMany:
      return E::kBroadcast;
    case C::kNormalization:
      return E::kNormalize;
    case C::kReduction:
      return E::kReduce;
    case C::kWindow:
      return E::kWindow;
    default:
      return E::kNone;
  }
}

/// One row: `op` from opset `since` to `until`, of class `c`.
OpSemantics Row(std::string_view op, C c, bool keeps_zero = false, OperandSource axes = {}, int since = 1,
                int until = kLast) {
  OpSemantics row;
  row.op = op;
  row.since = since;
  row.until = until;
  row.op_class = c;
  row.keeps_zero = keeps_zero;
  row.axes = axes;
  row.effect = EffectOfClass(c);
  return row;
}

/// `row` with the axis effect `effect` (operators whose class alone does not say it).
OpSemantics Effect(OpSemantics row, E effect) {
  row.effect = effect;
  return row;
}

/// `row` combining input 0's elements along `mixing`, its named axis `default_axis` when unnamed.
OpSemantics Mixing(OpSemantics row, M mixing, int64_t default_axis = 0) {
  row.mixing = mixing;
  row.default_axis = default_axis;
  return row;
}

/// `row` whose named axis is `default_axis` when its attribute is absent.
OpSemantics DefaultAxis(OpSemantics row, int64_t default_axis) { return Mixing(row, row.mixing, default_axis); }

constexpr bool kZero = true;  // keeps_zero
const OperandSource kAxesAttribute{"axes", -1};
const OperandSource kAxesInput{"", 1};
const OperandSource kAxisAttribute{"axis", -1};

/// The elementwise operators: one tensor operand, or several broadcast together.
std::vector<OpSemantics> ElementwiseRows() {
  return {
      // Elementwise, one tensor operand. keeps_zero only where every exporter pattern met needs it.
      Row("Identity", C::kElementwiseUnary, kZero),
      Row("Cast", C::kElementwiseUnary, kZero),
      Row("CastLike", C::kElementwiseUnary, kZero, {}, 15),
      Row("Dropout", C::kElementwiseUnary),
      Row("Relu", C::kElementwiseUnary, kZero),
      Row("Neg", C::kElementwiseUnary, kZero),
      Row("Abs", C::kElementwiseUnary, kZero),
      Row("Tanh", C::kElementwiseUnary),
      Row("Sigmoid", C::kElementwiseUnary),
      Row("Exp", C::kElementwiseUnary),
      Row("Log", C::kElementwiseUnary),
      Row("Sqrt", C::kElementwiseUnary),
      Row("Erf", C::kElementwiseUnary, false, {}, 9),
      Row("Softsign", C::kElementwiseUnary),
      Row("Softplus", C::kElementwiseUnary),
      Row("LeakyRelu", C::kElementwiseUnary),
      Row("Elu", C::kElementwiseUnary),
      Row("Selu", C::kElementwiseUnary),
      Row("Celu", C::kElementwiseUnary, false, {}, 12),
      Row("ThresholdedRelu", C::kElementwiseUnary, false, {}, 10),
      Row("HardSigmoid", C::kElementwiseUnary),
      Row("HardSwish", C::kElementwiseUnary, false, {}, 14),
      Row("Mish", C::kElementwiseUnary, false, {}, 18),
      Row("Gelu", C::kElementwiseUnary, false, {}, 20),
      Row("Shrink", C::kElementwiseUnary, false, {}, 9),
      Row("Floor", C::kElementwiseUnary),
      Row("Ceil", C::kElementwiseUnary),
      Row("Round", C::kElementwiseUnary, false, {}, 11),
      Row("Sign", C::kElementwiseUnary, false, {}, 9),
      Row("Reciprocal", C::kElementwiseUnary),
      Row("Not", C::kElementwiseUnary),
      Row("Sin", C::kElementwiseUnary, false, {}, 7),
      Row("Cos", C::kElementwiseUnary, false, {}, 7),
      Row("Tan", C::kElementwiseUnary, false, {}, 7),
      Row("IsNaN", C::kElementwiseUnary, false, {}, 9),
      Row("IsInf", C::kElementwiseUnary, false, {}, 10),
      Row("Clip", C::kElementwiseUnary),
      // Elementwise with broadcasting.
      Row("Add", C::kElementwiseMany),
      Row("Sub", C::kElementwiseMany),
      Row("Mul", C::kElementwiseMany),
      Row("Div", C::kElementwiseMany),
      Row("Pow", C::kElementwiseMany),
      Row("Mod", C::kElementwiseMany, false, {}, 10),
      Row("Max", C::kElementwiseMany),
      Row("Min", C::kElementwiseMany),
      Row("Sum", C::kElementwiseMany),
      Row("Mean", C::kElementwiseMany),
      Row("And", C::kElementwiseMany),
      Row("Or", C::kElementwiseMany),
      Row("Xor", C::kElementwiseMany),
      Row("Equal", C::kElementwiseMany),
      Row("Less", C::kElementwiseMany),
      Row("Greater", C::kElementwiseMany),
      Row("LessOrEqual", C::kElementwiseMany, false, {}, 12),
      Row("GreaterOrEqual", C::kElementwiseMany, false, {}, 12),
      Row("PRelu", C::kElementwiseMany),
      Row("Where", C::kElementwiseMany, false, {}, 9),
      Row("BitShift", C::kElementwiseMany, false, {}, 11),
  };
}

/// The operators that mix elements along named axes: normalizations, running sums, reductions.
std::vector<OpSemantics> MixingRows() {
  std::vector<OpSemantics> table = {
      // The shape of input 0; elements mixed along the named axis (and, where the row says so, after it).
      // Softmax and its kin flattened the input at `axis` (default 1) before opset 13.
      Mixing(Row("Softmax", C::kNormalization, false, kAxisAttribute, 1, 12), M::kNamedAxisOnward, 1),
      Mixing(Row("Softmax", C::kNormalization, false, kAxisAttribute, 13), M::kNamedAxes, -1),
      Mixing(Row("LogSoftmax", C::kNormalization, false, kAxisAttribute, 1, 12), M::kNamedAxisOnward, 1),
      Mixing(Row("LogSoftmax", C::kNormalization, false, kAxisAttribute, 13), M::kNamedAxes, -1),
      Mixing(Row("Hardmax", C::kNormalization, false, kAxisAttribute, 1, 12), M::kNamedAxisOnward, 1),
      Mixing(Row("Hardmax", C::kNormalization, false, kAxisAttribute, 13), M::kNamedAxes, -1),
      Mixing(Row("LayerNormalization", C::kNormalization, false, kAxisAttribute, 17), M::kNamedAxisOnward, -1),
      // Inference: each channel's own mean and variance, one element at a time.
      Row("BatchNormalization", C::kNormalization),
      Mixing(Row("InstanceNormalization", C::kNormalization), M::kSpatial),
      Mixing(Row("LpNormalization", C::kNormalization, false, kAxisAttribute), M::kNamedAxes, -1),
      // A running sum along the axis input 1 names.
      Mixing(Row("CumSum", C::kNormalization, false, {"", 1}, 11), M::kNamedAxes),
      // Reductions: axes an attribute until the opset that made them an input; none named means all.
      Mixing(Row("ReduceSum", C::kReduction, false, kAxesAttribute, 1, 12), M::kNamedAxes),
      Mixing(Row("ReduceSum", C::kReduction, false, kAxesInput, 13), M::kNamedAxes),
      Mixing(Row("ArgMax", C::kReduction, false, kAxisAttribute), M::kNamedAxes),
      Mixing(Row("ArgMin", C::kReduction, false, kAxisAttribute), M::kNamedAxes),
      Mixing(Row("GlobalAveragePool", C::kReduction), M::kSpatial),
      Mixing(Row("GlobalMaxPool", C::kReduction), M::kSpatial),
      Mixing(Row("GlobalLpPool", C::kReduction), M::kSpatial),
  };
  for (std::string_view reduce : {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                                  "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"}) {
    table.push_back(Mixing(Row(reduce, C::kReduction, false, kAxesAttribute, 1, 17), M::kNamedAxes));
    table.push_back(Mixing(Row(reduce, C::kReduction, false, kAxesInput, 18), M::kNamedAxes));
  }
  return table;
}

/// The operators that move elements (views, selection, joins), contract, slide windows, or compute shapes.
std::vector<OpSemantics> MovementRows() {
  return {
      // Views: the elements of input 0, rearranged.
      Effect(Row("Reshape", C::kView, kZero, {}, 5), E::kReshape),
      Effect(DefaultAxis(Row("Flatten", C::kView, kZero, kAxisAttribute), 1), E::kFlatten),
      Effect(Row("Squeeze", C::kView, kZero, kAxesAttribute, 1, 12), E::kRemoveUnit),
      Effect(Row("Squeeze", C::kView, kZero, kAxesInput, 13), E::kRemoveUnit),
      Effect(Row("Unsqueeze", C::kView, kZero, kAxesAttribute, 1, 12), E::kInsertUnit),
      Effect(Row("Unsqueeze", C::kView, kZero, kAxesInput, 13), E::kInsertUnit),
      Effect(Row("Transpose", C::kView, kZero, {"perm", -1}), E::kPermute),
      // Data movement: elements selected, joined, repeated or written.
      Effect(Row("Slice", C::kDataMovement, kZero, kAxesAttribute, 1, 9), E::kCut),
      Effect(Row("Slice", C::kDataMovement, kZero, {"", 3}, 10), E::kCut),
      Effect(Row("Gather", C::kDataMovement, kZero, kAxisAttribute), E::kGather),
      Row("GatherElements", C::kDataMovement, kZero, kAxisAttribute, 11),
      Row("GatherND", C::kDataMovement, kZero, {}, 11),
      // Concat's axis defaulted to 1 until opset 4 made it required.
      Effect(DefaultAxis(Row("Concat", C::kDataMovement, false, kAxisAttribute, 1, 3), 1), E::kConcat),
      Effect(Row("Concat", C::kDataMovement, false, kAxisAttribute, 4), E::kConcat),
      Effect(Row("Split", C::kDataMovement, kZero, kAxisAttribute), E::kSplit),
      Row("Expand", C::kDataMovement, kZero, {}, 8),
      Row("Tile", C::kDataMovement, kZero),
      // Pad's amounts cover every axis until opset 18 lets input 3 list the axes they pad (ops/pad_amounts).
      Effect(Row("Pad", C::kDataMovement, false, {}, 1, 17), E::kPad),
      Effect(Row("Pad", C::kDataMovement, false, {"", 3}, 18), E::kPad),
      Effect(Row("ScatterND", C::kDataMovement, false, {}, 11), E::kScatter),
      Row("ScatterElements", C::kDataMovement, false, kAxisAttribute, 11),
      Row("ConcatFromSequence", C::kDataMovement, false, kAxisAttribute, 11),
      // Contractions.
      Effect(Row("MatMul", C::kContraction), E::kMatMul),
      Effect(Row("Gemm", C::kContraction), E::kGemm),
      // Windows slid along the spatial axes 2..: the kernel, strides, dilations and pads say how far.
      Mixing(Row("Conv", C::kWindow), M::kWindow),
      Mixing(Row("ConvTranspose", C::kWindow), M::kWindow),
      Mixing(Row("MaxPool", C::kWindow), M::kWindow),
      Mixing(Row("AveragePool", C::kWindow), M::kWindow),
      Mixing(Row("LpPool", C::kWindow), M::kWindow),
      // Shapes.
      Row("Shape", C::kShapeComputation),
      Row("Size", C::kShapeComputation),
      Row("ConstantOfShape", C::kShapeComputation, false, {}, 9),
      Row("Range", C::kShapeComputation, false, {}, 11),
  };
}

std::vector<OpSemantics> MakeTable() {
  std::vector<OpSemantics> table = ElementwiseRows();
  for (std::vector<OpSemantics> rows : {MixingRows(), MovementRows()}) {
    table.insert(table.end(), rows.begin(), rows.end());
  }
  return table;
}

}  // namespace

const std::vector<OpSemantics>& AllOpSemantics() {
  static const auto* table = new std::vector<OpSemantics>(MakeTable());
  return *table;
}

}  // namespace rnnstate
