#include "graph/op_semantics.h"

#include <algorithm>
#include <unordered_map>

#include "graph/constant_value.h"
#include "graph/proto_access.h"
#include "graph/shape_eval.h"

namespace rnnstate {

namespace {

using C = OpClass;
constexpr int kLast = OpSemantics::kLatestOpset;

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
  return row;
}

std::vector<OpSemantics> MakeTable() {
  constexpr bool kZero = true;
  const OperandSource axes_attribute{"axes", -1};
  const OperandSource axes_input{"", 1};
  const OperandSource axis{"axis", -1};
  std::vector<OpSemantics> table = {
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
      // The shape of input 0; elements mixed along the named axis (and, where the row says so, after it).
      Row("Softmax", C::kNormalization, false, axis),
      Row("LogSoftmax", C::kNormalization, false, axis),
      Row("Hardmax", C::kNormalization, false, axis),
      Row("LayerNormalization", C::kNormalization, false, axis, 17),
      Row("BatchNormalization", C::kNormalization),
      Row("InstanceNormalization", C::kNormalization),
      Row("LpNormalization", C::kNormalization, false, axis),
      // Reductions: axes an attribute until the opset that made them an input.
      Row("ReduceSum", C::kReduction, false, axes_attribute, 1, 12),
      Row("ReduceSum", C::kReduction, false, axes_input, 13),
      Row("ArgMax", C::kReduction, false, axis),
      Row("ArgMin", C::kReduction, false, axis),
  };
  for (std::string_view reduce : {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                                  "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"}) {
    table.push_back(Row(reduce, C::kReduction, false, axes_attribute, 1, 17));
    table.push_back(Row(reduce, C::kReduction, false, axes_input, 18));
  }
  const std::vector<OpSemantics> rest = {
      // Views: the elements of input 0, rearranged.
      Row("Reshape", C::kView, kZero, {}, 5),
      Row("Flatten", C::kView, kZero, axis),
      Row("Squeeze", C::kView, kZero, axes_attribute, 1, 12),
      Row("Squeeze", C::kView, kZero, axes_input, 13),
      Row("Unsqueeze", C::kView, kZero, axes_attribute, 1, 12),
      Row("Unsqueeze", C::kView, kZero, axes_input, 13),
      Row("Transpose", C::kView, kZero, {"perm", -1}),
      // Data movement: elements selected, joined, repeated or written.
      Row("Slice", C::kDataMovement, kZero, axes_attribute, 1, 9),
      Row("Slice", C::kDataMovement, kZero, {"", 3}, 10),
      Row("Gather", C::kDataMovement, kZero, axis),
      Row("GatherElements", C::kDataMovement, kZero, axis, 11),
      Row("GatherND", C::kDataMovement, kZero, {}, 11),
      Row("Concat", C::kDataMovement, false, axis),
      Row("Split", C::kDataMovement, kZero, axis),
      Row("Expand", C::kDataMovement, kZero, {}, 8),
      Row("Tile", C::kDataMovement, kZero),
      Row("Pad", C::kDataMovement),
      Row("ScatterND", C::kDataMovement, false, {}, 11),
      Row("ScatterElements", C::kDataMovement, false, axis, 11),
      Row("ConcatFromSequence", C::kDataMovement, false, axis, 11),
      // Contractions.
      Row("MatMul", C::kContraction),
      Row("Gemm", C::kContraction),
      Row("Conv", C::kContraction),
      Row("ConvTranspose", C::kContraction),
      // Shapes.
      Row("Shape", C::kShapeComputation),
      Row("Size", C::kShapeComputation),
      Row("ConstantOfShape", C::kShapeComputation, false, {}, 9),
      Row("Range", C::kShapeComputation, false, {}, 11),
  };
  table.insert(table.end(), rest.begin(), rest.end());
  return table;
}

/// The rows of each operator, in opset order.
const std::unordered_map<std::string, std::vector<const OpSemantics*>>& RowsByOp() {
  static const auto* rows = [] {
    auto* map = new std::unordered_map<std::string, std::vector<const OpSemantics*>>();
    for (const OpSemantics& row : AllOpSemantics()) (*map)[std::string(row.op)].push_back(&row);
    return map;
  }();
  return *rows;
}

/// The row of `node` for `opset` when the node is of the default domain.
const OpSemantics* RowOf(const onnx::NodeProto& node, int64_t opset) {
  if (!IsOnnxDomain(node.domain())) return nullptr;
  const auto& rows = RowsByOp();
  auto found = rows.find(node.op_type());
  if (found == rows.end()) return nullptr;
  if (opset <= 0) return found->second.back();
  for (const OpSemantics* row : found->second) {
    if (opset >= row->since && opset <= row->until) return row;
  }
  // An opset outside every row (older than the operator): the operator's oldest meaning.
  return found->second.front();
}

/// Axis `axis` through a Reshape of `in` to `target`: kept when its group holds it as the only axis of
/// size other than 1 on both sides (unit axes moved, added or removed around it).
std::optional<int64_t> ReshapeAxis(const SymShape& in, const SymShape& target, bool allow_zero, int64_t axis,
                                   bool forward) {
  SymShape resolved;
  const std::optional<std::vector<ReshapeGroup>> groups = ReshapeGroups(in, target, allow_zero, &resolved);
  if (!groups) return std::nullopt;
  const SymShape& from_shape = forward ? in : resolved;
  const SymShape& to_shape = forward ? resolved : in;
  auto not_unit = [](const SymShape& shape, const std::vector<size_t>& axes) {
    std::vector<size_t> kept;
    for (size_t a : axes) {
      if (!(shape[a].fixed() && shape[a].value == 1)) kept.push_back(a);
    }
    return kept;
  };
  for (const ReshapeGroup& group : *groups) {
    const std::vector<size_t>& from = forward ? group.in : group.out;
    const std::vector<size_t>& to = forward ? group.out : group.in;
    if (std::find(from.begin(), from.end(), static_cast<size_t>(axis)) == from.end()) continue;
    const std::vector<size_t> from_kept = not_unit(from_shape, from);
    const std::vector<size_t> to_kept = not_unit(to_shape, to);
    if (from_kept.size() == 1 && to_kept.size() == 1 && from_kept[0] == static_cast<size_t>(axis)) {
      return static_cast<int64_t>(to_kept[0]);
    }
    return std::nullopt;
  }
  return std::nullopt;
}

/// The squeezed or unsqueezed axes of `node` made non-negative, with the input's and output's ranks.
std::optional<std::vector<int64_t>> ListedUnitAxes(const ModelIndex& index, const GraphPath& path,
                                                   const onnx::NodeProto& node, int in_rank, int* out_rank) {
  const std::optional<std::vector<int64_t>> axes = AxesOperand(index, path, node);
  if (!axes || in_rank < 0) return std::nullopt;
  const bool un = node.op_type() == "Unsqueeze";
  const int64_t count = static_cast<int64_t>(axes->size());
  *out_rank = static_cast<int>(un ? in_rank + count : in_rank - count);
  if (*out_rank < 0) return std::nullopt;
  return NormalizeAxes(*axes, un ? *out_rank : in_rank);
}

}  // namespace

