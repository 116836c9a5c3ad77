#include "exposure/default_path.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "graph/control_flow.h"
#include "graph/proto_access.h"
#include "values/constant_value.h"
#include "values/shape_eval.h"

namespace rnnstate {

namespace {

constexpr int kMaxDefaultDepth = 32;

/// Evaluates a small integer (or boolean, as 0/1) value computed from the input's shape and constants.
class ShapeCondition {
 public:
  ShapeCondition(const ModelIndex& index, std::map<std::string, std::vector<int64_t>> shapes)
      : index_(index), shapes_(std::move(shapes)) {}

  std::optional<std::vector<int64_t>> Value(const GraphPath& path, const std::string& name, int depth = 0) {
    if (depth > kMaxDefaultDepth || name.empty()) return std::nullopt;
    if (auto constant = ConstantIntegers(index_, path, name)) return constant;
    const ResolvedName resolved = index_.Resolve(path, name);
    if (resolved.node == nullptr) return std::nullopt;
    return Node(resolved.graph, *resolved.node, depth);
  }

 private:
  std::optional<std::vector<int64_t>> Node(const GraphPath& path, const onnx::NodeProto& node, int depth) {
    const std::string& op = node.op_type();
    if (!IsOnnxDomain(node.domain()) || node.input_size() == 0) return std::nullopt;
    if (op == "Shape" || op == "Size") {
      auto shape = shapes_.find(node.input(0));
      if (index_.Resolve(path, node.input(0)).graph != GraphPath{} || shape == shapes_.end()) return std::nullopt;
      if (op == "Shape") return shape->second;
      int64_t size = 1;
      for (int64_t d : shape->second) size *= d;
      return std::vector<int64_t>{size};
    }
    std::vector<std::vector<int64_t>> in;
    for (const auto& name : node.input()) {
      auto value = Value(path, name, depth + 1);
      if (!value) return std::nullopt;
      in.push_back(std::move(*value));
    }
    auto each = [&](auto f) -> std::optional<std::vector<int64_t>> {
      if (in.size() != 2 || (in[0].size() != in[1].size() && in[1].size() != 1)) return std::nullopt;
      std::vector<int64_t> out;
      for (size_t i = 0; i < in[0].size(); ++i) out.push_back(f(in[0][i], in[1][in[1].size() == 1 ? 0 : i]) ? 1 : 0);
      return out;
    };
    if (op == "Identity" || op == "Squeeze" || op == "Unsqueeze") return in[0];
    if (op == "Cast") {
      if (IntAttribute(node, "to", 0) != onnx::TensorProto::BOOL) return in[0];
      for (auto& v : in[0]) v = v != 0;
      return in[0];
    }
    if (op == "Not") {
      for (auto& v : in[0]) v = v == 0;
      return in[0];
    }
    if (op == "Gather" && in.size() == 2) {
      std::vector<int64_t> out;
      for (int64_t i : in[1]) {
        if (i < 0) i += static_cast<int64_t>(in[0].size());
        if (i < 0 || i >= static_cast<int64_t>(in[0].size())) return std::nullopt;
        out.push_back(in[0][i]);
      }
      return out;
    }
    if (op == "Equal") return each([](int64_t a, int64_t b) { return a == b; });
    if (op == "Greater") return each([](int64_t a, int64_t b) { return a > b; });
    if (op == "Less") return each([](int64_t a, int64_t b) { return a < b; });
    if (op == "GreaterOrEqual") return each([](int64_t a, int64_t b) { return a >= b; });
    if (op == "LessOrEqual") return each([](int64_t a, int64_t b) { return a <= b; });
    if (op == "And") return each([](int64_t a, int64_t b) { return a && b; });
    if (op == "Or") return each([](int64_t a, int64_t b) { return a || b; });
    return std::nullopt;
  }

  const ModelIndex& index_;
  const std::map<std::string, std::vector<int64_t>> shapes_;
};

/// The branch the If takes for state inputs of the given concrete shapes, or "" when unknown.
std::string BranchFor(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& select,
                      std::map<std::string, std::vector<int64_t>> shapes) {
  auto value = ShapeCondition(index, std::move(shapes)).Value(path, IfCondition(select));
  if (!value || value->size() != 1) return "";
  return IfBranchTaken((*value)[0] != 0);
}

/// The state inputs' shapes with every dynamic axis `fill` and axis `empty` (when it has one) 0.
std::map<std::string, std::vector<int64_t>> Concrete(const ModelIndex& index,
                                                     const std::map<std::string, size_t>& state_inputs,
                                                     int64_t fill, std::optional<size_t> empty) {
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto& [input, batch_axis] : state_inputs) {
    std::optional<SymShape> shape = ShapeOf(index, GraphPath{}, input);
    if (!shape) continue;
    std::vector<int64_t> concrete;
    for (size_t a = 0; a < shape->size(); ++a) {
      concrete.push_back(empty == a ? 0 : (*shape)[a].fixed() ? (*shape)[a].value : fill);
    }
    shapes[input] = std::move(concrete);
  }
  return shapes;
}

}  // namespace

bool RunsOnlyWhenEmpty(const ModelIndex& index, const GraphPath& path, int node, const std::string& branch,
                       const std::map<std::string, size_t>& state_inputs) {
  const onnx::NodeProto& select = ResolveGraph(index.model(), path)->node(node);
  if (ContainerKindOf(select, index.onnx_opset()) != ContainerKind::kIf || select.input_size() == 0) return false;
  // Fed: every dynamic axis 1 or 2; the branch must be the other one.
  for (int64_t fill : {1, 2}) {
    const std::string taken = BranchFor(index, path, select, Concrete(index, state_inputs, fill, std::nullopt));
    if (taken.empty() || taken == branch) return false;
  }
  // Empty: along the batch axis (what rnnstate writes), or along a fixed axis the authors test (PyTorch's
  // `len(state)` reads axis 0, the h/c axis of a stacked state [2,B,H]). ONNX Runtime refuses an empty
  // feed on a fixed axis, so that branch is the authors' first call only in principle: the first feed
  // stays zeros, which the fed branch computes alike when the default is zeros.
  std::vector<size_t> axes;
  for (const auto& [input, batch_axis] : state_inputs) axes.push_back(batch_axis);
  for (const auto& [input, batch_axis] : state_inputs) {
    const std::optional<SymShape> shape = ShapeOf(index, GraphPath{}, input);
    for (size_t a = 0; shape && a < shape->size(); ++a) {
      if ((*shape)[a].fixed()) axes.push_back(a);
    }
  }
  for (size_t axis : axes) {
    if (BranchFor(index, path, select, Concrete(index, state_inputs, 1, axis)) == branch) return true;
  }
  return false;
}

}  // namespace rnnstate
