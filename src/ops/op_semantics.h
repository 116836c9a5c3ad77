#pragma once
/// \file
/// What each ONNX operator does to its operands' axes and elements: one table (a row per operator and
/// opset range) and the readers and axis maps every analysis asks instead of keeping its own lists.
///
///   Transpose(x, perm=[1,0,2])          output axis k is input axis perm[k]
///   Unsqueeze(x, axes=[0])  [T,H]       -> [1,T,H]: input axis 0 is output axis 1
///   Reshape(x, [T,1,F])     [1,T,F]     -> [T,1,F]: input axis 1 (T) is output axis 0, F stays axis 2
///   Relu(x)                             every axis kept, every element computed from its own
///
/// Adding an operator the analyses should follow is one row in op_semantics.cc (its class, its opset
/// range and where it reads its axes from) plus its tests; the schema test pins every row against onnx's
/// operator registry.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graph/model_index.h"

namespace rnnstate {

/// How an operator relates its outputs' elements to its inputs'.
enum class OpClass {
  kElementwiseUnary,  ///< y[i] = f(x[i]) for input 0; other inputs (Clip bounds) are parameters
  kElementwiseMany,   ///< y[i] = f(a[i], b[i], ...) with numpy broadcasting (Add, Where, Less)
  kNormalization,     ///< the shape of input 0, elements mixed along some axes (Softmax, LayerNormalization)
  kReduction,         ///< axes removed or kept as 1 by combining along them (ReduceSum, ArgMax)
  kView,              ///< the elements of input 0 in another arrangement (Reshape, Transpose, Squeeze)
  kDataMovement,      ///< elements selected, joined or repeated (Slice, Gather, Concat, Expand, ScatterND)
  kContraction,       ///< products summed along an axis (MatMul, Gemm)
  kWindow,            ///< a window slid along axes 2.. (Conv, ConvTranspose, MaxPool): kernel, strides, pads
  kShapeComputation,  ///< reads or makes shapes, not elements (Shape, Size, ConstantOfShape, Range)
};

/// Which axes of input 0 an output element combines: the question "does the operator stay within one
/// frame of the time axis?" asks this of every operator that keeps the time axis where it is.
enum class AxisMixing {
  kNone,             ///< none: each output element reads input 0 at its own index on every axis it keeps
  kNamedAxes,        ///< the axes the row's operand names (reductions, ArgMax, Softmax since 13, CumSum)
  kNamedAxisOnward,  ///< the named axis and every axis after it (LayerNormalization; Softmax before 13)
  kSpatial,          ///< axes 2.. (InstanceNormalization, GlobalAveragePool)
  kWindow,           ///< a window along each of axes 2.. (the kWindow class)
};

/// What an operator does to the axes of its input 0: the one description MapAxis (ops/axis_map.h) reads
/// for both directions, and the analyses and rules dispatch on instead of operator names.
enum class AxisEffect {
  kNone,        ///< no axis map (shape computations, operators no analysis follows yet)
  kSame,        ///< every axis kept, element for element (elementwise unary)
  kBroadcast,   ///< the operands right-aligned to the highest rank (elementwise with broadcasting)
  kNormalize,   ///< the shape kept; elements combined along the row's `mixing` axes
  kPermute,     ///< output axis k is input axis perm[k] (Transpose)
  kRemoveUnit,  ///< the named unit axes removed (Squeeze)
  kInsertUnit,  ///< unit axes inserted at the named axes of the output (Unsqueeze)
  kReshape,     ///< axes regrouped; an axis is followed when unit axes alone move around it (Reshape)
  kFlatten,     ///< the axes before and from the named axis merged into two (Flatten)
  kReduce,      ///< the named axes removed, or kept as 1 (keepdims); none named: all (ReduceSum, ArgMax)
  kCut,         ///< every axis at its place; the named ones cut (Slice)
  kPad,         ///< every axis at its place, lengthened at its ends (Pad)
  kScatter,     ///< the data's shape kept; indices address its leading axes (ScatterND)
  kGather,      ///< the named axis replaced by the indices' axes (Gather)
  kConcat,      ///< every axis kept; the named one joined from every input (Concat)
  kSplit,       ///< every axis kept; the named one cut into the outputs (Split)
  kMatMul,      ///< the leading axes of input 0 kept; its last contracted with input 1's
  kGemm,        ///< the rows (axis 0) of input 0 kept unless transA
  kWindow,      ///< axis 0 (the batch) kept; channels from the weights, axes 2.. windowed (Conv, pools)
};

/// Where an operator reads an integer-list operand (axes, perm, starts...) in an opset range.
struct OperandSource {
  std::string_view attribute;  ///< the attribute's name, or empty
  int input = -1;              ///< the input slot, or -1
};

/// One row of the table: an operator of the default domain in the opsets [since, until].
struct OpSemantics {
  std::string_view op;
  int since = 1;
  int until = kLatestOpset;
  OpClass op_class = OpClass::kElementwiseUnary;
  /// Zeros in gives zeros out (elementwise ops with f(0) = 0, and ops that only move elements).
  bool keeps_zero = false;
  /// The operand naming the axes the operator works on (Squeeze's axes, Transpose's perm, Softmax's
  /// axis), when it has one.
  OperandSource axes;
  /// Which axes of input 0 an output element combines.
  AxisMixing mixing = AxisMixing::kNone;
  /// The named axis when the operand is absent (Softmax: 1 before opset 13, -1 since; Concat: none, 0).
  int64_t default_axis = 0;
  /// What the operator does to the axes of its input 0.
  AxisEffect effect = AxisEffect::kNone;

