#include "states/state_origin.h"

#include <algorithm>
#include <deque>
#include <set>
#include <string_view>
#include <unordered_set>

#include "graph/proto_access.h"
#include "ops/op_semantics.h"
#include "values/constant_value.h"

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

const onnx::NodeProto& NodeAt(const ModelIndex& index, const GraphPath& path, int node) {
  return ResolveGraph(index.model(), path)->node(node);
}

std::string SlotValue(const google::protobuf::RepeatedPtrField<std::string>& slots, int slot) {
  return slot >= 0 && slot < slots.size() ? slots.Get(slot) : std::string();
}

/// True when `name` (seen from `path`) is known to hold integers (or booleans).
bool IsIntegerType(const ModelIndex& index, const GraphPath& path, const std::string& name) {
  const onnx::TypeProto* type = index.TypeOf(path, name);
  if (type == nullptr || !type->has_tensor_type()) return false;
  using T = onnx::TensorProto;
  switch (type->tensor_type().elem_type()) {
    case T::INT8:
    case T::INT16:
    case T::INT32:
    case T::INT64:
    case T::UINT8:
    case T::UINT16:
    case T::UINT32:
    case T::UINT64:
    case T::BOOL:
      return true;
    default:
      return false;
  }
}

bool IsZeroAt(const ModelIndex& index, const GraphPath& path, const std::string& name, int depth) {
  if (depth > kMaxTraceDepth || name.empty()) return false;
  if (const std::optional<ConstantValue> constant = FindConstant(index, path, name)) return KnownAllZero(*constant);
  const ResolvedName resolved = index.Resolve(path, name);
  if (resolved.node == nullptr || !IsOnnxDomain(resolved.node->domain())) return false;
  const onnx::NodeProto& node = *resolved.node;
  const std::string& op = node.op_type();
  if (op == "ConstantOfShape") {
    const onnx::AttributeProto* value = FindAttribute(node, "value");
    return value == nullptr || KnownAllZero(value->t());  // without `value`: a float zero
  }
  if (op == "Concat") {
    return node.input_size() > 0 && std::all_of(node.input().begin(), node.input().end(), [&](const std::string& in) {
      return IsZeroAt(index, resolved.graph, in, depth + 1);
    });
  }
  if (KeepsZero(node) && node.input_size() > 0) {
    return IsZeroAt(index, resolved.graph, node.input(0), depth + 1);
  }
  // An integer product with a zero factor is zero (a float one is not: inf * 0 is NaN). Exporters write
  // it to keep an input used without letting it change anything (`sr * 0`).
  if (op == "Mul" && node.input_size() == 2 && IsIntegerType(index, resolved.graph, node.output(0))) {
    return IsZeroAt(index, resolved.graph, node.input(0), depth + 1) ||
           IsZeroAt(index, resolved.graph, node.input(1), depth + 1);
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

/// The carried variable of the Loop/Scan owning body `body` that body input `position` is, as a site
/// of the container; false when that input carries nothing (iteration number, condition, scan element).
bool CarriedVariableSite(const ModelIndex& index, const GraphPath& body, int position, StateSite* site,
                         int* body_output) {
  GraphPath parent(body.begin(), body.end() - 1);
  const GraphStep& step = body.back();
  const onnx::NodeProto& container = NodeAt(index, parent, step.node);
  if (step.attribute != kBody) return false;
  const ContainerKind kind = ContainerKindOf(container, index.onnx_opset());
  const std::optional<CarriedVariable> carried = CarriedAtBodyInput(kind, container, position);
  if (!carried) return false;
  *site = StateSite{parent, step.node, carried->node_input, carried->node_output, true};
  *body_output = carried->body_output;
  return true;
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
    if (!IsOnnxDomain(node.domain()) || !OnlyReshapes(node) || node.input_size() == 0) return false;
    value = node.input(0);
  }
  return false;
}

/// A value seen by FindSources: the graph (by its path in the index) and the name.
struct SeenHash {
  size_t operator()(const std::pair<const GraphPath*, std::string_view>& seen) const {
    return std::hash<std::string_view>()(seen.second) ^ (std::hash<const void*>()(seen.first) * 31);
  }
};

/// The main-graph inputs and initializers `name` (seen from `path`) is computed from (see StateOrigin).
void FindSources(const ModelIndex& index, const GraphPath& path, const std::string& name, StateOrigin& origin) {
  // Graphs by their path in the index and names by the strings in the model: nothing is copied per value.
  std::vector<std::pair<const GraphPath*, const std::string*>> pending{{&index.graph(path).path, &name}};
  // Hashed: a few hundred string comparisons per value in an ordered set were most of the walk.
  std::unordered_set<std::pair<const GraphPath*, std::string_view>, SeenHash> seen;
  constexpr size_t kMaxValues = 256;
  while (!pending.empty() && seen.size() < kMaxValues) {
    const auto [at, value] = pending.back();
    pending.pop_back();
    if (value->empty() || !seen.insert({at, *value}).second) continue;
    const ResolvedName resolved = index.Resolve(*at, *value);
    const Producer& producer = resolved.producer;
    if (producer.kind == Producer::Kind::kInitializer) {
      origin.from_initializers.push_back(*value);
    } else if ((producer.kind == Producer::Kind::kGraphInput || producer.kind == Producer::Kind::kDefaultedInput) &&
               resolved.graph.empty()) {
      origin.from_inputs.push_back(*value);
    } else if (producer.kind == Producer::Kind::kNode) {
      const onnx::NodeProto& node = *resolved.node;
      for (auto input = node.input().rbegin(); input != node.input().rend(); ++input) {
        pending.emplace_back(&resolved.index->path, &*input);
      }
    }
  }
}

}  // namespace

