#include "loops/axis_trace.h"

#include <algorithm>
#include <set>
#include <vector>

#include "graph/control_flow.h"
#include "graph/proto_access.h"
#include "ops/axis_map.h"
#include "ops/op_semantics.h"
#include "states/recurrent_ops.h"
#include "values/constant_value.h"

namespace rnnstate {

namespace {

constexpr int kMaxAxisDepth = 64;

const onnx::TensorShapeProto* KnownShape(const ModelIndex& index, const GraphPath& path, const std::string& name) {
  const onnx::TypeProto* type = index.TypeOf(path, name);
  if (type == nullptr || !type->has_tensor_type() || !type->tensor_type().has_shape()) return nullptr;
  return &type->tensor_type().shape();
}

/// True when the declared or inferred dim `axis` of `name` is the fixed size 1 (a broadcast operand).
bool IsOne(const ModelIndex& index, const GraphPath& path, const std::string& name, int64_t axis) {
  const onnx::TensorShapeProto* shape = KnownShape(index, path, name);
  if (shape == nullptr || axis < 0 || axis >= shape->dim_size()) return false;
  const auto& dim = shape->dim(static_cast<int>(axis));
  return dim.has_dim_value() && dim.dim_value() == 1;
}

/// One trace: the model, the branch facts, the memo, and what the calls since the current one began did.
/// The memo keeps only a call below which every call passed the axis to one operand (a tail call): its
/// result is the same from any depth up to the depth limit, which cuts such a chain wherever it starts.
struct Walk {
  using Step = std::optional<InputAxis> (*)(Walk&, const GraphPath&, const std::string&, int64_t, int);

  const ModelIndex& index;
  const BranchFacts* facts;
  AxisTraceMemo* memo;
  int deepest = 0;      ///< the depth of the deepest call made; kMaxAxisDepth + 1 when the walk was cut
  bool forked = false;  ///< a call was made that may try several operands or branches

  /// Called where a step may make more than one call (or choose its call by another call's result).
  void Fork() { forked = true; }

