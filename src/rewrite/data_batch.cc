#include "rewrite/data_batch.h"

#include "graph/proto_access.h"

namespace rnnstate {

namespace {

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

DataBatch FindDataBatch(const ModelIndex& index, const RecurrentState& state, const std::string& fresh_name,
                        const BranchFacts* facts, AxisTraceMemo* memo) {
  DataBatch result;
  const Dim own = state.batch_axis >= 0 ? state.shape[state.batch_axis] : Dim{};
  if (own.fixed()) {
    result.dim = own;
    return result;
  }
  const std::optional<InputAxis> traced =
      state.batch_source.value.empty() || state.batch_source.axis < 0
          ? std::nullopt
          : TraceAxis(index, state.owner.graph, state.batch_source.value, state.batch_source.axis, facts, memo);
  if (traced) {
    const ResolvedName input = index.Resolve(GraphPath{}, traced->input);
    bool unnamed = false;
    result.dim = DeclaredDim(index.model().graph().input(input.producer.index), traced->axis, &unnamed);
    if (unnamed) {
      result.dim = Dim{-1, fresh_name};
      result.unnamed_input_dim = std::make_pair(traced->input, static_cast<int>(traced->axis));
    }
    return result;
  }
  if (!own.param.empty() && DeclaredByAMainInput(index.model().graph(), own.param)) result.dim = own;
  return result;
}

}  // namespace rnnstate
