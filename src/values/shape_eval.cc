#include "values/shape_eval.h"

#include <algorithm>
#include <climits>

#include "graph/control_flow.h"
#include "graph/dim.h"
#include "graph/proto_access.h"
#include "values/constant_value.h"

namespace rnnstate {

namespace {

constexpr int kMaxDepth = 32;

int64_t Normalize(int64_t index, int64_t size) { return index < 0 ? index + size : index; }

std::optional<SymShape> Evaluate(const ModelIndex& index, const GraphPath& path, const std::string& name, int depth);

std::optional<std::vector<int64_t>> Ints(const ModelIndex& index, const GraphPath& path, const std::string& name,
                                         int depth) {
  // Constants first: they may hold negative values (axes, -1), which a SymDim cannot.
  if (std::optional<std::vector<int64_t>> constant = ConstantIntegers(index, path, name)) return constant;
  std::optional<SymShape> value = Evaluate(index, path, name, depth);
  if (!value) return std::nullopt;
  std::vector<int64_t> ints;
  for (const SymDim& d : *value) {
    if (!d.fixed()) return std::nullopt;
    ints.push_back(d.value);
  }
  return ints;
}

/// The node's input `slot` as integers, or its attribute `attribute` (older opsets), or `fallback`.
std::optional<std::vector<int64_t>> Operand(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node,
                                            int slot, const char* attribute, int depth,
                                            std::optional<std::vector<int64_t>> fallback = std::nullopt) {
  if (const onnx::AttributeProto* a = FindAttribute(node, attribute)) {
    return std::vector<int64_t>(a->ints().begin(), a->ints().end());
  }
  if (slot < node.input_size() && !node.input(slot).empty()) return Ints(index, path, node.input(slot), depth);
  return fallback;
}

/// `name` is known to be no vector: its declared, inferred or constant rank is not 1. The values evaluated
/// here are vectors (a shape, parts of it), whose one axis a valid Gather or Slice reads whatever axis it
/// names (0 or -1): so no axis is read here, the operator table's units read them (ops/op_semantics).
bool KnownNotVector(const ModelIndex& index, const GraphPath& path, const std::string& name) {
  if (const onnx::TypeProto* type = index.TypeOf(path, name);
      type != nullptr && type->has_tensor_type() && type->tensor_type().has_shape()) {
    return type->tensor_type().shape().dim_size() != 1;
  }
  const std::optional<std::vector<int64_t>> dims = ConstantDims(index, path, name);
  return dims && dims->size() != 1;
}

/// `a op b` on integers (Div truncating, as ONNX's integer Div), nullopt when it overflows or divides by 0.
std::optional<int64_t> Apply(const std::string& op, int64_t a, int64_t b) {
  int64_t r = 0;
  if (op == "Add") return __builtin_add_overflow(a, b, &r) ? std::nullopt : std::optional<int64_t>(r);
  if (op == "Sub") return __builtin_sub_overflow(a, b, &r) ? std::nullopt : std::optional<int64_t>(r);
  if (op == "Mul") return __builtin_mul_overflow(a, b, &r) ? std::nullopt : std::optional<int64_t>(r);
  if (op == "Max") return std::max(a, b);
  if (op == "Min") return std::min(a, b);
  if (b == 0 || (a == INT64_MIN && b == -1)) return std::nullopt;
  return a / b;
}

/// Elementwise integer arithmetic on known values, a one-element operand broadcast to the other's length
/// (`torch.chunk` computes Slice bounds as `k * ((Shape(v)[-1] + 1) / 2)`; tf2onnx a trip count as Max).
/// Every element must be fixed, and so must the results (a SymDim holds no negative value).
std::optional<SymShape> Arithmetic(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node,
                                   int depth) {
  if (node.input_size() < 2 || ((node.op_type() != "Max" && node.op_type() != "Min") && node.input_size() != 2)) {
    return std::nullopt;
  }
  std::optional<std::vector<int64_t>> result = Ints(index, path, node.input(0), depth + 1);
  for (int k = 1; result && k < node.input_size(); ++k) {
    const std::optional<std::vector<int64_t>> other = Ints(index, path, node.input(k), depth + 1);
    if (!other) return std::nullopt;
    const size_t length = std::max(result->size(), other->size());
    if ((result->size() != length && result->size() != 1) || (other->size() != length && other->size() != 1)) {
      return std::nullopt;
    }
    std::vector<int64_t> next(length);
    for (size_t i = 0; i < length; ++i) {
      const std::optional<int64_t> v =
          Apply(node.op_type(), (*result)[result->size() == 1 ? 0 : i], (*other)[other->size() == 1 ? 0 : i]);
      if (!v) return std::nullopt;
      next[i] = *v;
    }
    result = std::move(next);
  }
  if (!result) return std::nullopt;
  SymShape values;
  for (int64_t v : *result) {
    if (v < 0) return std::nullopt;
    values.push_back(SymDim{v, ""});
  }
  return values;
}

std::optional<SymShape> EvaluateNode(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node,
                                     int depth) {
  const std::string& op = node.op_type();
  if (!IsOnnxDomain(node.domain()) || node.input_size() == 0) return std::nullopt;
  if (op == "Shape") {
    std::optional<SymShape> shape = ShapeOf(index, path, node.input(0));
    if (!shape || shape->size() == 1) {
      // A vector computed here (Range, Slice of it) has the length this evaluation finds.
      if (std::optional<SymShape> vector = Evaluate(index, path, node.input(0), depth + 1)) {
        shape = SymShape{SymDim{static_cast<int64_t>(vector->size()), ""}};
      }
    }
    if (!shape) return std::nullopt;
    const int64_t rank = static_cast<int64_t>(shape->size());
    int64_t start = std::clamp(Normalize(IntAttribute(node, "start", 0), rank), int64_t{0}, rank);
    int64_t end = std::clamp(Normalize(IntAttribute(node, "end", rank), rank), start, rank);
    return SymShape(shape->begin() + start, shape->begin() + end);
  }
  if (op == "Cast" || op == "Identity" || op == "Squeeze" || op == "Unsqueeze") {
    return Evaluate(index, path, node.input(0), depth + 1);  // 0-d and 1-d vectors flatten alike
  }
  if (IsOnnxOp(node, {"Add", "Sub", "Mul", "Div", "Max", "Min"})) return Arithmetic(index, path, node, depth);
  std::optional<SymShape> data = Evaluate(index, path, node.input(0), depth + 1);
  if (op == "Concat") {
    SymShape all;
    for (const auto& input : node.input()) {
      std::optional<SymShape> part = Evaluate(index, path, input, depth + 1);
      if (!part) return std::nullopt;
      all.insert(all.end(), part->begin(), part->end());
    }
    return all;
  }
  if (op == "Range") {
    auto start = Ints(index, path, node.input(0), depth + 1);
    auto limit = node.input_size() > 1 ? Ints(index, path, node.input(1), depth + 1) : std::nullopt;
    auto delta = node.input_size() > 2 ? Ints(index, path, node.input(2), depth + 1) : std::nullopt;
    // The span and the steps are counted without overflow: Range(-2, INT64_MAX, 1) wrapped to a negative
    // span, and a step near INT64_MAX wrapped back below the limit, each allocating until memory ran out.
    int64_t span = 0;
    if (!start || !limit || !delta || start->size() != 1 || limit->size() != 1 || delta->size() != 1 ||
        (*delta)[0] <= 0 || __builtin_sub_overflow((*limit)[0], (*start)[0], &span) || span > 4096) {
      return std::nullopt;
    }
    SymShape values;
    const int64_t step = std::min((*delta)[0], span);
    for (int64_t offset = 0; offset < span; offset += step) values.push_back(SymDim{(*start)[0] + offset, ""});
    return values;
  }
  if (!data) return std::nullopt;
  const int64_t size = static_cast<int64_t>(data->size());
  if (op == "Gather") {
    auto indices = node.input_size() > 1 ? Ints(index, path, node.input(1), depth + 1) : std::nullopt;
    if (!indices || KnownNotVector(index, path, node.input(0))) return std::nullopt;
    SymShape picked;
    for (int64_t i : *indices) {
      i = Normalize(i, size);
      if (i < 0 || i >= size) return std::nullopt;
      picked.push_back((*data)[i]);
    }
    return picked;
  }
  if (op == "Slice") {
    auto starts = Operand(index, path, node, 1, "starts", depth + 1);
    auto ends = Operand(index, path, node, 2, "ends", depth + 1);
    auto steps = Operand(index, path, node, 4, "steps", depth + 1, std::vector<int64_t>{1});
    if (!starts || !ends || starts->size() != 1 || ends->size() != 1 || KnownNotVector(index, path, node.input(0)) ||
        !steps || *steps != std::vector<int64_t>{1}) {
      return std::nullopt;
    }
    const int64_t begin = std::clamp(Normalize((*starts)[0], size), int64_t{0}, size);
    const int64_t end = std::clamp(Normalize((*ends)[0], size), begin, size);
    return SymShape(data->begin() + begin, data->begin() + end);
  }
  return std::nullopt;
}

std::optional<SymShape> Evaluate(const ModelIndex& index, const GraphPath& path, const std::string& name, int depth) {
  if (depth > kMaxDepth || name.empty()) return std::nullopt;
  if (std::optional<std::vector<int64_t>> constant = ConstantIntegers(index, path, name)) {
    SymShape values;
    for (int64_t v : *constant) values.push_back(SymDim{v, ""});
    return values;
  }
  const ResolvedName resolved = index.Resolve(path, name);
  if (resolved.node == nullptr) return std::nullopt;
  return EvaluateNode(index, resolved.graph, *resolved.node, depth);
}

/// The shape Expand(v, s) gives a `v` of shape `in` for the target `target` (both of one rank: the
/// forms rnnstate and exporters write), axis by axis where it is certain; nullopt for other ranks.
std::optional<SymShape> ExpandedShape(const std::optional<SymShape>& in, const std::optional<SymShape>& target) {
  if (!in || !target || in->size() != target->size()) return std::nullopt;
  SymShape shape;
  for (size_t i = 0; i < in->size(); ++i) {
    const SymDim& from = (*in)[i];
    const SymDim& to = (*target)[i];
    if (to.fixed() && to.value != 1) {
      shape.push_back(to);  // broadcast to it, or equal to it (else the model fails)
    } else if (to.fixed()) {
      shape.push_back(from);  // 1 keeps v's size
    } else if (to.known() && (from == to || (from.fixed() && from.value == 1))) {
      shape.push_back(to);
    } else {
      shape.push_back(SymDim{});
    }
  }
  return shape;
}

}  // namespace

/// The shape of a Loop's scan output `name` when nothing declares it (onnx 1.12's inference keeps no
/// shapes of a Loop's outputs): an axis of unknown length, then the body output's declared shape.
std::optional<SymShape> ScanOutputShape(const ModelIndex& index, const GraphPath& path, const std::string& name) {
  const ResolvedName at = index.Resolve(path, name);
  if (at.node == nullptr || !IsOnnxOp(*at.node, {"Loop"}) ||
      !IsScanOutput(ContainerKind::kLoop, *at.node, at.producer.slot))
    return std::nullopt;
  const onnx::GraphProto* body = GraphAttribute(*at.node, "body");
  const int position = BodyOutputOfNodeOutput(ContainerKind::kLoop, at.producer.slot);
  if (body == nullptr || position >= body->output_size()) return std::nullopt;
  GraphPath body_path = at.graph;
  body_path.push_back(GraphStep{at.producer.index, "body", -1});
  std::optional<SymShape> step = ShapeOf(index, body_path, body->output(position).name());
  if (!step) return std::nullopt;
  step->insert(step->begin(), SymDim{});
  return step;
}

std::optional<SymShape> ShapeOf(const ModelIndex& index, const GraphPath& path, const std::string& name) {
  const onnx::TypeProto* type = index.TypeOf(path, name);
  if (type == nullptr || (type->has_tensor_type() && !type->tensor_type().has_shape())) {
    return ScanOutputShape(index, path, name);
  }
  if (type == nullptr || !type->has_tensor_type() || !type->tensor_type().has_shape()) return std::nullopt;
  SymShape shape;
  for (const auto& d : type->tensor_type().shape().dim()) {
    if (d.has_dim_value() && d.dim_value() >= 0) {
      shape.push_back(SymDim{d.dim_value(), ""});
    } else if (d.has_dim_param() && !IsInventedDimName(d.dim_param())) {
      shape.push_back(SymDim{-1, d.dim_param()});
    } else {
      shape.push_back(SymDim{});  // onnx's inference names what it does not know "unk__N": unknown
    }
  }
  return shape;
}

std::optional<SymShape> ShapeValue(const ModelIndex& index, const GraphPath& path, const std::string& name) {
  return Evaluate(index, path, name, 0);
}

std::optional<SymShape> FilledShape(const ModelIndex& index, const GraphPath& path, const std::string& name) {
  GraphPath graph = path;
  std::string value = name;
  for (int depth = 0; depth < kMaxDepth; ++depth) {
    const ResolvedName resolved = index.Resolve(graph, value);
    if (resolved.node == nullptr || resolved.node->input_size() == 0) return std::nullopt;
    if (IsOnnxOp(*resolved.node, {"ConstantOfShape"}))
      return ShapeValue(index, resolved.graph, resolved.node->input(0));
    if (IsOnnxOp(*resolved.node, {"Expand"}) && resolved.node->input_size() == 2) {
      return ExpandedShape(ShapeOf(index, resolved.graph, resolved.node->input(0)),
                           ShapeValue(index, resolved.graph, resolved.node->input(1)));
    }
    if (!IsOnnxOp(*resolved.node, {"Identity", "Cast"})) return std::nullopt;
    graph = resolved.graph;
    value = resolved.node->input(0);
  }
  return std::nullopt;
}

std::optional<std::vector<int64_t>> IntValues(const ModelIndex& index, const GraphPath& path, const std::string& name) {
  return Ints(index, path, name, 0);
}

std::optional<bool> KnownCondition(const ModelIndex& index, const GraphPath& path, const std::string& name) {
  // Each step goes one node back: a condition is a handful of nodes.
  std::string at = name;
  GraphPath where = path;
  bool negate = false;
  for (int depth = 0; depth < kMaxDepth; ++depth) {
    if (std::optional<ConstantValue> constant = FindConstant(index, where, at)) {
      const std::optional<bool> value = OneBool(*constant);
      if (!value) return std::nullopt;
      return *value != negate;
    }
    const ResolvedName resolved = index.Resolve(where, at);
    if (resolved.node == nullptr || !IsOnnxDomain(resolved.node->domain())) return std::nullopt;
    const onnx::NodeProto& node = *resolved.node;
    where = resolved.graph;
    if (IsOnnxOp(node, {"Cast", "Identity", "Squeeze", "Unsqueeze", "Not"}) && node.input_size() > 0) {
      negate = negate != (node.op_type() == "Not");
      at = node.input(0);
      continue;
    }
    if (IsOnnxOp(node, {"And", "Or"}) && node.input_size() == 2) {
      const std::optional<bool> a = KnownCondition(index, where, node.input(0));
      const std::optional<bool> b = KnownCondition(index, where, node.input(1));
      const bool is_and = node.op_type() == "And";
      // One known operand can decide it alone: false for And, true for Or.
      if ((a && *a != is_and) || (b && *b != is_and)) return !is_and != negate;
      if (!a || !b) return std::nullopt;
      return (is_and ? (*a && *b) : (*a || *b)) != negate;
    }
    if (IsOnnxOp(node, {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"}) && node.input_size() == 2) {
      const std::optional<std::vector<int64_t>> a = IntValues(index, where, node.input(0));
      const std::optional<std::vector<int64_t>> b = IntValues(index, where, node.input(1));
      if (!a || !b || a->size() != 1 || b->size() != 1) return std::nullopt;
      const int64_t x = a->front(), y = b->front();
      const std::string& op = node.op_type();
      const bool value = op == "Equal"         ? x == y
                         : op == "Less"        ? x < y
                         : op == "Greater"     ? x > y
                         : op == "LessOrEqual" ? x <= y
                                               : x >= y;
      return value != negate;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

SymShape MergeShapes(const std::optional<SymShape>& a, const std::optional<SymShape>& b) {
  if (!a) return b ? *b : SymShape{};
  if (!b || b->size() != a->size()) return *a;
  SymShape merged = *a;
  for (size_t i = 0; i < merged.size(); ++i) {
    if (!merged[i].fixed() && ((*b)[i].fixed() || merged[i].name.empty() || IsInventedDimName(merged[i].name))) {
      if ((*b)[i].known()) merged[i] = (*b)[i];
    }
  }
  return merged;
}

}  // namespace rnnstate
