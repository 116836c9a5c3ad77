#include "rewrite/data_batch.h"

#include "graph/proto_access.h"
#include "find/axis_trace.h"

namespace rnnstate {

namespace {

constexpr int kMaxDepth = 64;

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
