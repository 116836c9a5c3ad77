#include "ops/int_fold.h"

#include <algorithm>
#include <functional>
#include <numeric>

#include "graph/proto_access.h"
#include "ops/op_semantics.h"
#include "values/constant_value.h"
#include "values/shape_eval.h"

namespace rnnstate {

namespace {

constexpr int kMaxFoldDepth = 24;
constexpr int64_t kMaxFoldElements = 4096;

int64_t FoldedCount(const std::vector<int64_t>& dims) {
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0 || (d > 0 && count > kMaxFoldElements / d)) return -1;
    count *= d;
  }
  return count;
}

std::vector<int64_t> FoldedStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

class Folder {
 public:
  explicit Folder(const ModelIndex& index) : index_(index) {}

  std::optional<IntTensor> Fold(const GraphPath& path, const std::string& name, int depth) {
    if (depth > kMaxFoldDepth || name.empty()) return std::nullopt;
    if (std::optional<ConstantValue> constant = FindConstant(index_, path, name)) {
      std::optional<std::vector<int64_t>> values = IntegerValues(*constant);
      if (!values) return std::nullopt;
      IntTensor t{constant->dims, std::move(*values)};
      if (FoldedCount(t.dims) != static_cast<int64_t>(t.values.size()))
        t.dims = {static_cast<int64_t>(t.values.size())};
      return t;
    }
    const ResolvedName resolved = index_.Resolve(path, name);
    if (resolved.node == nullptr || !IsOnnxDomain(resolved.node->domain())) return std::nullopt;
    return Node(resolved.graph, *resolved.node, depth);
  }

 private:
  std::optional<IntTensor> In(const GraphPath& path, const onnx::NodeProto& node, int slot, int depth) {
    if (slot >= node.input_size()) return std::nullopt;
    return Fold(path, node.input(slot), depth + 1);
  }

  std::optional<IntTensor> Node(const GraphPath& path, const onnx::NodeProto& node, int depth) {
    const std::string& op = node.op_type();
    if (op == "Shape") {
      // Fixed dims only: a shape vector with a symbolic dim is shape_eval's to follow.
      const std::optional<std::vector<int64_t>> values = IntValues(index_, path, node.output(0));
      if (!values) return std::nullopt;
      return IntTensor{{static_cast<int64_t>(values->size())}, *values};
    }
    if (op == "Identity" || op == "Cast") return In(path, node, 0, depth);
    if (op == "Neg") {
      std::optional<IntTensor> x = In(path, node, 0, depth);
      if (x)
        for (int64_t& v : x->values) v = -v;
      return x;
    }
    if (op == "ConstantOfShape") return ConstantOfShape(path, node, depth);
    if (op == "Concat") return Concat(path, node, depth);
    if (op == "Reshape") return Reshape(path, node, depth);
    if (op == "Unsqueeze" || op == "Squeeze") return UnitAxes(path, node, depth);
    if (op == "Transpose") return Transpose(path, node, depth);
    if (op == "Slice") return Slice(path, node, depth);
    if (op == "Gather") return Gather(path, node, depth);
    if (op == "Add" || op == "Sub" || op == "Mul") return Arithmetic(path, node, depth);
    return std::nullopt;
  }

  std::optional<IntTensor> ConstantOfShape(const GraphPath& path, const onnx::NodeProto& node, int depth) {
    const std::optional<IntTensor> shape = In(path, node, 0, depth);
    if (!shape || FoldedCount(shape->values) < 0) return std::nullopt;
    int64_t fill = 0;
    if (const onnx::AttributeProto* value = FindAttribute(node, "value")) {
      const std::optional<std::vector<int64_t>> v = IntegerValues(ConstantOfTensor(value->t()));
      if (!v || v->size() != 1) return std::nullopt;
      fill = v->front();
    }
    return IntTensor{shape->values, std::vector<int64_t>(static_cast<size_t>(FoldedCount(shape->values)), fill)};
  }