  /// `step` at `depth`, or what the memo knows of it.
  std::optional<InputAxis> Memoized(AxisTraceMemo::Kind kind, const GraphPath& path, const std::string& value,
                                    int64_t axis, int depth, Step step) {
    if (depth > kMaxAxisDepth) {
      deepest = kMaxAxisDepth + 1;
      return std::nullopt;
    }
    std::string key;
    if (memo != nullptr) {
      key = AxisTraceMemo::Key(kind, path, value, axis);
      if (const AxisTraceMemo::Entry* entry = memo->Find(key)) {
        // A chain cut from some depth is cut from any deeper start; a chain that ended within the limit
        // ends the same way from any start that leaves room for it, and is cut from the others.
        if (!entry->cut && depth + entry->height <= kMaxAxisDepth) {
          deepest = std::max(deepest, depth + entry->height);
          return entry->result;
        }
        if (!entry->cut || depth >= entry->depth) {
          deepest = kMaxAxisDepth + 1;
          return std::nullopt;
        }
      }
    }
    const int outer_deepest = deepest;
    const bool outer_forked = forked;
    deepest = depth;
    forked = false;
    std::optional<InputAxis> result = step(*this, path, value, axis, depth);
    if (memo != nullptr && !forked) {
      memo->Store(std::move(key), AxisTraceMemo::Entry{result, depth, deepest - depth, deepest > kMaxAxisDepth});
    }
    deepest = std::max(deepest, outer_deepest);
    forked = forked || outer_forked;
    return result;
  }
};

std::optional<InputAxis> AxisStep(Walk& walk, const GraphPath& path, const std::string& value, int64_t axis, int depth);

std::optional<InputAxis> Axis(Walk& walk, const GraphPath& path, const std::string& value, int64_t axis, int depth) {
  return walk.Memoized(AxisTraceMemo::Kind::kAxis, path, value, axis, depth, AxisStep);
}

std::optional<InputAxis> ElementStep(Walk& walk, const GraphPath& path, const std::string& vector, int64_t element,
                                     int depth);

std::optional<InputAxis> Element(Walk& walk, const GraphPath& path, const std::string& vector, int64_t element,
                                 int depth) {
  return walk.Memoized(AxisTraceMemo::Kind::kElement, path, vector, element, depth, ElementStep);
}

std::optional<InputAxis> ElementStep(Walk& walk, const GraphPath& path, const std::string& vector, int64_t element,
                                     int depth) {
  if (vector.empty() || element < 0) return std::nullopt;
  const ModelIndex& index = walk.index;
  const ResolvedName at = index.Resolve(path, vector);
  if (at.node == nullptr || !IsOnnxDomain(at.node->domain()) || at.node->input_size() == 0) return std::nullopt;
  const onnx::NodeProto& node = *at.node;
  const std::string& op = node.op_type();
  // Reshapes keep the elements in order (the shape computations' Unsqueeze of a Gathered scalar, a Squeeze
  // back), Identity and Cast keep their values.
  if (OnlyReshapes(node)) {
    return Element(walk, at.graph, node.input(0), element, depth + 1);
  }
  if (op == "Shape") {
    const int rank = RankOf(index, at.graph, node.input(0));
    int64_t start = IntAttribute(node, "start", 0);
    if (start < 0) {
      if (rank < 0) return std::nullopt;
      start = std::max<int64_t>(0, start + rank);
    }
    return Axis(walk, at.graph, node.input(0), start + element, depth + 1);
  }
  if (op == "Concat") {
    for (const auto& part : node.input()) {
      const std::optional<int64_t> length = VectorLength(index, at.graph, part);
      if (!length) return std::nullopt;
      if (element < *length) return Element(walk, at.graph, part, element, depth + 1);
      element -= *length;
    }
    return std::nullopt;
  }
  if (op == "Gather" && AxisAttribute(node, index.onnx_opset()) == 0 && node.input_size() == 2) {
    const std::optional<std::vector<int64_t>> indices = ConstantIntegers(index, at.graph, node.input(1));
    if (!indices || element >= static_cast<int64_t>(indices->size())) return std::nullopt;
    int64_t picked = (*indices)[static_cast<size_t>(element)];
    if (picked < 0) {
      const std::optional<int64_t> length = VectorLength(index, at.graph, node.input(0));
      if (!length) return std::nullopt;
      picked += *length;
    }
    return Element(walk, at.graph, node.input(0), picked, depth + 1);
  }
  if (op == "Slice" && node.input_size() >= 3) {
    const std::optional<int64_t> start = ConstantScalar(index, at.graph, node.input(1));
    if (!start) return std::nullopt;
    if (node.input_size() > 3 && !node.input(3).empty() && ConstantScalar(index, at.graph, node.input(3)) != 0) {
      return std::nullopt;
    }
    if (node.input_size() > 4 && !node.input(4).empty() && ConstantScalar(index, at.graph, node.input(4)) != 1) {
      return std::nullopt;
    }
    int64_t first = *start;
    if (first < 0) {
      const std::optional<int64_t> length = VectorLength(index, at.graph, node.input(0));
      if (!length) return std::nullopt;
      first = std::max<int64_t>(0, first + *length);
    }
    return Element(walk, at.graph, node.input(0), first + element, depth + 1);
  }
  return std::nullopt;
}

/// Axis `axis` of output `slot` of the If at node `node` of `path`: the same input axis in every branch
/// that can run (BranchFacts rule out the branches a rank test never takes), or nullopt.
std::optional<InputAxis> ThroughIf(Walk& walk, const GraphPath& path, int node, int slot, int64_t axis, int depth) {
  walk.Fork();
  const ModelIndex& index = walk.index;
  const BranchFacts* facts = walk.facts;
  const onnx::NodeProto& select = ResolveGraph(index.model(), path)->node(node);
  const int position = BodyOutputOfNodeOutput(ContainerKind::kIf, slot);
  std::optional<InputAxis> common;
  for (const char* branch : kIfBranches) {
    if (facts != nullptr && facts->Excludes(index, path, node, branch)) continue;
    const onnx::GraphProto* body = GraphAttribute(select, branch);
    if (body == nullptr || position < 0 || position >= body->output_size()) return std::nullopt;
    GraphPath inner = path;
    inner.push_back(GraphStep{node, branch, -1});
    const std::optional<InputAxis> traced = Axis(walk, inner, body->output(position).name(), axis, depth + 1);
    if (!traced || (common && !(*common == *traced))) return std::nullopt;
    common = traced;
  }
  return common;
}

std::optional<InputAxis> AxisStep(Walk& walk, const GraphPath& path, const std::string& value, int64_t axis,
                                  int depth) {
  if (value.empty() || axis < 0) return std::nullopt;
  const ModelIndex& index = walk.index;
  const ResolvedName at = index.Resolve(path, value);
  const bool input =
      at.producer.kind == Producer::Kind::kGraphInput || at.producer.kind == Producer::Kind::kDefaultedInput;
  if (input && at.graph.empty()) return InputAxis{value, axis};
  if (at.node == nullptr) return std::nullopt;
  const onnx::NodeProto& node = *at.node;
  if (ContainerKindOf(node, index.onnx_opset()) == ContainerKind::kIf) {
    return ThroughIf(walk, at.graph, at.producer.index, at.producer.slot, axis, depth);
  }
  if (IsOnnxOp(node, {"ConstantOfShape"}) && node.input_size() == 1) {
    return Element(walk, at.graph, node.input(0), axis, depth + 1);
  }
  if (IsOnnxOp(node, {"Expand"}) && node.input_size() == 2) {
    walk.Fork();
    // Output rank max(rank(v), len(s)), both right-aligned: the axis is the shape's element, unless v
    // has a size other than 1 there.
    const std::optional<int64_t> length = VectorLength(index, at.graph, node.input(1));
    const int rank = RankOf(index, at.graph, node.input(0));
    if (length && rank >= 0) {
      const int64_t out_rank = std::max<int64_t>(*length, rank);
      if (auto traced = Element(walk, at.graph, node.input(1), axis - (out_rank - *length), depth + 1)) {
        return traced;
      }
      const int64_t data_axis = axis - (out_rank - rank);
      if (data_axis < 0 || IsOne(index, at.graph, node.input(0), data_axis)) return std::nullopt;
      return Axis(walk, at.graph, node.input(0), data_axis, depth + 1);
    }
    return std::nullopt;
  }
  // Broadcasting: the axis may come from any operand of the output's rank.
  if (IsElementwiseMany(node)) {
    walk.Fork();
    const int out_rank = RankOf(index, at.graph, node.output(at.producer.slot));
    for (int slot = 0; slot < node.input_size(); ++slot) {
      const std::string& operand = node.input(slot);
      if (operand.empty() || (IsOnnxOp(node, {"Where"}) && slot == 0 && node.input_size() == 3)) continue;
      if (out_rank < 0 || RankOf(index, at.graph, operand) != out_rank || IsOne(index, at.graph, operand, axis))
        continue;
      if (auto traced = Axis(walk, at.graph, operand, axis, depth + 1)) return traced;
    }
    return std::nullopt;
  }
  const std::optional<std::pair<int, int64_t>> source = SourceAxis(index, at.graph, node, at.producer.slot, axis);
  if (!source || source->first >= node.input_size()) return std::nullopt;
  return Axis(walk, at.graph, node.input(source->first), source->second, depth + 1);
}

/// For scan output `slot` of the Loop `node`: the carried variable whose next value it is (through
/// Identity in the body, tf2onnx's per-step h), as that variable's Loop input slot; -1 otherwise.
int CarriedOfScanOutput(const onnx::NodeProto& node, int slot) {
  const onnx::GraphProto* body = GraphAttribute(node, "body");
  const int carried = node.input_size() - 2;
  if (body == nullptr || carried < 0 || slot < carried || slot + 1 >= body->output_size()) return -1;
  std::string value = body->output(slot + 1).name();
  for (int depth = 0; depth < kMaxAxisDepth; ++depth) {
    for (int j = 0; j < carried; ++j) {
      if (body->output(1 + j).name() == value) return 2 + j;
    }
    const auto producer = std::find_if(body->node().begin(), body->node().end(), [&](const onnx::NodeProto& n) {
      return std::find(n.output().begin(), n.output().end(), value) != n.output().end();
    });
    if (producer == body->node().end() || !IsOnnxOp(*producer, {"Identity"})) return -1;
    value = producer->input(0);
  }
  return -1;
}

}  // namespace

std::optional<std::pair<int, int64_t>> SourceAxis(const ModelIndex& index, const GraphPath& path,
                                                  const onnx::NodeProto& node, int slot, int64_t axis) {
  if (const RecurrentOp* recurrent = FindRecurrentOp(node)) {
    // Y [seq, D, batch, H]; Y_h, Y_c [D, batch, H] (layout 0); the batch is X's axis 1.
    if (IntAttribute(node, "layout", 0) != 0) return std::nullopt;
    const bool batch = (slot == 0 && axis == 2) || (slot > 0 && axis == 1);
    if (batch) return std::make_pair(recurrent->x_slot, int64_t{1});
    return std::nullopt;
  }
  if (!IsOnnxDomain(node.domain()) || node.input_size() == 0) return std::nullopt;
  if (node.op_type() == "Loop") {
    // A scan output stacks the per-step values along a new axis 0; when each is a carried variable's
    // next value, its other axes are that variable's, whose lengths its initial value gives (the batch
    // of a stacked layer's input, sized from the previous layer's output).
    const int carried = CarriedOfScanOutput(node, slot);
    if (carried < 0 || axis < 1) return std::nullopt;
    return std::make_pair(carried, axis - 1);
  }
  const int out_rank = RankOf(index, path, node.output(slot));
  const int in_rank = RankOf(index, path, node.input(0));
  switch (EffectOf(node, index.onnx_opset())) {
    // A one-operand elementwise op (Identity, Cast, ...) keeps every axis, whatever inference knows of the
    // ranks (none after a Reshape to a computed shape: keras2onnx's `Reshape(y, [-1, Shape(x)[1], H])`).
    case AxisEffect::kSame:
    // Slice and Pad keep the rank, and the batch is not an axis they cut or pad (that would change it):
    // same axis. Their ranks need not be known (inside a Loop body, onnx's inference keeps no shapes).
    case AxisEffect::kCut:
    case AxisEffect::kPad:
    // Views, Gather, Concat and Split (the batch is not the axis these cut or join), MatMul and Gemm (the
    // leading axes of the first operand), windows (the batch; channels come from the weights).
    case AxisEffect::kPermute:
    case AxisEffect::kRemoveUnit:
    case AxisEffect::kInsertUnit:
    case AxisEffect::kReshape:
    case AxisEffect::kGather:
    case AxisEffect::kConcat:
    case AxisEffect::kSplit:
    case AxisEffect::kMatMul:
    case AxisEffect::kGemm:
    case AxisEffect::kWindow:
    case AxisEffect::kNormalize:
      break;
    case AxisEffect::kBroadcast:
      // Input 0 of the output's own rank (TraceAxis follows every operand).
      if (in_rank < 0 || in_rank != out_rank) return std::nullopt;
      break;
    default:
      return std::nullopt;
  }
  const std::optional<AxisOf> in =
      MapAxis(index, path, node, AxisOf{axis, out_rank}, AxisDirection::kBackward, AxisPort{0, slot});
  if (!in) return std::nullopt;
  return std::make_pair(0, in->axis);
}

std::optional<InputAxis> TraceAxis(const ModelIndex& index, const GraphPath& path, const std::string& value,
                                   int64_t axis, const BranchFacts* facts, AxisTraceMemo* memo) {
  Walk walk{index, facts, memo};
  return Axis(walk, path, value, axis, 0);
}

std::optional<InputAxis> TraceShapeElement(const ModelIndex& index, const GraphPath& path, const std::string& vector,
                                           int64_t element) {
  Walk walk{index, nullptr, nullptr};
  return Element(walk, path, vector, element, 0);
}

std::string AxisTraceMemo::Key(Kind kind, const GraphPath& path, const std::string& value, int64_t axis) {
  std::string key(1, static_cast<char>(kind));
  key += std::to_string(axis);
  for (const GraphStep& step : path) {
    key += '/' + std::to_string(step.node) + '.' + step.attribute + '.' + std::to_string(step.list_index);
  }
  key += ':';
  key += value;
  return key;
}

const AxisTraceMemo::Entry* AxisTraceMemo::Find(const std::string& key) const {
  const auto found = entries_.find(key);
  return found == entries_.end() ? nullptr : &found->second;
}

void AxisTraceMemo::Store(std::string key, Entry entry) { entries_[std::move(key)] = std::move(entry); }

std::optional<int64_t> VectorLength(const ModelIndex& index, const GraphPath& path, const std::string& vector) {
  if (const onnx::TensorShapeProto* shape = KnownShape(index, path, vector)) {
    if (shape->dim_size() == 0) return 1;
    if (shape->dim_size() == 1 && shape->dim(0).has_dim_value()) return shape->dim(0).dim_value();
  }
  if (const std::optional<std::vector<int64_t>> values = ConstantIntegers(index, path, vector)) {
    return static_cast<int64_t>(values->size());
  }
  const ResolvedName at = index.Resolve(path, vector);
  if (at.node == nullptr || !IsOnnxDomain(at.node->domain()) || at.node->input_size() == 0) return std::nullopt;
  const onnx::NodeProto& node = *at.node;
  if (IsElementwiseUnary(node)) return VectorLength(index, at.graph, node.input(0));  // Identity, Cast, ...
  if (IsOnnxOp(node, {"Unsqueeze"}) && RankOf(index, at.graph, node.input(0)) == 0) return 1;
  if (IsOnnxOp(node, {"Shape"})) {
    const int rank = RankOf(index, at.graph, node.input(0));
    if (rank < 0) return std::nullopt;
    auto clamp = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
    const int64_t start = clamp(IntAttribute(node, "start", 0));
    const int64_t end = clamp(IntAttribute(node, "end", rank));
    return std::max<int64_t>(0, end - start);
  }
  if (IsOnnxOp(node, {"Concat"})) {
    int64_t total = 0;
    for (const auto& part : node.input()) {
      const std::optional<int64_t> length = VectorLength(index, at.graph, part);
      if (!length) return std::nullopt;
      total += *length;
    }
    return total;
  }
  if (IsOnnxOp(node, {"Gather"}) && node.input_size() == 2) {
    if (const auto indices = ConstantIntegers(index, at.graph, node.input(1))) return indices->size();
  }
  if (IsOnnxOp(node, {"Slice"}) && node.input_size() >= 3 && (node.input_size() < 5 || node.input(4).empty())) {
    const std::optional<int64_t> length = VectorLength(index, at.graph, node.input(0));
    const std::optional<int64_t> start = ConstantScalar(index, at.graph, node.input(1));
    const std::optional<int64_t> end = ConstantScalar(index, at.graph, node.input(2));
    if (!length || !start || !end) return std::nullopt;
    auto clamp = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + *length : v, 0, *length); };
    return std::max<int64_t>(0, clamp(*end) - clamp(*start));
  }
  return std::nullopt;
}

}  // namespace rnnstate
