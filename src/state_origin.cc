#include "rnnstate/state_origin.h"

#include <algorithm>
#include <deque>
#include <set>

#include "rnnstate/proto_access.h"

namespace rnnstate {

const char* OriginKindName(StateOrigin::Kind kind) {
  switch (kind) {
    case StateOrigin::Kind::kAbsent: return "absent";
    case StateOrigin::Kind::kGraphInput: return "graph_input";
    case StateOrigin::Kind::kDefaultedInput: return "defaulted_input";
    case StateOrigin::Kind::kInitializer: return "initializer";
    case StateOrigin::Kind::kComputed: return "computed";
    case StateOrigin::Kind::kSubgraphInput: return "subgraph_input";
    case StateOrigin::Kind::kUndefined: return "undefined";
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

/// Operators that only reshape their first input: a body output derived through them still is the
/// node's final state.
const std::set<std::string> kShapeOnlyOps = {"Identity", "Squeeze", "Unsqueeze", "Reshape", "Cast", "Flatten"};

const onnx::NodeProto& NodeAt(const ModelIndex& index, const GraphPath& path, int node) {
  return ResolveGraph(index.model(), path)->node(node);
}

std::string SlotValue(const google::protobuf::RepeatedPtrField<std::string>& slots, int slot) {
  return slot >= 0 && slot < slots.size() ? slots.Get(slot) : std::string();
}

/// True when every element of a tensor is zero; false when unknown (external data, a payload left in
/// the file by the lazy reader, or an empty payload for a non-empty tensor).
bool TensorIsZero(const onnx::TensorProto& tensor) {
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) return false;
  int64_t elements = 1;
  for (auto d : tensor.dims()) elements *= d;
  if (elements == 0) return true;
  if (tensor.has_raw_data()) {
    const std::string& raw = tensor.raw_data();
    return !raw.empty() && std::all_of(raw.begin(), raw.end(), [](char c) { return c == 0; });
  }
  auto all_zero = [](const auto& values) {
    return std::all_of(values.begin(), values.end(), [](auto v) { return v == 0; });
  };
  bool has_values = tensor.float_data_size() || tensor.double_data_size() || tensor.int32_data_size() ||
                    tensor.int64_data_size() || tensor.uint64_data_size();
  return has_values && all_zero(tensor.float_data()) && all_zero(tensor.double_data()) &&
         all_zero(tensor.int32_data()) && all_zero(tensor.int64_data()) && all_zero(tensor.uint64_data());
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

bool IsZeroAt(const ModelIndex& index, const GraphPath& path, const std::string& name, int depth) {
  if (depth > kMaxTraceDepth || name.empty()) return false;
  ResolvedName resolved = index.Resolve(path, name);
  const onnx::GraphProto& graph = *ResolveGraph(index.model(), resolved.graph);
  const Producer& producer = resolved.producer;
  if (producer.kind == Producer::Kind::kInitializer) return TensorIsZero(graph.initializer(producer.index));
  if (producer.kind != Producer::Kind::kNode) return false;
  const onnx::NodeProto& node = graph.node(producer.index);
  if (!IsOnnxDomain(node.domain())) return false;
  const std::string& op = node.op_type();
  if (op == "ConstantOfShape") {
    const onnx::AttributeProto* value = FindAttribute(node, "value");
    return value == nullptr || TensorIsZero(value->t());  // without `value`: a float zero
  }
  if (op == "Constant") return ConstantNodeIsZero(node);
  if (op == "Concat") {
    return node.input_size() > 0 && std::all_of(node.input().begin(), node.input().end(), [&](const std::string& in) {
      return IsZeroAt(index, resolved.graph, in, depth + 1);
    });
  }
  if (kZeroPreservingOps.count(op) && node.input_size() > 0) {
    return IsZeroAt(index, resolved.graph, node.input(0), depth + 1);
  }
  return false;
}

/// The nodes of `path` computing `name`, breadth first, nearest first, at most kMaxReportedNodes.
std::vector<int> ComputingNodes(const ModelIndex& index, const GraphPath& path, const std::string& name) {
  const GraphIndex& graph_index = index.graph(path);
  const onnx::GraphProto& graph = *ResolveGraph(index.model(), path);
  std::vector<int> nodes;
  std::set<int> seen;
  std::deque<std::string> queue{name};
  while (!queue.empty() && nodes.size() < kMaxReportedNodes) {
    Producer producer = graph_index.ProducerOf(queue.front());
    queue.pop_front();
    if (producer.kind != Producer::Kind::kNode || !seen.insert(producer.index).second) continue;
    nodes.push_back(producer.index);
    for (const auto& input : graph.node(producer.index).input()) {
      if (!input.empty()) queue.push_back(input);
    }
  }
  return nodes;
}

/// Why a container cannot carry an added state, or "" when its shape is what ONNX requires.
std::string MalformedContainer(const onnx::NodeProto& container) {
  const std::string& op = container.op_type();
  if (op == "If" && !(GraphAttribute(container, "then_branch") && GraphAttribute(container, "else_branch"))) {
    return "the If lacks a then_branch or else_branch";
  }
  if (op == "Loop" && (container.input_size() < 2 || !GraphAttribute(container, "body"))) {
    return "the Loop lacks its trip count/condition inputs or its body";
  }
  if (op == "Scan") {
    int64_t scan_inputs = IntAttribute(container, "num_scan_inputs", 0);
    bool counted = scan_inputs >= 1 && scan_inputs <= container.input_size();
    if (!counted || !GraphAttribute(container, "body")) return "the Scan has no valid num_scan_inputs or body";
  }
  return "";
}

/// The carried variable of the Loop/Scan owning body `body` that body input `position` is, as a site
/// of the container; false when that input carries nothing (iteration number, condition, scan element).
bool CarriedVariable(const ModelIndex& index, const GraphPath& body, int position, StateSite* site, int* body_output) {
  GraphPath parent(body.begin(), body.end() - 1);
  const GraphStep& step = body.back();
  const onnx::NodeProto& container = NodeAt(index, parent, step.node);
  if (!IsOnnxDomain(container.domain()) || step.attribute != "body") return false;
  if (!MalformedContainer(container).empty()) return false;
  if (container.op_type() == "Loop") {
    if (position < 2) return false;
    int carried = position - 2;
    *site = StateSite{parent, step.node, 2 + carried, carried, true};
    *body_output = 1 + carried;
    return true;
  }
  if (container.op_type() == "Scan" && index.onnx_opset() >= kScanWithoutBatchOpset) {
    int states = ScanStateCount(container);
    if (position >= states) return false;
    *site = StateSite{parent, step.node, position, position, true};
    *body_output = position;
    return true;
  }
  return false;
}

/// True when body output `output` of the graph at `body` is (up to reshaping) the final state of
/// `site`, or comes out of a container that holds the site.
bool DerivesFromSite(const ModelIndex& index, const GraphPath& body, const std::string& output, const StateSite& site) {
  std::string value = output;
  for (int depth = 0; depth < kMaxTraceDepth; ++depth) {
    Producer producer = index.graph(body).ProducerOf(value);
    if (producer.kind != Producer::Kind::kNode) return false;
    if (site.graph == body) {
      if (producer.index == site.node) return producer.slot == site.output_slot;
    } else if (site.graph.size() > body.size() && std::equal(body.begin(), body.end(), site.graph.begin()) &&
               site.graph[body.size()].node == producer.index) {
      return true;  // out of the If/Loop/Scan that holds the site
    }
    const onnx::NodeProto& node = NodeAt(index, body, producer.index);
    if (!IsOnnxDomain(node.domain()) || !kShapeOnlyOps.count(node.op_type()) || node.input_size() == 0) return false;
    value = node.input(0);
  }
  return false;
}

}  // namespace

bool IsProvablyZero(const ModelIndex& index, const GraphPath& path, const std::string& name) {
  return IsZeroAt(index, path, name, 0);
}

StateSite LocateSite(const ModelIndex& index, const RecurrentNode& node, StateKind kind) {
  StateSite site{node.graph, node.node, InitialStateSlot(kind), FinalStateSlot(kind), false};
  for (int depth = 0; depth < kMaxTraceDepth; ++depth) {
    std::string value = SlotValue(NodeAt(index, site.graph, site.node).input(), site.input_slot);
    if (value.empty()) break;
    ResolvedName resolved = index.Resolve(site.graph, value);
    if (resolved.producer.kind != Producer::Kind::kGraphInput || resolved.graph.empty()) break;
    StateSite carrier;
    int body_output = -1;
    if (!CarriedVariable(index, resolved.graph, resolved.producer.index, &carrier, &body_output)) break;
    const onnx::GraphProto& body = *ResolveGraph(index.model(), resolved.graph);
    if (body_output >= body.output_size()) break;
    if (!DerivesFromSite(index, resolved.graph, body.output(body_output).name(), site)) break;
    site = carrier;
  }
  return site;
}

std::string FindThreadLevels(const ModelIndex& index, const StateSite& site, std::vector<ThreadLevel>* levels) {
  GraphPath path = site.graph;
  while (!path.empty()) {
    GraphStep step = path.back();
    path.pop_back();
    const onnx::NodeProto& container = NodeAt(index, path, step.node);
    const std::string& op = container.op_type();
    bool known = IsOnnxDomain(container.domain()) &&
                 ((op == "Loop" && step.attribute == "body") || op == "If" ||
                  (op == "Scan" && step.attribute == "body" && index.onnx_opset() >= kScanWithoutBatchOpset));
    if (!known) {
      std::string why = op == "Scan" ? " (Scan-8, with its batch axis, is not supported)" : "";
      return "the state would have to be threaded out of " + DescribeNode(index.model(), path, step.node) + " (" +
             step.attribute + ")" + why;
    }
    if (std::string malformed = MalformedContainer(container); !malformed.empty()) {
      return "cannot thread the state out of " + DescribeNode(index.model(), path, step.node) + ": " + malformed;
    }
    levels->push_back(ThreadLevel{path, step.node, op, step.attribute});
  }
  return "";
}

StateOrigin TraceInitialState(const ModelIndex& index, const StateSite& site) {
  const GraphIndex& graph_index = index.graph(site.graph);
  StateOrigin origin;
  origin.value = SlotValue(NodeAt(index, site.graph, site.node).input(), site.input_slot);
  if (origin.value.empty()) {
    origin.kind = StateOrigin::Kind::kAbsent;
    origin.zero = true;
    return origin;
  }
  for (const auto& consumer : graph_index.ConsumersOf(origin.value)) {
    if (!(consumer.node == site.node && consumer.slot == site.input_slot)) ++origin.other_consumers;
  }
  if (graph_index.outputs.count(origin.value)) ++origin.other_consumers;
  ResolvedName resolved = index.Resolve(site.graph, origin.value);
  origin.value_graph = resolved.graph;
  const bool main = resolved.graph.empty();
  switch (resolved.producer.kind) {
    case Producer::Kind::kGraphInput:
      origin.kind = main ? StateOrigin::Kind::kGraphInput : StateOrigin::Kind::kSubgraphInput;
      break;
    case Producer::Kind::kDefaultedInput: origin.kind = StateOrigin::Kind::kDefaultedInput; break;
    case Producer::Kind::kInitializer:
      origin.kind = StateOrigin::Kind::kInitializer;
      origin.zero = IsProvablyZero(index, site.graph, origin.value);
      break;
    case Producer::Kind::kNode:
      origin.kind = StateOrigin::Kind::kComputed;
      origin.zero = IsProvablyZero(index, site.graph, origin.value);
      origin.computed_by = ComputingNodes(index, resolved.graph, origin.value);
      break;
    case Producer::Kind::kOuterScope: origin.kind = StateOrigin::Kind::kUndefined; break;
  }
  return origin;
}

FinalState DescribeFinalState(const ModelIndex& index, const StateSite& site) {
  const GraphIndex& graph_index = index.graph(site.graph);
  FinalState final_state;
  final_state.value = SlotValue(NodeAt(index, site.graph, site.node).output(), site.output_slot);
  if (final_state.value.empty()) return final_state;
  final_state.graph_output = site.graph.empty() && graph_index.outputs.count(final_state.value) > 0;
  final_state.consumers = static_cast<int>(graph_index.ConsumersOf(final_state.value).size());
  return final_state;
}

}  // namespace rnnstate