  std::optional<IntTensor> Concat(const GraphPath& path, const onnx::NodeProto& node, int depth) {
    std::vector<IntTensor> parts;
    for (int k = 0; k < node.input_size(); ++k) {
      std::optional<IntTensor> part = In(path, node, k, depth);
      if (!part || part->dims.empty()) return std::nullopt;
      parts.push_back(std::move(*part));
    }
    if (parts.empty()) return std::nullopt;
    const size_t rank = parts.front().dims.size();
    int64_t axis = AxisAttribute(node, index_.onnx_opset());
    if (axis < 0) axis += static_cast<int64_t>(rank);
    if (axis < 0 || axis >= static_cast<int64_t>(rank)) return std::nullopt;
    IntTensor out{parts.front().dims, {}};
    out.dims[axis] = 0;
    for (const IntTensor& p : parts) {
      if (p.dims.size() != rank) return std::nullopt;
      out.dims[axis] += p.dims[axis];
    }
    // Row-major: blocks of the axis and after it, one per index of the axes before.
    const int64_t outer = FoldedCount(std::vector<int64_t>(out.dims.begin(), out.dims.begin() + axis));
    if (outer < 0 || FoldedCount(out.dims) < 0) return std::nullopt;
    for (int64_t o = 0; o < outer; ++o) {
      for (const IntTensor& p : parts) {
        const int64_t block = FoldedCount(std::vector<int64_t>(p.dims.begin() + axis, p.dims.end()));
        out.values.insert(out.values.end(), p.values.begin() + o * block, p.values.begin() + (o + 1) * block);
      }
    }
    return out;
  }