bool IsProvablyZero(const ModelIndex& index, const GraphPath& path, const std::string& name) {
  return IsZeroAt(index, path, name, 0);
}

const char* ThreadLevelOp(const ThreadLevel& level) { return ContainerKindName(level.kind); }

StateSite LocateSite(const ModelIndex& index, const RecurrentState& state) {
  return CarrierChain(index, state).back();
}

std::vector<StateSite> CarrierChain(const ModelIndex& index, const RecurrentState& state) {
  StateSite site{state.owner.graph, state.owner.node, state.initial_slot, state.final_slot, false};
  std::vector<StateSite> chain{site};
  for (int depth = 0; depth < kMaxTraceDepth; ++depth) {
    std::string value = SlotValue(NodeAt(index, site.graph, site.node).input(), site.input_slot);
    if (value.empty()) break;
    ResolvedName resolved = index.Resolve(site.graph, value);
    if (resolved.producer.kind != Producer::Kind::kGraphInput || resolved.graph.empty()) break;
    StateSite carrier;
    int body_output = -1;
    if (!CarriedVariableSite(index, resolved.graph, resolved.producer.index, &carrier, &body_output)) break;
    const onnx::GraphProto& body = *ResolveGraph(index.model(), resolved.graph);
    if (body_output >= body.output_size()) break;
    if (!DerivesFromSite(index, resolved.graph, body.output(body_output).name(), site)) break;
    site = carrier;
    chain.push_back(site);
  }
  return chain;
}

std::string FindThreadLevels(const ModelIndex& index, const StateSite& site, std::vector<ThreadLevel>* levels) {
  GraphPath path = site.graph;
  while (!path.empty()) {
    GraphStep step = path.back();
    path.pop_back();
    const onnx::NodeProto& container = NodeAt(index, path, step.node);
    const ContainerKind kind = ContainerKindOf(container, index.onnx_opset());
    if (!CanThreadOut(kind, step.attribute)) {
      std::string why = kind == ContainerKind::kScan8 ? " (Scan-8, with its batch axis, is not supported)" : "";
      return "the state would have to be threaded out of " + DescribeNode(index.model(), path, step.node) + " (" +
             step.attribute + ")" + why;
    }
    if (std::string malformed = MalformedContainer(container, kind); !malformed.empty()) {
      return "cannot thread the state out of " + DescribeNode(index.model(), path, step.node) + ": " + malformed;
    }
    levels->push_back(ThreadLevel{path, step.node, kind, step.attribute});
  }
  return "";
}

StateOrigin TraceInitialState(const ModelIndex& index, const StateSite& site, bool with_sources) {
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
      if (with_sources) FindSources(index, site.graph, origin.value, origin);
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
