#include "find/context_state.h"

#include <limits>
#include <optional>

#include "graph/proto_access.h"
#include "ops/op_semantics.h"
#include "ops/slice_bounds.h"
#include "states/wiring.h"
#include "values/constant_value.h"

namespace rnnstate {

namespace {

using Kind = CheckProblem::Kind;

/// The rank of main-graph value `name` as declared or inferred, or -1.
int64_t RankOf(const ModelIndex& index, const std::string& name) {
  const onnx::TypeProto* type = index.TypeOf(GraphPath{}, name);
  if (type == nullptr || !type->has_tensor_type() || !type->tensor_type().has_shape()) return -1;
  return type->tensor_type().shape().dim_size();
}

/// `axis` counted from the front (a negative axis counts from the back of a tensor of `rank`).
int64_t Normalized(int64_t axis, int64_t rank) { return axis < 0 && rank > 0 ? axis + rank : axis; }

/// True when `slice` takes exactly the last `frames` frames along `axis` of its data (rank `rank`).
bool TakesLastFrames(const ModelIndex& index, const onnx::NodeProto& slice, int64_t axis, int64_t frames,
                     int64_t rank) {
  const std::optional<SliceBounds> bounds = ConstantSliceBounds(index, GraphPath{}, slice);
  if (!bounds || bounds->starts.size() != 1 || bounds->ends.size() != 1) return false;
  if (!bounds->steps.empty() && bounds->steps != std::vector<int64_t>{1}) return false;
  // Without axes a Slice's bounds are for axes 0, 1, ...: one bound is axis 0.
  const std::vector<int64_t>& axes = bounds->axes;
  const int64_t sliced = axes.empty() ? 0 : (axes.size() == 1 ? Normalized(axes.front(), rank) : -1);
  // "To the end" is any end past every length a tensor can have here (exporters write INT64_MAX or INT32_MAX).
  return sliced == axis && bounds->starts.front() == -frames &&
         bounds->ends.front() >= std::numeric_limits<int32_t>::max();
}

/// The Pad in mode `mode` that reads `value` and pads it by amounts the graph computes (a pair with a
/// `pad` mode: the frames its context lacks), or -1.
int FillingPad(const ModelIndex& index, const std::string& value, const std::string& mode) {
  const onnx::GraphProto& main = index.model().graph();
  for (const Consumer& use : index.graph(GraphPath{}).ConsumersOf(value)) {
    const onnx::NodeProto& node = main.node(use.node);
    if (use.slot != 0 || !IsOnnxOp(node, {"Pad"}) || StringAttribute(node, "mode", "constant") != mode) continue;
    if (node.input_size() > 1 && !FindConstant(index, GraphPath{}, node.input(1))) return use.node;
  }
  return -1;
}

/// Judges one recorded context pair (see the file comment).
ContextFinding Judge(const ModelIndex& index, const StatePair& pair, size_t at) {
  ContextFinding finding;
  finding.pair = at;
  auto fail = [&](Kind kind, std::string problem) {
    finding.problem_kind = kind;
    finding.problem = std::move(problem);
    return finding;
  };
  if (!pair.context) return fail(Kind::kBadMetadata, "a state of kind \"context\" without its \"context\" object");
  const ContextSpec& spec = *pair.context;
  const onnx::GraphProto& main = index.model().graph();
  const GraphIndex& graph = index.graph(GraphPath{});
  for (int n = 0; n < main.node_size() && finding.concat < 0; ++n) {
    if (main.node(n).name() == pair.node && IsOnnxOp(main.node(n), {"Concat"})) finding.concat = n;
  }
  if (finding.concat < 0) return fail(Kind::kNoSuchNode, "no Concat '" + pair.node + "' in the main graph");
  const onnx::NodeProto& concat = main.node(finding.concat);
  const int64_t rank = RankOf(index, spec.value);
  // A data input's context (--input-context), or a window's over a value the graph computes.
  const Producer::Kind producer = graph.ProducerOf(spec.value).kind;
  const bool value_ok = spec.window.empty()
                            ? producer == Producer::Kind::kGraphInput
                            : producer == Producer::Kind::kGraphInput || producer == Producer::Kind::kNode;
  if (!value_ok) {
    return fail(Kind::kInputNotWired, "its value '" + spec.value + "' is not a " +
                                          (spec.window.empty() ? "data input" : "data input or node output") +
                                          " of the main graph");
  }
  if (concat.input_size() != 2 || concat.input(1) != spec.value ||
      Normalized(AxisAttribute(concat, index.onnx_opset()), rank) != spec.axis) {
    return fail(Kind::kInputNotWired, "Concat '" + pair.node + "' does not join a context in front of '" + spec.value +
                                          "' along axis " + std::to_string(spec.axis));
  }
  if (!ComputedFrom(index, ValueRef{{}, concat.input(0)}, ValueRef{{}, pair.input})) {
    return fail(Kind::kInputNotWired,
                "input '" + pair.input + "' does not reach the front of Concat '" + pair.node + "'");
  }
  const int slice = LastFramesSlice(index, concat.output(0), spec.axis, spec.frames);
  if (slice < 0 || !ComputedFrom(index, ValueRef{{}, pair.output}, ValueRef{{}, main.node(slice).output(0)})) {
    return fail(Kind::kOutputNotWired, "output '" + pair.output + "' is not the last " + std::to_string(spec.frames) +
                                           " frames along axis " + std::to_string(spec.axis) + " of Concat '" +
                                           pair.node + "'");
  }
  if (!spec.pad.empty()) {
    finding.fill_pad = FillingPad(index, concat.output(0), spec.pad);
    if (finding.fill_pad < 0) {
      return fail(Kind::kInputNotWired, "Concat '" + pair.node + "' is read by no Pad in mode '" + spec.pad +
                                            "' whose amounts the graph computes");
    }
  }
  return finding;
}

}  // namespace

int LastFramesSlice(const ModelIndex& index, const std::string& value, int64_t axis, int64_t frames) {
  const onnx::GraphProto& main = index.model().graph();
  const int64_t rank = RankOf(index, value);
  for (const Consumer& use : index.graph(GraphPath{}).ConsumersOf(value)) {
    if (use.slot != 0) continue;
    const onnx::NodeProto& node = main.node(use.node);
    if (IsOnnxOp(node, {"Slice"}) && TakesLastFrames(index, node, axis, frames, rank)) return use.node;
  }
  return -1;
}

std::vector<ContextFinding> FindContextStates(const ModelIndex& index, const std::vector<StatePair>& recorded) {
  std::vector<ContextFinding> findings;
  for (size_t i = 0; i < recorded.size(); ++i) {
    if (recorded[i].kind == kKindContext) findings.push_back(Judge(index, recorded[i], i));
  }
  return findings;
}

}  // namespace rnnstate
