#include "loop_streaming.h"

#include <initializer_list>
#include <set>

#include "proto_access.h"

namespace rnnstate {

namespace {

/// The first value the body reads from outside that is computed from one of `inputs`' values and is used
/// for more than the Gathers in `allowed` (the reads at the iteration index), Shape and Size; "" if none.
std::string WholeRead(const ModelIndex& index, const LoopAnatomy& loop, const std::set<std::string>& inputs,
                      const std::set<int>& allowed) {
  const onnx::NodeProto& node = ResolveGraph(index.model(), loop.graph)->node(loop.node);
  const onnx::GraphProto& body = *ResolveGraph(index.model(), loop.body);
  for (const std::string& name : SubgraphReferences(node)) {
    bool from_data = false;
    for (const auto& input : inputs) from_data |= ComputedFrom(index, ValueRef{loop.graph, name}, ValueRef{{}, input});
    if (!from_data) continue;
    for (const Consumer& consumer : index.graph(loop.body).ConsumersOf(name)) {
      if (consumer.slot < 0) return name;
      const onnx::NodeProto& user = body.node(consumer.node);
      const bool indexed = IsOnnxOp(user, {"Gather"}) && consumer.slot == 0 && allowed.count(consumer.node);
      if (!indexed && !IsOnnxOp(user, {"Shape", "Size"})) return name;
    }
  }
  return "";
}

/// "it runs inside the body of Loop 'outer'" when the owner is nested in a Loop or Scan body, else "".
std::string NestedInLoop(const ModelIndex& index, const GraphPath& graph) {
  GraphPath prefix;
  for (const auto& step : graph) {
    if (step.attribute == "body") {
      return "it runs inside the body of " + DescribeNode(index.model(), prefix, step.node) +
             ", which restarts it on every iteration";
    }
    prefix.push_back(step);
  }
  return "";
}

LoopVerdict NotStreamable(std::string reason, std::string walk = "") {
  LoopVerdict verdict;
  verdict.reason = std::move(reason);
  verdict.walk = std::move(walk);
  return verdict;
}

LoopVerdict Streamable(std::string walk) {
  LoopVerdict verdict;
  verdict.streamable = true;
  verdict.walk = std::move(walk);
  return verdict;
}

/// The reads at the iteration index, resolved to input axes; "" or why they cannot be.
std::string ResolveReads(const ModelIndex& index, const LoopAnatomy& loop, std::vector<TimeRef>* refs,
                         std::set<int>* nodes) {
  std::vector<IndexedRead> reads = loop.iteration.reads;
  for (const auto& c : loop.carried) {
    if (c.role != CarriedRole::kCounter || c.uses.reads.empty()) continue;
    if (c.start != 0 || c.step != 1) {
      return "counter '" + c.body_input + "' indexes '" + c.uses.reads.front().data +
             "' but does not start at 0 stepping by 1";
    }
    reads.insert(reads.end(), c.uses.reads.begin(), c.uses.reads.end());
  }
  for (const auto& read : reads) {
    std::optional<TimeRef> ref = TraceToInput(index, loop.graph, read.data, read.axis);
    if (!ref) {
      return "the body reads '" + read.data +
             "' at the iteration index, and it is not a graph input (nor computed "
             "from one step by step)";
    }
    refs->push_back(*ref);
    nodes->insert(read.node);
  }
  return "";
}

LoopVerdict JudgeLoopNode(const ModelIndex& index, const LoopAnatomy& loop) {
  const onnx::NodeProto& node = ResolveGraph(index.model(), loop.graph)->node(loop.node);
  if (!loop.iteration.other_uses.empty()) {
    return NotStreamable("the body uses the iteration number for more than indexing the time input (" +
                         loop.iteration.other_uses.front() + "): every call restarts it at 0");
  }
  for (const auto& c : loop.carried) {
    const std::string final_value = c.slots.node_output < node.output_size() ? node.output(c.slots.node_output) : "";
    const GraphIndex& graph = index.graph(loop.graph);
    if (c.role == CarriedRole::kCounter && !final_value.empty() &&
        (!graph.ConsumersOf(final_value).empty() || graph.outputs.count(final_value))) {
      return NotStreamable("the final value of counter '" + c.body_input + "' is used after the loop");
    }
  }
  std::vector<TimeRef> refs;
  std::set<int> read_nodes;
  if (std::string why = ResolveReads(index, loop, &refs, &read_nodes); !why.empty()) return NotStreamable(why);
  const Trip trip = ReadTrip(index, loop.graph, node.input(0));
  std::vector<ValueRef> constants;
  const bool cond_ok = CondEndsWithTrip(index, loop, trip, &constants);
  const std::string cond_problem = "the loop's condition is neither always true nor the end of its trip count";
  std::set<std::string> inputs;
  for (const auto& ref : refs) inputs.insert(ref.input);
  if (trip.kind == Trip::Kind::kLength) inputs.insert(trip.time.input);
  if (std::string whole = WholeRead(index, loop, inputs, read_nodes); !whole.empty()) {
    return NotStreamable("the body reads '" + whole + "' whole, not only at the iteration index");
  }
  auto all_at = [&](const TimeRef& time) {
    for (const auto& ref : refs) {
      if (ref != time) return false;
    }
    return true;
  };
  switch (trip.kind) {
    case Trip::Kind::kLength:
      if (!all_at(trip.time)) {
        return NotStreamable("the trip count is the length of " + trip.time.Text() +
                             " but the body reads another axis at the iteration index");
      }
      if (!cond_ok) return NotStreamable(cond_problem);
      return Streamable("walks " + trip.time.Text());
    case Trip::Kind::kConstant: {
      const std::string count = std::to_string(trip.constant);
      if (!refs.empty() && all_at(refs.front()) && cond_ok && StaticLength(index, refs.front()) == trip.constant) {
        const TimeRef& time = refs.front();
        LoopVerdict verdict = NotStreamable(
            "fixed sequence length: the trip count is the constant " + count + ", the static length of " + time.Text() +
                "; rewrite with --time-axis " + time.Text() + " to stream chunks of any length",
            "walks " + time.Text() + " (fixed length " + count + ")");
        constants.push_back(trip.defined);
        verdict.fixed = FixedTimeLoop{time, trip.constant, constants};
        return verdict;
      }
      return NotStreamable("the trip count is the constant " + count + ": every call runs " + count + " iterations");
    }
    case Trip::Kind::kInput:
      if (!refs.empty()) {
        return NotStreamable("the body reads " + refs.front().Text() + " at the iteration index, but the trip count '" +
                             trip.defined.name + "' is not its length");
      }
      if (!cond_ok) return NotStreamable(cond_problem);
      return Streamable("autoregressive: trip count '" + trip.defined.name + "'");
    case Trip::Kind::kAbsent:
      return NotStreamable("no trip count: the loop runs until its condition ends it");
    case Trip::Kind::kOther:
      break;
  }
  return NotStreamable("the trip count (" + trip.producer + ") is neither a graph input's length nor a graph input");
}

LoopVerdict JudgeScan(const ModelIndex& index, const LoopAnatomy& loop) {
  const onnx::NodeProto& node = ResolveGraph(index.model(), loop.graph)->node(loop.node);
  const int states = ScanStateCount(node);
  const onnx::AttributeProto* axes = FindAttribute(node, "scan_input_axes");
  const onnx::AttributeProto* directions = FindAttribute(node, "scan_input_directions");
  const onnx::AttributeProto* output_directions = FindAttribute(node, "scan_output_directions");
  std::set<std::string> inputs;
  std::string walk;
  for (int k = 0; states + k < node.input_size(); ++k) {
    const std::string& value = node.input(states + k);
    if (directions && k < directions->ints_size() && directions->ints(k) != 0) {
      return NotStreamable("it scans '" + value + "' in reverse");
    }
    const int64_t axis = axes && k < axes->ints_size() ? axes->ints(k) : 0;
    std::optional<TimeRef> ref = TraceToInput(index, loop.graph, value, axis);
    if (!ref)
      return NotStreamable("scan input '" + value + "' is not a graph input (nor computed from one step by step)");
    inputs.insert(ref->input);
    walk += (walk.empty() ? "scans " : ", ") + ref->Text();
  }
  for (int k = 0; output_directions && k < output_directions->ints_size(); ++k) {
    if (output_directions->ints(k) != 0)
      return NotStreamable("it writes scan output " + std::to_string(k) + " in reverse");
  }
  for (const auto& c : loop.carried) {
    if (c.role == CarriedRole::kCounter && !c.uses.reads.empty()) {
      return NotStreamable("counter '" + c.body_input + "' indexes '" + c.uses.reads.front().data +
                           "' inside the Scan");
    }
  }
  if (std::string whole = WholeRead(index, loop, inputs, {}); !whole.empty()) {
    return NotStreamable("the body reads '" + whole + "', computed from the scanned input, whole");
  }
  return Streamable(walk);
}

}  // namespace

LoopVerdict JudgeLoop(const ModelIndex& index, const LoopAnatomy& loop) {
  if (std::string nested = NestedInLoop(index, loop.graph); !nested.empty()) return NotStreamable(nested);
  return loop.kind == ContainerKind::kScan9 ? JudgeScan(index, loop) : JudgeLoopNode(index, loop);
}

}  // namespace rnnstate
