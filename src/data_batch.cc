#include "data_batch.h"

#include <set>

#include "constant_value.h"
#include "proto_access.h"
#include "recurrent_ops.h"

namespace rnnstate {

namespace {

constexpr int kMaxDepth = 64;

/// Operators whose output has the shape of their first input, axis for axis.
const std::set<std::string> kSameShapeOps = {"Identity",
                                             "Cast",
                                             "CastLike",
                                             "Relu",
                                             "Tanh",
                                             "Sigmoid",
                                             "Neg",
                                             "Abs",
                                             "Exp",
                                             "Log",
                                             "Sqrt",
                                             "Erf",
                                             "Softplus",
                                             "Softsign",
                                             "LeakyRelu",
                                             "Elu",
                                             "Selu",
                                             "HardSigmoid",
                                             "Dropout",
                                             "Clip",
                                             "Reciprocal",
                                             "Floor",
                                             "Ceil",
                                             "Round",
                                             "Sign",
                                             "Sin",
                                             "Cos",
                                             "BatchNormalization",
                                             "LayerNormalization",
                                             "Softmax",
                                             "LogSoftmax",
                                             "Add",
                                             "Sub",
                                             "Mul",
                                             "Div",
                                             "Pow",
                                             "Where",
                                             "Max",
                                             "Min"};

int RankOf(const ModelIndex& index, const GraphPath& path, const std::string& name) {
  const onnx::TypeProto* type = index.TypeOf(path, name);
  if (type == nullptr || !type->has_tensor_type() || !type->tensor_type().has_shape()) return -1;
  return type->tensor_type().shape().dim_size();
}

/// The axes of a Squeeze/Unsqueeze: the attribute (before opset 13) or the constant second input.
std::optional<std::vector<int64_t>> AxesOf(const ModelIndex& index, const GraphPath& path,
                                           const onnx::NodeProto& node) {
  if (const onnx::AttributeProto* axes = FindAttribute(node, "axes")) {
    return std::vector<int64_t>(axes->ints().begin(), axes->ints().end());
  }
  if (node.input_size() > 1) return ConstantIntegers(index, path, node.input(1));
  return std::nullopt;
}

int64_t Normalized(int64_t axis, int rank) { return axis < 0 ? axis + rank : axis; }

Dim DeclaredDim(const onnx::ValueInfoProto& input, int64_t axis, bool* unnamed) {
  *unnamed = false;
  if (!input.type().has_tensor_type() || !input.type().tensor_type().has_shape()) return Dim{};
  const auto& shape = input.type().tensor_type().shape();
  if (axis >= shape.dim_size()) return Dim{};
  const auto& d = shape.dim(static_cast<int>(axis));
  if (d.has_dim_value() && d.dim_value() >= 0) return Dim{d.dim_value(), ""};
  if (d.has_dim_param() && !d.dim_param().empty()) return Dim{-1, d.dim_param()};
  *unnamed = true;
  return Dim{};
}

bool DeclaredByAMainInput(const onnx::GraphProto& main, const std::string& param) {
  for (const auto& input : main.input()) {
    if (!input.type().has_tensor_type() || !input.type().tensor_type().has_shape()) continue;
    for (const auto& d : input.type().tensor_type().shape().dim()) {
      if (d.has_dim_param() && d.dim_param() == param) return true;
    }
  }
  return false;
}

}  // namespace

std::optional<std::pair<int, int64_t>> SourceAxis(const ModelIndex& index, const GraphPath& path,
                                                  const onnx::NodeProto& node, int slot, int64_t axis) {
  const std::string& op = node.op_type();
  if (const RecurrentOp* recurrent = FindRecurrentOp(node)) {
    // Y [seq, D, batch, H]; Y_h, Y_c [D, batch, H] (layout 0); the batch is X's axis 1.
    if (IntAttribute(node, "layout", 0) != 0) return std::nullopt;
    const bool batch = (slot == 0 && axis == 2) || (slot > 0 && axis == 1);
    if (batch) return std::make_pair(recurrent->x_slot, int64_t{1});
    return std::nullopt;
  }
  if (!IsOnnxDomain(node.domain()) || node.input_size() == 0) return std::nullopt;
  const int out_rank = RankOf(index, path, node.output(slot));
  const int in_rank = RankOf(index, path, node.input(0));
  if (kSameShapeOps.count(op)) {
    if (in_rank >= 0 && in_rank == out_rank) return std::make_pair(0, axis);
    return std::nullopt;
  }
  if (op == "Transpose") {
    const onnx::AttributeProto* perm = FindAttribute(node, "perm");
    if (perm != nullptr && axis < perm->ints_size()) return std::make_pair(0, int64_t{perm->ints(axis)});
    if (perm == nullptr && in_rank > 0) return std::make_pair(0, in_rank - 1 - axis);
    return std::nullopt;
  }
  if (op == "Unsqueeze" || op == "Squeeze") {
    const std::optional<std::vector<int64_t>> axes = AxesOf(index, path, node);
    if (!axes || in_rank < 0 || out_rank < 0) return std::nullopt;
    std::set<int64_t> listed;
    for (int64_t a : *axes) listed.insert(Normalized(a, op == "Unsqueeze" ? out_rank : in_rank));
    if (op == "Unsqueeze") {
      if (listed.count(axis)) return std::nullopt;
      int64_t before = 0;
      for (int64_t a : listed) before += a < axis ? 1 : 0;
      return std::make_pair(0, axis - before);
    }
    int64_t in_axis = -1;
    for (int64_t a = 0, kept = 0; a < in_rank; ++a) {
      if (listed.count(a)) continue;
      if (kept++ == axis) in_axis = a;
    }
    if (in_axis < 0) return std::nullopt;
    return std::make_pair(0, in_axis);
  }
  if (op == "Gather") {
    const int64_t gather_axis = Normalized(IntAttribute(node, "axis", 0), in_rank);
    const int indices_rank = node.input_size() > 1 ? RankOf(index, path, node.input(1)) : -1;
    if (indices_rank < 0 || in_rank < 0) return std::nullopt;
    if (axis < gather_axis) return std::make_pair(0, axis);
    if (axis >= gather_axis + indices_rank) return std::make_pair(0, axis - indices_rank + 1);
    return std::nullopt;
  }
  if (op == "Slice") {
    // Slice keeps the rank, and the batch is not an axis it cuts (that would change it): same axis. Its
    // ranks need not be known (inside a Loop body, onnx's inference keeps no shapes).
    return std::make_pair(0, axis);
  }
  if (op == "Concat" || op == "Split") {
    // The batch is not the axis these cut or join (that would change it): same axis.
    if (in_rank >= 0 && in_rank == out_rank) {
      if (Normalized(IntAttribute(node, "axis", 0), in_rank) == axis) return std::nullopt;
      return std::make_pair(0, axis);
    }
    return std::nullopt;
  }
  if (op == "MatMul" || op == "Gemm") {
    // The leading axes of the first operand, the rows of a Gemm (without transA).
    if (op == "Gemm" && IntAttribute(node, "transA", 0) != 0) return std::nullopt;
    if (in_rank >= 2 && in_rank == out_rank && axis < out_rank - 1) return std::make_pair(0, axis);
    return std::nullopt;
  }
  return std::nullopt;
}

DataBatch FindDataBatch(const ModelIndex& index, const RecurrentState& state, const std::string& fresh_name) {
  DataBatch result;
  const Dim own = state.batch_axis >= 0 ? state.shape[state.batch_axis] : Dim{};
  if (own.fixed()) {
    result.dim = own;
    return result;
  }
  GraphPath path = state.owner.graph;
  std::string value = state.batch_source.value;
  int64_t axis = state.batch_source.axis;
  for (int depth = 0; depth < kMaxDepth && !value.empty() && axis >= 0; ++depth) {
    const ResolvedName resolved = index.Resolve(path, value);
    const onnx::GraphProto& graph = *ResolveGraph(index.model(), resolved.graph);
    const Producer& producer = resolved.producer;
    const bool input = producer.kind == Producer::Kind::kGraphInput || producer.kind == Producer::Kind::kDefaultedInput;
    if (input && resolved.graph.empty()) {
      bool unnamed = false;
      result.dim = DeclaredDim(graph.input(producer.index), axis, &unnamed);
      if (unnamed) {
        result.dim = Dim{-1, fresh_name};
        result.unnamed_input_dim = std::make_pair(value, static_cast<int>(axis));
      }
      return result;
    }
    if (producer.kind != Producer::Kind::kNode) break;
    const onnx::NodeProto& node = graph.node(producer.index);
    const auto source = SourceAxis(index, resolved.graph, node, producer.slot, axis);
    if (!source || source->first >= node.input_size()) break;
    path = resolved.graph;
    value = node.input(source->first);
    axis = source->second;
  }
  if (!own.param.empty() && DeclaredByAMainInput(index.model().graph(), own.param)) result.dim = own;
  return result;
}

}  // namespace rnnstate