  static constexpr int kLatestOpset = 1 << 20;
};

/// `row` names the one axis it works on in an `axis` attribute (Softmax and its kin, LayerNormalization;
/// AxisAttribute reads it), not a list of axes.
bool NamesOneAxis(const OpSemantics& row);

/// The whole table, for the schema test and for documentation.
const std::vector<OpSemantics>& AllOpSemantics();

/// The row of `node` (default domain) for `opset` (the model's default-domain opset; 0 when unknown
/// takes the newest row), or nullptr when the table has none.
const OpSemantics* FindOpSemantics(const onnx::NodeProto& node, int64_t opset = 0);

/// The class of `node`, or nullopt for operators outside the table (other domains included).
std::optional<OpClass> ClassOf(const onnx::NodeProto& node);

/// The axis effect of `node`'s row for `opset` (see FindOpSemantics), kNone outside the table.
AxisEffect EffectOf(const onnx::NodeProto& node, int64_t opset = 0);

/// `node` is of the class `c`.
bool IsClass(const onnx::NodeProto& node, OpClass c);

/// `node` computes each element of its output 0 from the same element of its input 0 (and parameters).
bool IsElementwiseUnary(const onnx::NodeProto& node);

/// `node` is elementwise over several broadcast operands.
bool IsElementwiseMany(const onnx::NodeProto& node);

/// `node` has the shape of its input 0 axis for axis (elementwise of either kind, normalizations).
bool KeepsShape(const onnx::NodeProto& node);

/// `node` gives zeros where its input 0 is all zeros (see OpSemantics::keeps_zero).
bool KeepsZero(const onnx::NodeProto& node);

/// `node` only rearranges its input 0 without selecting (Reshape, Squeeze, Unsqueeze, Flatten, and
/// Identity and Cast): the elements and their count are the input's.
bool OnlyReshapes(const onnx::NodeProto& node);

/// `node` gives the value of its input 0 when that holds one element: the ops OnlyReshapes names, the
/// variadic Max/Min/Sum/Mean with one operand, and the reductions whose one-element result is the
/// element (ReduceMax/Min/Sum/Mean/Prod). tf2onnx computes a trip count as `ReduceMax` of a length.
bool KeepsOneElement(const onnx::NodeProto& node);

// --- operand readers -------------------------------------------------------------------------------

/// The rank of `name` seen from `path`, declared or inferred, or of a constant; -1 when unknown.
int RankOf(const ModelIndex& index, const GraphPath& path, const std::string& name);

/// `axis` made non-negative for `rank`; nullopt when it is outside [-rank, rank) or the rank is unknown
/// (negative) and the axis too.
std::optional<int64_t> NormalizeAxis(int64_t axis, int64_t rank);

/// `axis` as an index into a shape of `rank` axes (NormalizeAxis's rule); nullopt when out of range.
std::optional<size_t> AxisIndex(int64_t axis, size_t rank);

/// `axes` made non-negative for `rank`, sorted; nullopt when one is outside [-rank, rank) or listed twice.
std::optional<std::vector<int64_t>> NormalizeAxes(std::vector<int64_t> axes, int64_t rank);

/// The integer list in attribute `attribute` of `node`, else in its input `slot` when that is a value
/// constants and shapes compute (shape_eval); nullopt when neither.
std::optional<std::vector<int64_t>> IntsOperand(const ModelIndex& index, const GraphPath& path,
                                                const onnx::NodeProto& node, std::string_view attribute, int slot);

/// The axes `node` works on as its row names them (Squeeze/Unsqueeze/Reduce* axes, attribute or input
/// by opset, Softmax/Gather/Concat/Split axis as one element); nullopt when it has none or they are not
/// constants.
std::optional<std::vector<int64_t>> AxesOperand(const ModelIndex& index, const GraphPath& path,
                                                const onnx::NodeProto& node);

/// The single axis `node` names in its `axis` attribute, else its row's default for `opset` (Softmax: 1
/// before opset 13, -1 since; Flatten 1; Gather, Concat, Split 0); 0 for an operator outside the table.
/// Not made non-negative: NormalizeAxis does that against the rank the caller knows.
int64_t AxisAttribute(const onnx::NodeProto& node, int64_t opset);

/// The axes `node`'s row names, with the row's defaults: its operand when given (nullopt when that is not
/// a constant), else none for the operators that then work on every axis (a reduction's absent `axes`),
/// else the row's default axis for the model's opset; nullopt for an operator whose row names no axes and
/// is no reduction (a reduction without operand, GlobalAveragePool, works on every axis: none named). Not
/// made non-negative.
std::optional<std::vector<int64_t>> NamedAxes(const ModelIndex& index, const GraphPath& path,
                                              const onnx::NodeProto& node);

/// A Slice's operands (attributes before opset 10, inputs 1..4 since), each nullopt when absent or not
/// a constant.
struct SliceOperands {
  std::optional<std::vector<int64_t>> starts, ends, axes, steps;
};
SliceOperands SliceOperandsOf(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node);

/// The `perm` attribute of a Transpose as written, nullopt when absent (the axes then reversed).
std::optional<std::vector<int64_t>> PermAttribute(const onnx::NodeProto& node);

/// A Transpose's order for an input of `rank` axes (its `perm`, by default the axes reversed); nullopt
/// when `perm` is not a permutation of 0 .. rank-1, or the rank is unknown without a perm.
std::optional<std::vector<int64_t>> PermOf(const onnx::NodeProto& node, int64_t rank);

/// The inverse of the permutation `perm`.
std::vector<int64_t> InversePerm(const std::vector<int64_t>& perm);

}  // namespace rnnstate
