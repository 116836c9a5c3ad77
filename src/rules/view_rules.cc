#include "rules/view_rules.h"

#include <algorithm>
#include <optional>
#include <set>
#include <vector>

#include "graph/constant_value.h"
#include "graph/graph_path.h"
#include "graph/op_semantics.h"
#include "graph/proto_access.h"
#include "graph/shape_eval.h"

namespace rnnstate {

namespace {

std::string List(const std::vector<int64_t>& values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + std::to_string(values[i]);
  return text + "]";
}

/// The values of an attribute, or of the value at input `slot`; nullopt when neither is known.
std::optional<std::vector<int64_t>> Operand(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node,
                                            int slot, const char* attribute) {
  return IntsOperand(index, path, node, attribute, slot);
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

/// The operators NodeRule has rules for.
const std::set<std::string> kRuledOps = {"Unsqueeze", "Squeeze", "Transpose", "Slice",    "Reshape",
                                         "Gather",    "Concat",  "Split",     "ScatterND"};

std::string NodeRule(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node) {
  const std::string& op = node.op_type();
  // Checked first: the input's shape is read only for the operators that have rules.
  if (!IsOnnxDomain(node.domain()) || node.input_size() == 0 || !kRuledOps.count(op)) return "";
  const std::optional<SymShape> in = ShapeOf(index, path, node.input(0));
  if (op == "Unsqueeze" || op == "Squeeze") {
    std::optional<std::vector<int64_t>> axes = Operand(index, path, node, 1, "axes");
    if (!in || !axes) return "";
    if (op == "Unsqueeze") return AxesRule(*axes, in->size() + axes->size(), "an output");
    if (std::string rule = AxesRule(*axes, in->size(), "an input"); !rule.empty()) return rule;
    for (int64_t a : *axes) {
      const SymDim& dim = (*in)[static_cast<size_t>(a < 0 ? a + static_cast<int64_t>(in->size()) : a)];
      if (dim.fixed() && dim.value != 1) {
        return "axis " + std::to_string(a) + " has size " + std::to_string(dim.value) + ", not 1";
      }
    }
    return "";
  }
  if (op == "Transpose") {
    const onnx::AttributeProto* perm = FindAttribute(node, "perm");
    if (!in || perm == nullptr || PermOf(node, static_cast<int64_t>(in->size()))) return "";
    const std::vector<int64_t> order(perm->ints().begin(), perm->ints().end());
    return "perm " + List(order) + " is not a permutation of the input's " + std::to_string(in->size()) + " axes";
  }
  if (op == "Slice") {
    std::optional<std::vector<int64_t>> parts[] = {
        Operand(index, path, node, 1, "starts"), Operand(index, path, node, 2, "ends"),
        Operand(index, path, node, 3, "axes"), Operand(index, path, node, 4, "steps")};
    const char* names[] = {"starts", "ends", "axes", "steps"};
    for (int k = 1; k < 4; ++k) {
      if (parts[0] && parts[k] && parts[k]->size() != parts[0]->size()) {
        return std::string("starts has ") + std::to_string(parts[0]->size()) + " values, " + names[k] + " " +
               std::to_string(parts[k]->size()) + " (they must have as many)";
      }
    }
    if (parts[3] && std::find(parts[3]->begin(), parts[3]->end(), 0) != parts[3]->end()) return "a step is 0";
    if (in && parts[2]) return AxesRule(*parts[2], in->size(), "an input");
    return "";
  }
  if (op == "Reshape" && node.input_size() >= 2) {
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
  if (op == "Gather" || op == "Concat" || op == "Split") {
    if (!in) return "";
    const int64_t axis = IntAttribute(node, "axis", 0);
    if (std::string rule = AxesRule({axis}, in->size(), "an input"); !rule.empty()) return rule;
    if (op != "Gather" || node.input_size() < 2) return "";
    std::optional<std::vector<int64_t>> indices = ConstantIntegers(index, path, node.input(1));
    const auto normal = static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(in->size()) : axis);
    return indices ? IndexRule(*indices, (*in)[normal], normal) : "";
  }
  if (op == "ScatterND" && node.input_size() >= 3) {
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
  }
  return "";
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