const std::vector<OpSemantics>& AllOpSemantics() {
  static const auto* table = new std::vector<OpSemantics>(MakeTable());
  return *table;
}

const OpSemantics* FindOpSemantics(const onnx::NodeProto& node, int64_t opset) { return RowOf(node, opset); }

std::optional<OpClass> ClassOf(const onnx::NodeProto& node) {
  const OpSemantics* row = RowOf(node, 0);
  if (row == nullptr) return std::nullopt;
  return row->op_class;
}

bool IsClass(const onnx::NodeProto& node, OpClass c) { return ClassOf(node) == c; }

bool IsElementwiseUnary(const onnx::NodeProto& node) { return IsClass(node, OpClass::kElementwiseUnary); }

bool IsElementwiseMany(const onnx::NodeProto& node) { return IsClass(node, OpClass::kElementwiseMany); }

bool KeepsShape(const onnx::NodeProto& node) {
  const std::optional<OpClass> c = ClassOf(node);
  return c == OpClass::kElementwiseUnary || c == OpClass::kElementwiseMany || c == OpClass::kNormalization;
}

bool KeepsZero(const onnx::NodeProto& node) {
  const OpSemantics* row = RowOf(node, 0);
  return row != nullptr && row->keeps_zero;
}

bool OnlyReshapes(const onnx::NodeProto& node) {
  if (!IsOnnxDomain(node.domain())) return false;
  return (IsClass(node, OpClass::kView) && node.op_type() != "Transpose") || node.op_type() == "Identity" ||
         node.op_type() == "Cast";
}

