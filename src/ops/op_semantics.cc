#include "ops/op_semantics.h"

#include <algorithm>
#include <unordered_map>

#include "graph/proto_access.h"
#include "values/constant_value.h"
#include "values/shape_eval.h"

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

}  // namespace

const OpSemantics* FindOpSemantics(const onnx::NodeProto& node, int64_t opset) { return RowOf(node, opset); }

AxisEffect EffectOf(const onnx::NodeProto& node, int64_t opset) {
  const OpSemantics* row = RowOf(node, opset);
  return row == nullptr ? AxisEffect::kNone : row->effect;
}

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

bool NamesOneAxis(const OpSemantics& row) { return row.axes.attribute == "axis"; }

int64_t AxisAttribute(const onnx::NodeProto& node, int64_t opset) {
  if (const onnx::AttributeProto* axis = FindAttribute(node, "axis")) return axis->i();
  const OpSemantics* row = RowOf(node, opset);
  return row == nullptr ? 0 : row->default_axis;
}

std::optional<std::vector<int64_t>> NamedAxes(const ModelIndex& index, const GraphPath& path,
                                              const onnx::NodeProto& node) {
  const OpSemantics* row = RowOf(node, index.onnx_opset());
  if (row == nullptr) return std::nullopt;
  const bool reduction = row->op_class == OpClass::kReduction;
  if (row->axes.attribute.empty() && row->axes.input < 0) {
    return reduction ? std::optional<std::vector<int64_t>>(std::vector<int64_t>{}) : std::nullopt;
  }
  // A list of axes is read from the attribute or from input 1, whatever the opset (AxesOperand).
  const bool list = row->axes.attribute == "axes" || row->axes.input == 1;
  const bool given = (!row->axes.attribute.empty() && FindAttribute(node, std::string(row->axes.attribute))) ||
                     (list && FindAttribute(node, "axes")) || (list && node.input_size() > 1 && !node.input(1).empty());
  if (given) return AxesOperand(index, path, node);
  // Reductions name no axis when they reduce all; the others have a default axis.
  if (reduction && row->axes.attribute != "axis") return std::vector<int64_t>{};
  return std::vector<int64_t>{row->default_axis};
}

SliceOperands SliceOperandsOf(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node) {
  return SliceOperands{IntsOperand(index, path, node, "starts", 1), IntsOperand(index, path, node, "ends", 2),
                       IntsOperand(index, path, node, "axes", 3), IntsOperand(index, path, node, "steps", 4)};
}

std::optional<std::vector<int64_t>> PermAttribute(const onnx::NodeProto& node) {
  const onnx::AttributeProto* perm = FindAttribute(node, "perm");
  if (perm == nullptr) return std::nullopt;
  return std::vector<int64_t>(perm->ints().begin(), perm->ints().end());
}

std::optional<std::vector<int64_t>> PermOf(const onnx::NodeProto& node, int64_t rank) {
  std::vector<int64_t> order;
  if (const std::optional<std::vector<int64_t>> perm = PermAttribute(node)) {
    order = *perm;
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

}  // namespace rnnstate
