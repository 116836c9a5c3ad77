#include "graph/op_semantics.h"

#include <algorithm>
#include <unordered_map>

#include "graph/constant_value.h"
#include "graph/proto_access.h"
#include "graph/shape_eval.h"

namespace rnnstate {

namespace {

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
