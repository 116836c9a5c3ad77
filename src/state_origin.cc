#include "rnnstate/state_origin.h"

#include <algorithm>
#include <deque>
#include <set>

namespace rnnstate {

const char* OriginKindName(StateOrigin::Kind kind) {
  switch (kind) {
    case StateOrigin::Kind::kAbsent: return "absent";
    case StateOrigin::Kind::kGraphInput: return "graph_input";
    case StateOrigin::Kind::kDefaultedInput: return "defaulted_input";
    case StateOrigin::Kind::kInitializer: return "initializer";
    case StateOrigin::Kind::kComputed: return "computed";
    case StateOrigin::Kind::kOuterScope: return "outer_scope";
  }
  return "?";
}

namespace {

constexpr int kMaxTraceDepth = 32;
constexpr size_t kMaxReportedNodes = 8;

/// Operators whose output is all zeros when their first input is (they only move or copy elements).
const std::set<std::string> kZeroPreservingOps = {
    "Identity", "Cast", "Expand", "Reshape", "Squeeze", "Unsqueeze", "Slice", "Gather",
    "Transpose", "Flatten", "Tile", "Split", "Neg", "Abs", "Relu", "CastLike"};

/// True when every element of a tensor is zero; false when unknown (e.g. external data or a payload
/// that was not loaded).
bool TensorIsZero(const onnx::TensorProto& tensor) {
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) return false;
  if (tensor.has_raw_data()) {
    const std::string& raw = tensor.raw_data();
    // A payload left in the file by the lazy reader is replaced by a placeholder of the wrong size.
    int64_t elements = 1;
    for (auto d : tensor.dims()) elements *= d;
    if (elements == 0) return true;
    return std::all_of(raw.begin(), raw.end(), [](char c) { return c == 0; }) && !raw.empty();
  }
  for (float v : tensor.float_data()) if (v != 0.0f) return false;
  for (double v : tensor.double_data()) if (v != 0.0) return false;
  for (int32_t v : tensor.int32_data()) if (v != 0) return false;
  for (int64_t v : tensor.int64_data()) if (v != 0) return false;
  for (uint64_t v : tensor.uint64_data()) if (v != 0) return false;
  return tensor.string_data_size() == 0;
}

bool ConstantNodeIsZero(const onnx::NodeProto& node) {
  for (const auto& attribute : node.attribute()) {
    if (attribute.name() == "value") return TensorIsZero(attribute.t());
    if (attribute.name() == "value_float") return attribute.f() == 0.0f;
    if (attribute.name() == "value_floats") {
      return std::all_of(attribute.floats().begin(), attribute.floats().end(), [](float v) { return v == 0.0f; });
    }
    if (attribute.name() == "value_int") return attribute.i() == 0;
    if (attribute.name() == "value_ints") {
      return std::all_of(attribute.ints().begin(), attribute.ints().end(), [](int64_t v) { return v == 0; });
    }
  }
  return false;
}

bool IsZeroAt(const onnx::GraphProto& graph, const GraphIndex& index, const std::string& name, int depth) {
  if (depth > kMaxTraceDepth || name.empty()) return false;
  Producer producer = index.ProducerOf(name);
  if (producer.kind == Producer::Kind::kInitializer) return TensorIsZero(graph.initializer(producer.index));
  if (producer.kind != Producer::Kind::kNode) return false;
  const onnx::NodeProto& node = graph.node(producer.index);
  if (!IsOnnxDomain(node.domain())) return false;
  const std::string& op = node.op_type();
  if (op == "ConstantOfShape") {
    for (const auto& attribute : node.attribute()) {
      if (attribute.name() == "value") return TensorIsZero(attribute.t());
    }
    return true;  // the default value is a float zero
  }
  if (op == "Constant") return ConstantNodeIsZero(node);
  if (op == "Concat") {
    return node.input_size() > 0 && std::all_of(node.input().begin(), node.input().end(), [&](const std::string& in) {
      return IsZeroAt(graph, index, in, depth + 1);
    });
  }
  if (kZeroPreservingOps.count(op) && node.input_size() > 0) return IsZeroAt(graph, index, node.input(0), depth + 1);
  return false;
}

/// The nodes computing `name`, breadth first, nearest first, at most kMaxReportedNodes.
std::vector<int> ComputingNodes(const onnx::GraphProto& graph, const GraphIndex& index, const std::string& name) {
  std::vector<int> nodes;
  std::set<int> seen;
  std::deque<std::string> queue{name};
  while (!queue.empty() && nodes.size() < kMaxReportedNodes) {
    Producer producer = index.ProducerOf(queue.front());
    queue.pop_front();
    if (producer.kind != Producer::Kind::kNode || !seen.insert(producer.index).second) continue;
    nodes.push_back(producer.index);
    for (const auto& input : graph.node(producer.index).input()) {
      if (!input.empty()) queue.push_back(input);
    }
  }
  return nodes;
}

}  // namespace

bool IsProvablyZero(const onnx::GraphProto& graph, const GraphIndex& index, const std::string& name) {
  return IsZeroAt(graph, index, name, 0);
}

StateOrigin TraceInitialState(const ModelIndex& model_index, const RecurrentNode& node, StateKind kind) {
  const GraphIndex& index = model_index.graph(node.graph);
  const onnx::GraphProto& graph = *ResolveGraph(model_index.model(), node.graph);
  const onnx::NodeProto& proto = graph.node(node.node);
  StateOrigin origin;
  int slot = InitialStateSlot(kind);
  origin.value = slot < proto.input_size() ? proto.input(slot) : std::string();
  if (origin.value.empty()) {
    origin.kind = StateOrigin::Kind::kAbsent;
    origin.zero = true;
    return origin;
  }
  for (const auto& consumer : index.ConsumersOf(origin.value)) {
    if (!(consumer.node == node.node && consumer.slot == slot)) ++origin.other_consumers;
  }
  if (index.outputs.count(origin.value)) ++origin.other_consumers;
  Producer producer = index.ProducerOf(origin.value);
  switch (producer.kind) {
    case Producer::Kind::kGraphInput: origin.kind = StateOrigin::Kind::kGraphInput; break;
    case Producer::Kind::kDefaultedInput: origin.kind = StateOrigin::Kind::kDefaultedInput; break;
    case Producer::Kind::kInitializer:
      origin.kind = StateOrigin::Kind::kInitializer;
      origin.zero = IsProvablyZero(graph, index, origin.value);
      break;
    case Producer::Kind::kNode:
      origin.kind = StateOrigin::Kind::kComputed;
      origin.zero = IsProvablyZero(graph, index, origin.value);
      origin.computed_by = ComputingNodes(graph, index, origin.value);
      break;
    case Producer::Kind::kOuterScope: origin.kind = StateOrigin::Kind::kOuterScope; break;
  }
  return origin;
}

FinalState DescribeFinalState(const ModelIndex& model_index, const RecurrentNode& node, StateKind kind) {
  const GraphIndex& index = model_index.graph(node.graph);
  const onnx::NodeProto& proto = ResolveGraph(model_index.model(), node.graph)->node(node.node);
  FinalState final_state;
  int slot = FinalStateSlot(kind);
  final_state.value = slot < proto.output_size() ? proto.output(slot) : std::string();
  if (final_state.value.empty()) return final_state;
  final_state.graph_output = index.outputs.count(final_state.value) > 0;
  final_state.consumers = static_cast<int>(index.ConsumersOf(final_state.value).size());
  return final_state;
}

}  // namespace rnnstate
