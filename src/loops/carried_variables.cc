#include "loops/carried_variables.h"

#include <initializer_list>

#include "graph/proto_access.h"
#include "ops/op_semantics.h"
#include "states/wiring.h"
#include "values/constant_value.h"

namespace rnnstate {

namespace {

/// Operators an index flows through on its way to a Gather or to the condition: exactly (the value is
/// still the index) or derived from it (counter updates, comparisons with the bound).
const std::initializer_list<const char*> kExactOps = {"Identity", "Cast"};
const std::initializer_list<const char*> kDerivingOps = {
    "Add", "Sub", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Equal", "Not", "And", "Or"};

/// The node of the graph at `path` producing `name`, or nullptr (an input, initializer, outer value).
const onnx::NodeProto* ProducerNode(const ModelIndex& index, const GraphPath& path, const std::string& name) {
  const Producer producer = index.graph(path).ProducerOf(name);
  if (producer.kind != Producer::Kind::kNode) return nullptr;
  return &ResolveGraph(index.model(), path)->node(producer.index);
}

/// `name` followed back through the ops in `ops` of the same graph.
std::string Through(const ModelIndex& index, const GraphPath& path, std::string name,
                    std::initializer_list<const char*> ops) {
  for (int depth = 0; depth < 16; ++depth) {
    const onnx::NodeProto* node = ProducerNode(index, path, name);
    if (node == nullptr || !IsOnnxOp(*node, ops) || node->input_size() == 0) break;
    name = node->input(0);
  }
  return name;
}

/// When `output` is `input` plus (or minus) a constant: the step (0 when it is not an integer constant).
std::optional<int64_t> CounterStep(const ModelIndex& index, const GraphPath& body, const std::string& output,
                                   const std::string& input) {
  const onnx::NodeProto* node = ProducerNode(index, body, Through(index, body, output, kExactOps));
  if (node == nullptr || !IsOnnxOp(*node, {"Add", "Sub"}) || node->input_size() != 2) return std::nullopt;
  for (int own = 0; own < 2; ++own) {
    if (own == 1 && node->op_type() == "Sub") break;  // c - v is no counter
    const std::string& other = node->input(1 - own);
    if (Through(index, body, node->input(own), kExactOps) != input || !FindConstant(index, body, other)) continue;
    const int64_t step = ConstantScalar(index, body, other).value_or(0);
    return node->op_type() == "Sub" ? -step : step;
  }
  return std::nullopt;
}

/// Where the body at `body` uses `start` (an index), `own_output` being its own next value ("" for the
/// iteration number) and `cond_output` the body's condition output ("" for a Scan).
IndexUses UsesOf(const ModelIndex& index, const GraphPath& body, const std::string& start,
                 const std::string& own_output, const std::string& cond_output) {
  const GraphIndex& graph = index.graph(body);
  const onnx::GraphProto& proto = *ResolveGraph(index.model(), body);
  IndexUses uses;
  std::vector<std::pair<std::string, bool>> pending{{start, true}};  // value, still exactly the index
  std::set<std::string> seen;
  while (!pending.empty()) {
    auto [value, exact] = pending.back();
    pending.pop_back();
    if (!seen.insert(value).second) continue;
    if (graph.outputs.count(value) && value != own_output && value != cond_output) {
      uses.other_uses.push_back("body output '" + value + "'");
    }
    for (const Consumer& consumer : graph.ConsumersOf(value)) {
      const onnx::NodeProto& node = proto.node(consumer.node);
      const std::string what = DescribeNode(index.model(), body, consumer.node);
      if (consumer.slot < 0) {
        uses.other_uses.push_back(what + " (inside its subgraph)");
      } else if (IsOnnxOp(node, {"Gather"}) && consumer.slot == 1) {
        const bool outer = graph.ProducerOf(node.input(0)).kind == Producer::Kind::kOuterScope;
        if (exact && outer) {
          uses.reads.push_back(IndexedRead{node.input(0), AxisAttribute(node, index.onnx_opset()), consumer.node});
        } else {
          uses.other_uses.push_back(what);
        }
      } else if (IsOnnxOp(node, kExactOps) || IsOnnxOp(node, kDerivingOps)) {
        for (const auto& out : node.output()) pending.push_back({out, exact && IsOnnxOp(node, kExactOps)});
      } else {
        uses.other_uses.push_back(what);
      }
    }
  }
  return uses;
}

/// True when `output` is `input` again: through Identity, or reshaped or expanded to its own shape
/// (`Reshape(v, Shape(v))`, as exporters write a value they pass along).
bool PassedThrough(const ModelIndex& index, const GraphPath& body, const std::string& output, const std::string& input,
                   int depth = 0) {
  const std::string value = Through(index, body, output, {"Identity"});
  if (value == input) return true;
  const onnx::NodeProto* node = ProducerNode(index, body, value);
  if (depth > 8 || node == nullptr || !IsOnnxOp(*node, {"Reshape", "Expand"}) || node->input_size() != 2) return false;
  const onnx::NodeProto* shape = ProducerNode(index, body, Through(index, body, node->input(1), {"Identity"}));
  return shape != nullptr && IsOnnxOp(*shape, {"Shape"}) && shape->input_size() == 1 &&
         FindAttribute(*shape, "start") == nullptr && FindAttribute(*shape, "end") == nullptr &&
         Through(index, body, shape->input(0), {"Identity"}) == input &&
         PassedThrough(index, body, node->input(0), input, depth + 1);
}

/// The first body output other than `own_output` computed from body input `input` (the body reads the
/// carried value for something that leaves the iteration), or "".
std::string ReadFor(const ModelIndex& index, const GraphPath& body, const std::string& input,
                    const std::string& own_output) {
  for (const auto& output : ResolveGraph(index.model(), body)->output()) {
    if (output.name() == own_output) continue;
    if (ComputedFrom(index, ValueRef{body, output.name()}, ValueRef{body, input})) return output.name();
  }
  return "";
}

/// Why the sequence `info` appended to by `insert` is more than a collector of per-step values (the body
/// reads it, or inserts at a position), or "".
std::string CollectorProblem(const ModelIndex& index, const GraphPath& body, const CarriedInfo& info,
                             const onnx::NodeProto& insert) {
  if (insert.input_size() > 2 && !insert.input(2).empty()) return "it inserts at a position, not at the end";
  const GraphIndex& graph = index.graph(body);
  // The previous value is read by the insert only; the new one is the body output only.
  for (const std::string& value : {info.body_input, insert.output(0)}) {
    for (const Consumer& consumer : graph.ConsumersOf(value)) {
      const onnx::NodeProto& node = ResolveGraph(index.model(), body)->node(consumer.node);
      if (&node == &insert && consumer.slot == 0) continue;
      if (consumer.slot >= 0 && IsOnnxOp(node, {"Identity"}) && node.output(0) == info.body_output) continue;
      return "the body reads it (" + DescribeNode(index.model(), body, consumer.node) +
             "): what it collected carries from step to step";
    }
  }
  return "";
}

bool IsSequence(const onnx::TypeProto* type) { return type != nullptr && type->has_sequence_type(); }
bool IsOtherNonTensor(const onnx::TypeProto* type) {
  return type != nullptr && !type->has_tensor_type() && type->value_case() != onnx::TypeProto::VALUE_NOT_SET;
}

/// Reads `info`'s role from the body.
void Classify(const ModelIndex& index, const LoopAnatomy& loop, const std::string& cond_output, CarriedInfo& info) {
  const GraphPath& body = loop.body;
  const onnx::TypeProto* type = index.TypeOf(body, info.body_input);
  const onnx::NodeProto* producer = ProducerNode(index, body, Through(index, body, info.body_output, {"Identity"}));
  auto set = [&](CarriedRole role, std::string why) {
    info.role = role;
    info.why = std::move(why);
  };
  if (PassedThrough(index, body, info.body_output, info.body_input)) {
    return set(CarriedRole::kPassThrough, "passed through unchanged (loop-invariant)");
  }
  if (IsSequence(type) || (producer && IsOnnxOp(*producer, {"SequenceInsert"}))) {
    if (producer && IsOnnxOp(*producer, {"SequenceInsert"}) &&
        Through(index, body, producer->input(0), {"Identity"}) == info.body_input) {
      if (std::string problem = CollectorProblem(index, body, info, *producer); !problem.empty()) {
        return set(CarriedRole::kUnclassified, "a carried sequence collecting per-step values, but " + problem);
      }
      return set(CarriedRole::kCollector, "a sequence collecting per-step values");
    }
    return set(CarriedRole::kUnclassified, "a carried sequence that is not a per-step collector");
  }
  if (IsOtherNonTensor(type)) return set(CarriedRole::kUnclassified, "a carried value that is not a tensor");
  if (!ComputedFrom(index, ValueRef{body, info.body_output}, ValueRef{body, info.body_input})) {
    // Recomputed every iteration; but read by the body (a delay line: prev' = x[t], y = f(x[t], prev)), its
    // value crosses from one iteration to the next all the same: a state.
    if (ReadFor(index, body, info.body_input, info.body_output).empty()) {
      return set(CarriedRole::kIndependent, "its next value does not depend on its previous one");
    }
    return set(CarriedRole::kState, "");
  }
  if (producer && IsOnnxOp(*producer, {"Concat"})) {
    for (const auto& in : producer->input()) {
      if (Through(index, body, in, {"Identity"}) == info.body_input) {
        return set(CarriedRole::kUnclassified, "grows every iteration (Concat with its previous value)");
      }
    }
  }
  if (std::optional<int64_t> step = CounterStep(index, body, info.body_output, info.body_input)) {
    const GraphPath& outer = loop.graph;
    const onnx::NodeProto& node = ResolveGraph(index.model(), outer)->node(loop.node);
    info.step = step;
    info.start = ConstantScalar(index, outer, node.input(info.slots.node_input));
    info.uses = UsesOf(index, body, info.body_input, info.body_output, cond_output);
    // A counter used for anything else carries information from chunk to chunk: a state.
    if (info.uses.other_uses.empty()) return set(CarriedRole::kCounter, "an iteration counter (v + constant)");
  }
  set(CarriedRole::kState, "");
}

}  // namespace

const char* CarriedRoleName(CarriedRole role) {
  switch (role) {
    case CarriedRole::kState:
      return "state";
    case CarriedRole::kPassThrough:
      return "passed through";
    case CarriedRole::kCounter:
      return "counter";
    case CarriedRole::kCollector:
      return "collector";
    case CarriedRole::kIndependent:
      return "independent";
    case CarriedRole::kOpState:
      return "recurrent operator's state";
    case CarriedRole::kUnclassified:
      return "unclassified";
  }
  return "?";
}

std::optional<LoopAnatomy> ReadLoop(const ModelIndex& index, const GraphPath& graph, int node,
                                    const CarrierSlots& op_carriers) {
  const onnx::NodeProto& proto = ResolveGraph(index.model(), graph)->node(node);
  const ContainerKind kind = ContainerKindOf(proto, index.onnx_opset());
  if ((kind != ContainerKind::kLoop && kind != ContainerKind::kScan9) || !MalformedContainer(proto, kind).empty()) {
    return std::nullopt;
  }
  LoopAnatomy loop;
  loop.graph = graph;
  loop.node = node;
  loop.kind = kind;
  loop.body = graph;
  loop.body.push_back(GraphStep{node, kBody, -1});
  const onnx::GraphProto& body = *GraphAttribute(proto, kBody);
  const bool is_loop = kind == ContainerKind::kLoop;
  const std::string cond_output = is_loop ? BodyConditionOutput(body) : "";
  for (int position = 0; position < body.input_size(); ++position) {
    std::optional<CarriedVariable> slots = CarriedAtBodyInput(kind, proto, position);
    if (!slots) continue;
    if (slots->body_output >= body.output_size() || slots->node_input >= proto.input_size()) return std::nullopt;
    CarriedInfo info;
    info.slots = *slots;
    info.body_input = body.input(position).name();
    info.body_output = body.output(slots->body_output).name();
    if (op_carriers.count({graph, node, slots->node_input})) {
      info.role = CarriedRole::kOpState;
      info.why = "carries the state of a recurrent operator in the body (that operator's h or c)";
    } else {
      Classify(index, loop, cond_output, info);
    }
    loop.carried.push_back(std::move(info));
  }
  if (is_loop) loop.iteration = UsesOf(index, loop.body, BodyIterationNumber(body), "", cond_output);
  return loop;
}

}  // namespace rnnstate
