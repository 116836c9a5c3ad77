#include "rules/view_rules.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "graph/graph_path.h"
#include "graph/proto_access.h"
#include "ops/op_semantics.h"
#include "values/constant_value.h"
#include "values/shape_eval.h"

namespace rnnstate {

namespace {

std::string List(const std::vector<int64_t>& values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + std::to_string(values[i]);
  return text + "]";
}

/// "axis A is out of range for ... of rank R", or "axis A is listed twice", or "" (axes against `rank`).
std::string AxesRule(const std::vector<int64_t>& axes, size_t rank, const char* of) {
  const auto r = static_cast<int64_t>(rank);
  std::vector<int64_t> seen;
  for (int64_t a : axes) {
    if (a < -r || a >= r) {
      return "axis " + std::to_string(a) + " is out of range for " + of + " of rank " + std::to_string(rank);
    }
    const int64_t normal = a < 0 ? a + r : a;
    if (std::find(seen.begin(), seen.end(), normal) != seen.end())
      return "axis " + std::to_string(a) + " is listed twice";
    seen.push_back(normal);
  }
  return "";
}

/// "index I is out of range for axis A of size S", or "" (indices against a fixed `dim`).
std::string IndexRule(const std::vector<int64_t>& indices, const SymDim& dim, size_t axis) {
  if (!dim.fixed()) return "";
  for (int64_t i : indices) {
    if (i < -dim.value || i >= dim.value) {
      return "index " + std::to_string(i) + " is out of range for axis " + std::to_string(axis) + " of size " +
             std::to_string(dim.value);
    }
  }
  return "";
}

/// Squeeze's and Unsqueeze's axes against the rank, and a squeezed axis of size other than 1.
std::string UnitAxesRule(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node,
                         const std::optional<SymShape>& in, bool insert) {
  std::optional<std::vector<int64_t>> axes = AxesOperand(index, path, node);
  if (!in || !axes) return "";
  if (insert) return AxesRule(*axes, in->size() + axes->size(), "an output");
  if (std::string rule = AxesRule(*axes, in->size(), "an input"); !rule.empty()) return rule;
  for (int64_t a : *axes) {
    const SymDim& dim = (*in)[static_cast<size_t>(a < 0 ? a + static_cast<int64_t>(in->size()) : a)];
    if (dim.fixed() && dim.value != 1) {
      return "axis " + std::to_string(a) + " has size " + std::to_string(dim.value) + ", not 1";
    }
  }
  return "";
}

/// A Transpose's perm is a permutation of the input's axes.
std::string PermRule(const onnx::NodeProto& node, const std::optional<SymShape>& in) {
  const std::optional<std::vector<int64_t>> perm = PermAttribute(node);
  if (!in || !perm || PermOf(node, static_cast<int64_t>(in->size()))) return "";
  return "perm " + List(*perm) + " is not a permutation of the input's " + std::to_string(in->size()) + " axes";
}

/// A Slice's operands have as many values, no step 0, axes in range.
std::string SliceRule(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node,
                      const std::optional<SymShape>& in) {
  const SliceOperands operands = SliceOperandsOf(index, path, node);
  const std::optional<std::vector<int64_t>>* parts[] = {&operands.starts, &operands.ends, &operands.axes,
                                                        &operands.steps};
  const char* names[] = {"starts", "ends", "axes", "steps"};
  for (int k = 1; k < 4; ++k) {
    if (operands.starts && *parts[k] && (*parts[k])->size() != operands.starts->size()) {
      return std::string("starts has ") + std::to_string(operands.starts->size()) + " values, " + names[k] + " " +
             std::to_string((*parts[k])->size()) + " (they must have as many)";
    }
  }
  if (operands.steps && std::find(operands.steps->begin(), operands.steps->end(), 0) != operands.steps->end())
    return "a step is 0";
  if (in && operands.axes) return AxesRule(*operands.axes, in->size(), "an input");
  return "";
}

/// A Reshape's constant shape: one -1 at most, no dim below -1, not 0 and -1 with allowzero.
std::string ReshapeRule(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node) {
  std::optional<std::vector<int64_t>> shape = ConstantIntegers(index, path, node.input(1));
  if (!shape) return "";
  const auto inferred = std::count(shape->begin(), shape->end(), -1);
  if (inferred > 1) return "shape " + List(*shape) + " has more than one -1";
  for (int64_t d : *shape) {
    if (d < -1) return "shape " + List(*shape) + " has a dim " + std::to_string(d);
  }
  if (IntAttribute(node, "allowzero", 0) != 0 && inferred == 1 &&
      std::find(shape->begin(), shape->end(), 0) != shape->end()) {
    return "shape " + List(*shape) + " has both 0 and -1 with allowzero";
  }
  return "";
}

/// Gather's, Concat's and Split's axis in range; a Gather's constant indices within its axis.
std::string NamedAxisRule(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node,
                          const std::optional<SymShape>& in, bool gather) {
  if (!in) return "";
  const int64_t axis = AxisAttribute(node, index.onnx_opset());
  if (std::string rule = AxesRule({axis}, in->size(), "an input"); !rule.empty()) return rule;
  if (!gather || node.input_size() < 2) return "";
  std::optional<std::vector<int64_t>> indices = ConstantIntegers(index, path, node.input(1));
  const auto normal = static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(in->size()) : axis);
  return indices ? IndexRule(*indices, (*in)[normal], normal) : "";
}

/// ScatterND's constant indices address axes the data has, within their sizes.
std::string ScatterRule(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node,
                        const std::optional<SymShape>& in) {
  std::optional<std::vector<int64_t>> indices = ConstantIntegers(index, path, node.input(1));
  std::optional<SymShape> shape = ShapeOf(index, path, node.input(1));
  if (!in || !indices || !shape || shape->empty() || !shape->back().fixed() || shape->back().value == 0) return "";
  const auto width = static_cast<size_t>(shape->back().value);
  if (width > in->size()) {
    return "indices address " + std::to_string(width) + " axes of a data of rank " + std::to_string(in->size());
  }
  for (size_t k = 0; k < width; ++k) {
    std::vector<int64_t> coordinates;
    for (size_t i = k; i < indices->size(); i += width) coordinates.push_back((*indices)[i]);
    if (std::string rule = IndexRule(coordinates, (*in)[k], k); !rule.empty()) return rule;
  }
  return "";
}

/// The operators with rules: those whose axis effect (the operator table's) names axes, a permutation,
/// a shape or indices that the input's shape can contradict.
bool HasRules(AxisEffect effect) {
  switch (effect) {
    case AxisEffect::kRemoveUnit:
    case AxisEffect::kInsertUnit:
    case AxisEffect::kPermute:
    case AxisEffect::kCut:
    case AxisEffect::kReshape:
    case AxisEffect::kGather:
    case AxisEffect::kConcat:
    case AxisEffect::kSplit:
    case AxisEffect::kScatter:
      return true;
    default:
      return false;
  }
}

std::string NodeRule(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node) {
  const AxisEffect effect = EffectOf(node, index.onnx_opset());
  // Checked first: the input's shape is read only for the operators that have rules.
  if (node.input_size() == 0 || !HasRules(effect)) return "";
  const std::optional<SymShape> in = ShapeOf(index, path, node.input(0));
  switch (effect) {
    case AxisEffect::kRemoveUnit:
    case AxisEffect::kInsertUnit:
      return UnitAxesRule(index, path, node, in, effect == AxisEffect::kInsertUnit);
    case AxisEffect::kPermute:
      return PermRule(node, in);
    case AxisEffect::kCut:
      return SliceRule(index, path, node, in);
    case AxisEffect::kReshape:
      return node.input_size() >= 2 ? ReshapeRule(index, path, node) : "";
    case AxisEffect::kGather:
    case AxisEffect::kConcat:
    case AxisEffect::kSplit:
      return NamedAxisRule(index, path, node, in, effect == AxisEffect::kGather);
    case AxisEffect::kScatter:
      return node.input_size() >= 3 ? ScatterRule(index, path, node, in) : "";
    default:
      return "";
  }
}

}  // namespace

std::string FirstViewRuleViolation(const ModelIndex& index) {
  const onnx::ModelProto& model = index.model();
  std::string found;
  GraphPath root;
  ForEachGraph(model.graph(), root, [&](const GraphPath& path, const onnx::GraphProto& graph) {
    for (int n = 0; found.empty() && n < graph.node_size(); ++n) {
      if (std::string rule = NodeRule(index, path, graph.node(n)); !rule.empty()) {
        found = GraphPathString(model, path) + ": " + DescribeNode(model, path, n) + ": " + rule;
      }
    }
  });
  return found;
}

}  // namespace rnnstate
