#include "loops/loop_streaming.h"

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <set>

#include "graph/control_flow.h"
#include "graph/proto_access.h"
#include "loops/loop_chunks.h"
#include "ops/op_semantics.h"
#include "values/constant_value.h"

namespace rnnstate {

namespace {

/// The judge ChunkProblem asks about a loop downstream: "" when it streams as it is or with
/// `--time-axis` (what it does with each step is its own verdict's business), else its reason.
DownstreamLoopJudge DownstreamVerdict(const ModelIndex& index) {
  return [&index](const LoopAnatomy& downstream) -> std::string {
    const LoopVerdict verdict = JudgeLoop(index, downstream);
    return verdict.streamable || verdict.fixed ? "" : verdict.reason;
  };
}

/// `name` followed back through `Identity`, `Cast`, `Squeeze`, `Unsqueeze` and `Reshape`, across scopes:
/// every name on the way.
std::vector<ValueRef> StripChain(const ModelIndex& index, const GraphPath& path, const std::string& name) {
  std::vector<ValueRef> chain;
  GraphPath graph = path;
  std::string value = name;
  for (int depth = 0; depth < 32 && !value.empty(); ++depth) {
    const ResolvedName resolved = index.Resolve(graph, value);
    chain.push_back(ValueRef{resolved.graph, value});
    if (resolved.node == nullptr) break;
    const onnx::NodeProto& node = *resolved.node;
    if (!OnlyReshapes(node) || node.input_size() == 0) break;
    graph = resolved.graph;
    value = node.input(0);
  }
  return chain;
}

/// The outer values the loop's condition compares with as its bound (the body's `comparisons`, which
/// CondEndsWithTrip has proven to compare with the trip count's length again) and that the body reads
/// for nothing else.
std::set<std::string> CondBounds(const ModelIndex& index, const LoopAnatomy& loop,
                                 const std::vector<int>& comparisons) {
  std::set<std::string> bounds;
  const onnx::GraphProto& body = *ResolveGraph(index.model(), loop.body);
  std::set<int> users(comparisons.begin(), comparisons.end());  // the comparisons and the casts on their way
  std::set<std::string> outer;
  for (int n : comparisons) {
    const onnx::NodeProto& compare = body.node(n);
    if (compare.input_size() != 2) continue;
    const std::string& bound = compare.input(compare.op_type() == "Less" ? 1 : 0);
    for (const ValueRef& value : StripChain(index, loop.body, bound)) {
      const Producer producer = index.graph(loop.body).ProducerOf(value.name);
      if (value.graph == loop.body && producer.kind == Producer::Kind::kNode) users.insert(producer.index);
      if (value.graph != loop.body && producer.kind == Producer::Kind::kOuterScope) outer.insert(value.name);
    }
  }
  for (const std::string& name : outer) {
    bool only = true;
    for (const Consumer& use : index.graph(loop.body).ConsumersOf(name)) only &= use.slot >= 0 && users.count(use.node);
    if (only) bounds.insert(name);
  }
  return bounds;
}

/// True when the sequence `initial` is empty: SequenceEmpty, through Identity.
bool EmptySequence(const ModelIndex& index, const GraphPath& path, const std::string& initial) {
  const std::vector<ValueRef> chain = StripChain(index, path, initial);
  const ResolvedName at = index.Resolve(chain.back().graph, chain.back().name);
  return at.node != nullptr && IsOnnxOp(*at.node, {"SequenceEmpty"});
}

/// Why the loop's carried variables keep chunks from equalling one run (an unclassified one, a collector
/// that starts with items), or "".
std::string CarriedProblem(const ModelIndex& index, const LoopAnatomy& loop) {
  const onnx::NodeProto& node = ResolveGraph(index.model(), loop.graph)->node(loop.node);
  for (const CarriedInfo& c : loop.carried) {
    if (c.role == CarriedRole::kUnclassified) {
      return "carried '" + c.body_input + "' recurs in a way rnnstate cannot classify (" + c.why +
             "): it is not exposed, so every chunk restarts it";
    }
    if (c.role == CarriedRole::kCollector && !EmptySequence(index, loop.graph, node.input(c.slots.node_input))) {
      return "collector '" + c.body_input + "' starts with the items of '" + node.input(c.slots.node_input) +
             "', not SequenceEmpty: every chunk would repeat them";
    }
  }
  return "";
}

/// "it runs inside the body of Loop 'outer'" when the owner is nested in a Loop or Scan body, else "".
std::string NestedInLoop(const ModelIndex& index, const GraphPath& graph) {
  GraphPath prefix;
  for (const auto& step : graph) {
    if (step.attribute == kBody) {
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
                         std::set<int>* nodes, std::vector<ViewOnTime>* views = nullptr) {
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
    std::optional<TimeRef> ref = TraceToInput(index, loop.graph, read.data, read.axis, views);
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

/// The constant targets of the Reshapes in `views` that hold `length` where the time axis is.
std::vector<LengthInShape> LengthsInShapes(const ModelIndex& index, const std::vector<ViewOnTime>& views,
                                           int64_t length) {
  std::vector<LengthInShape> shapes;
  for (const ViewOnTime& view : views) {
    const onnx::NodeProto& reshape = ResolveGraph(index.model(), view.graph)->node(view.node);
    const ResolvedName target = index.Resolve(view.graph, reshape.input(1));
    const std::optional<std::vector<int64_t>> values = ConstantIntegers(index, target.graph, reshape.input(1));
    if (!values || view.axis >= static_cast<int64_t>(values->size()) || (*values)[view.axis] != length) continue;
    const LengthInShape shape{ValueRef{target.graph, reshape.input(1)}, view.axis};
    if (std::find(shapes.begin(), shapes.end(), shape) == shapes.end()) shapes.push_back(shape);
  }
  return shapes;
}

/// Why the loop's counters stop it streaming ("" when they do not): every call restarts them at 0, so the
/// body may use the iteration number only to index the time input, and no counter's final value may be read.
std::string CounterProblem(const ModelIndex& index, const LoopAnatomy& loop, const onnx::NodeProto& node) {
  if (!loop.iteration.other_uses.empty()) {
    return "the body uses the iteration number for more than indexing the time input (" +
           loop.iteration.other_uses.front() + "): every call restarts it at 0";
  }
  for (const auto& c : loop.carried) {
    const std::string final_value = c.slots.node_output < node.output_size() ? node.output(c.slots.node_output) : "";
    const GraphIndex& graph = index.graph(loop.graph);
    if (c.role == CarriedRole::kCounter && !final_value.empty() &&
        (!graph.ConsumersOf(final_value).empty() || graph.outputs.count(final_value))) {
      return "the final value of counter '" + c.body_input + "' is used after the loop";
    }
  }
  return "";
}

LoopVerdict JudgeLoopNode(const ModelIndex& index, const LoopAnatomy& loop, const std::set<std::string>& refused) {
  const onnx::NodeProto& node = ResolveGraph(index.model(), loop.graph)->node(loop.node);
  if (std::string why = CounterProblem(index, loop, node); !why.empty()) return NotStreamable(why);
  std::vector<TimeRef> refs;
  std::set<int> read_nodes;
  std::vector<ViewOnTime> views;
  if (std::string why = ResolveReads(index, loop, &refs, &read_nodes, &views); !why.empty()) return NotStreamable(why);
  const Trip trip = ReadTrip(index, loop.graph, LoopTripCount(node));
  std::vector<ValueRef> constants;
  std::vector<int> comparisons;
  const bool cond_ok = CondEndsWithTrip(index, loop, trip, &constants, &comparisons);
  const std::string cond_problem = "the loop's condition is neither always true nor the end of its trip count";
  ChunkedInputs chunked;
  for (const auto& ref : refs) chunked.time_axes.emplace(ref.input, ref.axis);
  if (trip.kind == Trip::Kind::kLength) chunked.time_axes.emplace(trip.time.input, trip.time.axis);
  if (trip.kind == Trip::Kind::kInput && trip.defined.graph.empty()) chunked.trip_input = trip.defined.name;
  const ProvenUses proven{read_nodes, cond_ok ? CondBounds(index, loop, comparisons) : std::set<std::string>{}};
  if (std::string problem = ChunkProblem(index, loop, chunked, proven, DownstreamVerdict(index)); !problem.empty()) {
    return NotStreamable(problem);
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
      const bool fixed_length =
          !refs.empty() && all_at(refs.front()) && StaticLength(index, refs.front()) == trip.constant;
      if (fixed_length && !cond_ok) return NotStreamable(cond_problem);
      if (fixed_length) {
        const TimeRef& time = refs.front();
        const std::string advice = refused.count(time.Text())
                                       ? "--time-axis " + time.Text() + " did not apply (see its warning)"
                                       : "rewrite with --time-axis " + time.Text() + " to stream chunks of any length";
        LoopVerdict verdict = NotStreamable("fixed sequence length: the trip count is the constant " + count +
                                                ", the static length of " + time.Text() + "; " + advice,
                                            "walks " + time.Text() + " (fixed length " + count + ")");
        constants.push_back(trip.defined);
        verdict.fixed = FixedTimeLoop{time, trip.constant, constants, LengthsInShapes(index, views, trip.constant)};
        return verdict;
      }
      if (trip.constant == std::numeric_limits<int64_t>::max()) {
        // TorchScript's `while` loops: no bound, the condition ends the loop.
        return NotStreamable("a while loop (trip count INT64_MAX): its condition, not the input's length, ends it");
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
  const SlotRange scanned = ScanInputs(node);
  const onnx::AttributeProto* axes = FindAttribute(node, "scan_input_axes");
  const onnx::AttributeProto* directions = FindAttribute(node, "scan_input_directions");
  const onnx::AttributeProto* output_directions = FindAttribute(node, "scan_output_directions");
  std::vector<TimeRef> refs;
  std::string walk;
  for (int k = 0; scanned.first + k < scanned.end; ++k) {
    const std::string& value = node.input(scanned.first + k);
    if (directions && k < directions->ints_size() && directions->ints(k) != 0) {
      return NotStreamable("it scans '" + value + "' in reverse");
    }
    const int64_t axis = axes && k < axes->ints_size() ? axes->ints(k) : 0;
    std::optional<TimeRef> ref = TraceToInput(index, loop.graph, value, axis);
    if (!ref)
      return NotStreamable("scan input '" + value + "' is not a graph input (nor computed from one step by step)");
    refs.push_back(*ref);
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
  ChunkedInputs chunked;
  for (const TimeRef& ref : refs) chunked.time_axes.emplace(ref.input, ref.axis);
  if (std::string problem = ChunkProblem(index, loop, chunked, ProvenUses{}, DownstreamVerdict(index));
      !problem.empty()) {
    return NotStreamable(problem, walk);
  }
  return Streamable(walk);
}

}  // namespace

/// The input axes the loop walks: its per-step reads (a Scan's scan inputs) and its trip count's length.
std::vector<TimeRef> TimesOf(const ModelIndex& index, const LoopAnatomy& loop) {
  std::vector<TimeRef> times;
  const onnx::NodeProto& node = ResolveGraph(index.model(), loop.graph)->node(loop.node);
  if (loop.kind == ContainerKind::kScan9) {
    const onnx::AttributeProto* axes = FindAttribute(node, "scan_input_axes");
    const SlotRange scanned = ScanInputs(node);
    for (int k = 0; scanned.first + k < scanned.end; ++k) {
      const int64_t axis = axes && k < axes->ints_size() ? axes->ints(k) : 0;
      if (auto ref = TraceToInput(index, loop.graph, node.input(scanned.first + k), axis)) times.push_back(*ref);
    }
    return times;
  }
  std::vector<TimeRef> refs;
  std::set<int> nodes;
  ResolveReads(index, loop, &refs, &nodes);
  times = refs;
  const Trip trip = ReadTrip(index, loop.graph, LoopTripCount(node));
  if (trip.kind == Trip::Kind::kLength) times.push_back(trip.time);
  return times;
}

LoopVerdict JudgeLoop(const ModelIndex& index, const LoopAnatomy& loop,
                      const std::set<std::string>& refused_time_axes) {
  LoopVerdict verdict;
  if (std::string nested = NestedInLoop(index, loop.graph); !nested.empty()) {
    verdict = NotStreamable(nested);
  } else if (std::string carried = CarriedProblem(index, loop); !carried.empty()) {
    verdict = NotStreamable(carried);
  } else {
    verdict =
        loop.kind == ContainerKind::kScan9 ? JudgeScan(index, loop) : JudgeLoopNode(index, loop, refused_time_axes);
  }
  verdict.times = TimesOf(index, loop);
  return verdict;
}

}  // namespace rnnstate