  std::optional<IntTensor> Reshape(const GraphPath& path, const onnx::NodeProto& node, int depth) {
    std::optional<IntTensor> x = In(path, node, 0, depth);
    const std::optional<IntTensor> shape = In(path, node, 1, depth);
    if (!x || !shape) return std::nullopt;
    std::vector<int64_t> dims = shape->values;
    int64_t known = 1, inferred = -1;
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] == 0 && i < x->dims.size()) dims[i] = x->dims[i];
      if (dims[i] == -1) {
        if (inferred >= 0) return std::nullopt;
        inferred = static_cast<int64_t>(i);
      } else if (dims[i] > 0) {
        known *= dims[i];
      }
    }
    const int64_t count = static_cast<int64_t>(x->values.size());
    if (inferred >= 0) {
      if (known == 0 || count % known != 0) return std::nullopt;
      dims[static_cast<size_t>(inferred)] = count / known;
    }
    if (FoldedCount(dims) != count) return std::nullopt;
    x->dims = dims;
    return x;
  }

  std::optional<IntTensor> UnitAxes(const GraphPath& path, const onnx::NodeProto& node, int depth) {
    std::optional<IntTensor> x = In(path, node, 0, depth);
    if (!x) return std::nullopt;
    std::vector<int64_t> dims;
    if (node.op_type() == "Squeeze") {
      for (int64_t d : x->dims) {
        if (d != 1) dims.push_back(d);  // every unit axis (or those listed: the values stay the same)
      }
    } else {
      std::optional<std::vector<int64_t>> axes = AxesOperand(index_, path, node);
      if (!axes) return std::nullopt;
      dims = x->dims;
      const int64_t rank = static_cast<int64_t>(dims.size() + axes->size());
      for (int64_t& a : *axes) a = a < 0 ? a + rank : a;
      std::sort(axes->begin(), axes->end());
      for (int64_t a : *axes) {
        if (a < 0 || a > static_cast<int64_t>(dims.size())) return std::nullopt;
        dims.insert(dims.begin() + a, 1);
      }
    }
    x->dims = dims;
    return x;
  }

  std::optional<IntTensor> Transpose(const GraphPath& path, const onnx::NodeProto& node, int depth) {
    const std::optional<IntTensor> x = In(path, node, 0, depth);
    if (!x) return std::nullopt;
    const size_t rank = x->dims.size();
    std::vector<int64_t> perm(rank);
    for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(rank - 1 - i);
    if (std::optional<std::vector<int64_t>> given = PermAttribute(node)) perm = *given;
    if (perm.size() != rank) return std::nullopt;
    IntTensor out;
    for (int64_t p : perm) {
      if (p < 0 || p >= static_cast<int64_t>(rank)) return std::nullopt;
      out.dims.push_back(x->dims[static_cast<size_t>(p)]);
    }
    const std::vector<int64_t> in_strides = FoldedStrides(x->dims);
    const int64_t count = static_cast<int64_t>(x->values.size());
    std::vector<int64_t> index(rank, 0);
    for (int64_t k = 0; k < count; ++k) {
      int64_t offset = 0;
      for (size_t i = 0; i < rank; ++i) offset += index[i] * in_strides[static_cast<size_t>(perm[i])];
      out.values.push_back(x->values[static_cast<size_t>(offset)]);
      for (size_t i = rank; i-- > 0;) {
        if (++index[i] < out.dims[i]) break;
        index[i] = 0;
      }
    }
    return out;
  }

  std::optional<IntTensor> Slice(const GraphPath& path, const onnx::NodeProto& node, int depth) {
    const std::optional<IntTensor> x = In(path, node, 0, depth);
    const SliceOperands operands = SliceOperandsOf(index_, path, node);
    const std::optional<std::vector<int64_t>>&starts = operands.starts, &ends = operands.ends;
    if (!x || !starts || !ends || starts->size() != ends->size()) return std::nullopt;
    std::vector<int64_t> axes(starts->size()), steps(starts->size(), 1);
    std::iota(axes.begin(), axes.end(), 0);
    if (operands.axes) axes = *operands.axes;
    if (node.input_size() > 4 && !node.input(4).empty()) {
      const std::optional<std::vector<int64_t>> given = IntValues(index_, path, node.input(4));
      if (!given) return std::nullopt;
      steps = *given;
    }
    if (axes.size() != starts->size() || steps.size() != starts->size()) return std::nullopt;
    const int64_t rank = static_cast<int64_t>(x->dims.size());
    // For each axis: the indices kept, in order.
    std::vector<std::vector<int64_t>> kept(x->dims.size());
    for (size_t a = 0; a < kept.size(); ++a) {
      kept[a].resize(static_cast<size_t>(x->dims[a]));
      std::iota(kept[a].begin(), kept[a].end(), 0);
    }
    for (size_t i = 0; i < axes.size(); ++i) {
      const int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
      if (axis < 0 || axis >= rank || steps[i] == 0) return std::nullopt;
      const int64_t size = x->dims[static_cast<size_t>(axis)];
      auto clamp = [&](int64_t v) {
        if (v < 0) v += size;
        return steps[i] > 0 ? std::clamp<int64_t>(v, 0, size) : std::clamp<int64_t>(v, -1, size - 1);
      };
      const int64_t begin = clamp((*starts)[i]), end = clamp((*ends)[i]);
      std::vector<int64_t> picked;
      for (int64_t v = begin; steps[i] > 0 ? v < end : v > end; v += steps[i]) picked.push_back(v);
      kept[static_cast<size_t>(axis)] = picked;
    }
    IntTensor out;
    for (const auto& k : kept) out.dims.push_back(static_cast<int64_t>(k.size()));
    const std::vector<int64_t> strides = FoldedStrides(x->dims);
    const int64_t count = FoldedCount(out.dims);
    if (count < 0) return std::nullopt;
    std::vector<size_t> index(kept.size(), 0);
    for (int64_t k = 0; k < count; ++k) {
      int64_t offset = 0;
      for (size_t i = 0; i < kept.size(); ++i) offset += kept[i][index[i]] * strides[i];
      out.values.push_back(x->values[static_cast<size_t>(offset)]);
      for (size_t i = kept.size(); i-- > 0;) {
        if (++index[i] < kept[i].size()) break;
        index[i] = 0;
      }
    }
    return out;
  }

  std::optional<IntTensor> Gather(const GraphPath& path, const onnx::NodeProto& node, int depth) {
    const std::optional<IntTensor> x = In(path, node, 0, depth);
    const std::optional<IntTensor> indices = In(path, node, 1, depth);
    if (!x || !indices || x->dims.size() != 1 || AxisAttribute(node, index_.onnx_opset()) != 0) return std::nullopt;
    IntTensor out{indices->dims, {}};
    const int64_t size = x->dims[0];
    for (int64_t i : indices->values) {
      if (i < 0) i += size;
      if (i < 0 || i >= size) return std::nullopt;
      out.values.push_back(x->values[static_cast<size_t>(i)]);
    }
    return out;
  }

  std::optional<IntTensor> Arithmetic(const GraphPath& path, const onnx::NodeProto& node, int depth) {
    std::optional<IntTensor> a = In(path, node, 0, depth);
    const std::optional<IntTensor> b = In(path, node, 1, depth);
    if (!a || !b) return std::nullopt;
    // Same shape, or one operand of one element.
    const bool scalar_b = b->values.size() == 1;
    if (!scalar_b && a->values.size() == 1) return Arithmetic2(*b, *a, node.op_type(), true);
    if (!scalar_b && a->values.size() != b->values.size()) return std::nullopt;
    return Arithmetic2(*a, *b, node.op_type(), false);
  }

  static std::optional<IntTensor> Arithmetic2(IntTensor a, const IntTensor& b, const std::string& op, bool swapped) {
    for (size_t i = 0; i < a.values.size(); ++i) {
      int64_t x = a.values[i], y = b.values[b.values.size() == 1 ? 0 : i], r = 0;
      if (swapped) std::swap(x, y);
      const bool overflow = op == "Add"   ? __builtin_add_overflow(x, y, &r)
                            : op == "Sub" ? __builtin_sub_overflow(x, y, &r)
                                          : __builtin_mul_overflow(x, y, &r);
      if (overflow) return std::nullopt;
      a.values[i] = r;
    }
    return a;
  }

  const ModelIndex& index_;
};

}  // namespace

std::optional<IntTensor> FoldInts(const ModelIndex& index, const GraphPath& path, const std::string& name) {
  return Folder(index).Fold(path, name, 0);
}

}  // namespace rnnstate