bool KeepsOneElement(const onnx::NodeProto& node) {
  if (OnlyReshapes(node)) return true;
  if (!IsOnnxDomain(node.domain())) return false;
  if (IsOnnxOp(node, {"Max", "Min", "Sum", "Mean"})) return node.input_size() == 1;
  return IsOnnxOp(node, {"ReduceMax", "ReduceMin", "ReduceSum", "ReduceMean", "ReduceProd"});
}

int RankOf(const ModelIndex& index, const GraphPath& path, const std::string& name) {
  const onnx::TypeProto* type = index.TypeOf(path, name);
  if (type != nullptr && type->has_tensor_type() && type->tensor_type().has_shape()) {
    return type->tensor_type().shape().dim_size();
  }
  // Constants in a Loop body, where onnx's inference keeps no shapes.
  const std::optional<std::vector<int64_t>> dims = ConstantDims(index, path, name);
  return dims ? static_cast<int>(dims->size()) : -1;
}

std::optional<int64_t> NormalizeAxis(int64_t axis, int64_t rank) {
  if (rank < 0) return axis >= 0 ? std::optional<int64_t>(axis) : std::nullopt;
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

std::optional<size_t> AxisIndex(int64_t axis, size_t rank) {
  const std::optional<int64_t> normalized = NormalizeAxis(axis, static_cast<int64_t>(rank));
  if (!normalized) return std::nullopt;
  return static_cast<size_t>(*normalized);
}

std::optional<std::vector<int64_t>> NormalizeAxes(std::vector<int64_t> axes, int64_t rank) {
  for (auto& a : axes) {
    if (rank < 0) return std::nullopt;
    const std::optional<int64_t> axis = NormalizeAxis(a, rank);
    if (!axis) return std::nullopt;
    a = *axis;
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) return std::nullopt;
  return axes;
}

std::optional<std::vector<int64_t>> IntsOperand(const ModelIndex& index, const GraphPath& path,
                                                const onnx::NodeProto& node, std::string_view attribute, int slot) {
  if (!attribute.empty()) {
    if (const onnx::AttributeProto* a = FindAttribute(node, std::string(attribute))) {
      if (a->type() == onnx::AttributeProto::INT) return std::vector<int64_t>{a->i()};
      return std::vector<int64_t>(a->ints().begin(), a->ints().end());
    }
  }
  if (slot >= 0 && slot < node.input_size() && !node.input(slot).empty()) {
    return IntValues(index, path, node.input(slot));
  }
  return std::nullopt;
}

std::optional<std::vector<int64_t>> AxesOperand(const ModelIndex& index, const GraphPath& path,
                                                const onnx::NodeProto& node) {
  const OpSemantics* row = RowOf(node, index.onnx_opset());
  if (row == nullptr || (row->axes.attribute.empty() && row->axes.input < 0)) return std::nullopt;
  std::string_view attribute = row->axes.attribute;
  int slot = row->axes.input;
  // Squeeze, Unsqueeze and the reductions moved their axes from an attribute to input 1: either place is
  // read whatever the opset, since exporters are not always faithful to the opset they declare (onnx's
  // checker judges that, not this).
  if (attribute == "axes" || slot == 1) {
    attribute = "axes";
    slot = 1;
  }
  return IntsOperand(index, path, node, attribute, slot);
}

std::optional<std::vector<int64_t>> PermOf(const onnx::NodeProto& node, int64_t rank) {
  std::vector<int64_t> order;
  if (const onnx::AttributeProto* perm = FindAttribute(node, "perm")) {
    order.assign(perm->ints().begin(), perm->ints().end());
    if (rank < 0) rank = static_cast<int64_t>(order.size());
  } else {
    if (rank < 0) return std::nullopt;
    for (int64_t i = 0; i < rank; ++i) order.push_back(rank - 1 - i);
  }
  if (static_cast<int64_t>(order.size()) != rank) return std::nullopt;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t p : order) {
    if (p < 0 || p >= rank || seen[static_cast<size_t>(p)]) return std::nullopt;
    seen[static_cast<size_t>(p)] = true;
  }
  return order;
}

std::vector<int64_t> InversePerm(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return inverse;
}

std::optional<AxisOf> AxisForward(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node,
                                  AxisOf in) {
  if (in.axis < 0 || node.input_size() == 0) return std::nullopt;
  if (IsElementwiseUnary(node)) return in;
  const std::string& op = node.op_type();
  if (!IsOnnxDomain(node.domain())) return std::nullopt;
  if (op == "Transpose") {
    const std::optional<std::vector<int64_t>> perm = PermOf(node, in.rank);
    if (!perm) return std::nullopt;
    for (size_t k = 0; k < perm->size(); ++k) {
      if ((*perm)[k] == in.axis) return AxisOf{static_cast<int64_t>(k), static_cast<int>(perm->size())};
    }
    return std::nullopt;
  }
  if (op == "Squeeze" || op == "Unsqueeze") {
    int out_rank = -1;
    const std::optional<std::vector<int64_t>> listed = ListedUnitAxes(index, path, node, in.rank, &out_rank);
    if (!listed) return std::nullopt;
    if (op == "Squeeze") {
      if (std::binary_search(listed->begin(), listed->end(), in.axis)) return std::nullopt;
      int64_t axis = in.axis;
      for (int64_t a : *listed) axis -= a < in.axis ? 1 : 0;
      return AxisOf{axis, out_rank};
    }
    for (int64_t a = 0, kept = 0; a < out_rank; ++a) {
      if (!std::binary_search(listed->begin(), listed->end(), a) && kept++ == in.axis) return AxisOf{a, out_rank};
    }
    return std::nullopt;
  }
  if (op == "Reshape" && node.input_size() > 1) {
    const std::optional<SymShape> shape = ShapeOf(index, path, node.input(0));
    const std::optional<SymShape> target = ShapeValue(index, path, node.input(1));
    if (!shape || !target || in.axis >= static_cast<int64_t>(shape->size())) return std::nullopt;
    const std::optional<int64_t> axis =
        ReshapeAxis(*shape, *target, IntAttribute(node, "allowzero", 0) != 0, in.axis, /*forward=*/true);
    if (!axis) return std::nullopt;
    return AxisOf{*axis, static_cast<int>(target->size())};
  }
  return std::nullopt;
}

std::optional<AxisOf> AxisBackward(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node,
                                   AxisOf out) {
  if (out.axis < 0 || node.input_size() == 0) return std::nullopt;
  if (IsElementwiseUnary(node)) return out;
  const std::string& op = node.op_type();
  if (!IsOnnxDomain(node.domain())) return std::nullopt;
  const int in_rank = RankOf(index, path, node.input(0));
  if (op == "Transpose") {
    const std::optional<std::vector<int64_t>> perm = PermOf(node, in_rank >= 0 ? in_rank : out.rank);
    if (!perm || out.axis >= static_cast<int64_t>(perm->size())) return std::nullopt;
    return AxisOf{(*perm)[static_cast<size_t>(out.axis)], static_cast<int>(perm->size())};
  }
  if (op == "Squeeze" || op == "Unsqueeze") {
    int out_rank = -1;
    const std::optional<std::vector<int64_t>> listed = ListedUnitAxes(index, path, node, in_rank, &out_rank);
    if (!listed) return std::nullopt;
    if (op == "Unsqueeze") {
      if (std::binary_search(listed->begin(), listed->end(), out.axis)) return std::nullopt;
      int64_t axis = out.axis;
      for (int64_t a : *listed) axis -= a < out.axis ? 1 : 0;
      return AxisOf{axis, in_rank};
    }
    for (int64_t a = 0, kept = 0; a < in_rank; ++a) {
      if (!std::binary_search(listed->begin(), listed->end(), a) && kept++ == out.axis) return AxisOf{a, in_rank};
    }
    return std::nullopt;
  }
  if (op == "Reshape" && node.input_size() > 1) {
    const std::optional<SymShape> shape = ShapeOf(index, path, node.input(0));
    const std::optional<SymShape> target = ShapeValue(index, path, node.input(1));
    if (!shape || !target || out.axis >= static_cast<int64_t>(target->size())) return std::nullopt;
    const std::optional<int64_t> axis =
        ReshapeAxis(*shape, *target, IntAttribute(node, "allowzero", 0) != 0, out.axis, /*forward=*/false);
    if (!axis) return std::nullopt;
    return AxisOf{*axis, static_cast<int>(shape->size())};
  }
  return std::nullopt;
}

}  // namespace rnnstate
