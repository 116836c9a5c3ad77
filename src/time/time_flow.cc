#include "time/time_flow.h"

#include <algorithm>
#include <numeric>

#include "graph/control_flow.h"
#include "graph/proto_access.h"
#include "loops/carried_variables.h"
#include "loops/loop_streaming.h"
#include "ops/op_semantics.h"
#include "states/recurrent_ops.h"
#include "time/time_rules.h"
#include "values/shape_eval.h"

namespace rnnstate {

namespace {

using Kind = TimeFact::Kind;

const TimeFact kSteadyOfFlow;

bool AllSteady(const std::vector<const TimeFact*>& facts) {
  return std::all_of(facts.begin(), facts.end(), [](const TimeFact* f) { return f == nullptr || f->steady(); });
}

/// The fact of an If output whose branches give `a` and `b`: the same every call when both are steady,
/// else the one that is not (the same branch runs on every call of one stream: the condition is steady),
/// mixed when the branches disagree on where time is.
TimeFact Join(const TimeFact& a, const TimeFact& b, const TimeBreak& disagree) {
  if (a.steady()) return b;
  if (b.steady()) return a;
  if (a.kind == Kind::kMixed) return a;
  if (b.kind == Kind::kMixed) return b;
  const bool same = a.kind == b.kind && a.axis == b.axis && a.folded == b.folded && a.elements == b.elements &&
                    a.folded_elements == b.folded_elements;
  // An earlier break is the cause worth naming; the If only loses track of it.
  if (!same) return TimeFact::Mixed(a.broken ? *a.broken : b.broken ? *b.broken : disagree);
  TimeFact out = a;
  out.outer = a.outer && b.outer;
  if (a.length_of != b.length_of) out.length_of.clear();
  if (!out.broken) out.broken = b.broken;
  return out;
}

/// Where a recurrent operator's X, initial states and outputs hold the sequence and the batch.
struct RecurrentAxes {
  int64_t x_sequence, x_batch;  ///< in X
  int64_t y_sequence, y_batch;  ///< in Y
  int64_t state_batch;          ///< in Y_h, Y_c and the initial states
};

RecurrentAxes AxesOfLayout(int64_t layout) {
  if (layout == 1) return RecurrentAxes{1, 0, 1, 0, 0};
  return RecurrentAxes{0, 1, 0, 2, 1};
}

}  // namespace

TimeFlow::TimeFlow(const ModelIndex& index, std::vector<InputAxis> sources, OwnerLookup owners, int64_t length,
                   ContextFrames contexts, StreamedNodes streamed)
    : index_(index),
      sources_(std::move(sources)),
      owners_(std::move(owners)),
      length_(length),
      contexts_(std::move(contexts)),
      streamed_(std::move(streamed)) {
  const onnx::GraphProto& main = index_.model().graph();
  for (const auto& input : main.input()) {
    for (const InputAxis& source : sources_) {
      if (source.input == input.name() && !facts_[GraphPath{}].count(input.name())) {
        Set(GraphPath{}, input.name(), TimeFact::Frames(source.axis));
      }
    }
  }
  if (!sources_.empty()) RunGraph(GraphPath{});
}

const TimeFact& TimeFlow::Of(const GraphPath& path, const std::string& name) const {
  if (name.empty()) return kSteadyOfFlow;
  const ResolvedName resolved = index_.Resolve(path, name);
  auto graph = facts_.find(resolved.graph);
  if (graph == facts_.end()) return kSteadyOfFlow;
  auto found = graph->second.find(name);
  return found == graph->second.end() ? kSteadyOfFlow : found->second;
}

const TimeFact& TimeFlow::OutputOf(const GraphPath& path, int n, int slot) const {
  const onnx::GraphProto* graph = ResolveGraph(index_.model(), path);
  if (graph != nullptr && n >= 0 && n < graph->node_size() && slot >= 0 && slot < graph->node(n).output_size() &&
      !graph->node(n).output(slot).empty()) {
    return Of(path, graph->node(n).output(slot));
  }
  auto found = unnamed_.find({path, n, slot});
  return found == unnamed_.end() ? kSteadyOfFlow : found->second;
}

const TimeFact& TimeFlow::ThreadedOutOf(const GraphPath& path, int n) const {
  auto found = threaded_.find({path, n});
  return found == threaded_.end() ? kSteadyOfFlow : found->second;
}

void TimeFlow::Set(const GraphPath& path, const std::string& name, TimeFact fact) {
  if (path.empty() && fact.frames()) {
    if (auto context = contexts_.find(name); context != contexts_.end()) fact.context = context->second;
  }
  if (fact.steady() || name.empty()) return;
  chunk_multiple_ = std::lcm(chunk_multiple_, fact.multiple);
  facts_[path].insert_or_assign(std::string_view(name), std::move(fact));
}

void TimeFlow::RunGraph(const GraphPath& path) {
  const onnx::GraphProto* graph = ResolveGraph(index_.model(), path);
  if (graph == nullptr) return;
  for (int n = 0; n < graph->node_size(); ++n) {
    const onnx::NodeProto& node = graph->node(n);
    std::vector<TimeFact> outs = NodeFacts(path, n, node);
    for (int k = 0; static_cast<size_t>(k) < outs.size(); ++k) {
      const bool named = k < node.output_size() && !node.output(k).empty();
      if (named) {
        Set(path, node.output(k), std::move(outs[k]));
      } else if (!outs[k].steady()) {
        unnamed_.insert_or_assign({path, n, k}, std::move(outs[k]));
      }
    }
  }
}

std::vector<const TimeFact*> TimeFlow::OuterFacts(const GraphPath& path, int n) const {
  std::vector<const TimeFact*> facts;
  const GraphIndex& graph = index_.graph(path);
  auto refs = graph.outer_references.find(n);
  if (refs == graph.outer_references.end()) return facts;
  for (const std::string& name : refs->second) facts.push_back(&Of(path, name));
  return facts;
}

std::vector<TimeFact> TimeFlow::NodeFacts(const GraphPath& path, int n, const onnx::NodeProto& node) {
  std::vector<const TimeFact*> in;
  in.reserve(static_cast<size_t>(node.input_size()));
  for (const std::string& name : node.input()) in.push_back(&Of(path, name));
  if (const RecurrentOp* op = FindRecurrentOp(node)) {
    (void)op;
    return RecurrentFacts(path, n, node, in);
  }
  const std::vector<const TimeFact*> outer = OuterFacts(path, n);
  if (AllSteady(in) && AllSteady(outer)) return {};
  // A context state's Concat: the carried frames in front of its value's (the value is its last input).
  if (path.empty() && node.output_size() == 1 && contexts_.count(node.output(0)) && !in.empty()) {
    return {*in.back()};
  }
  // A window whose context a planned state carries, or the Pad in front of one: the chunk's own frames.
  if (auto streamed = path.empty() ? streamed_.find(n) : streamed_.end();
      streamed != streamed_.end() && !in.empty() && in.front()->frames()) {
    TimeFact out = *in.front();
    out.multiple *= streamed->second;
    return {out};
  }
  switch (ContainerKindOf(node, index_.onnx_opset())) {
    case ContainerKind::kIf:
      return IfFacts(path, n, node);
    case ContainerKind::kLoop:
    case ContainerKind::kScan9:
      return LoopFacts(path, n, node, in);
    case ContainerKind::kScan8:
    case ContainerKind::kOther:
      if (!outer.empty() || ContainerKindOf(node, index_.onnx_opset()) == ContainerKind::kScan8) {
        const NodeTime view{index_, path, n, node, in, length_};
        return std::vector<TimeFact>(std::max(1, node.output_size()),
                                     view.Mixed("runs a subgraph over values that change with time"));
      }
      break;
  }
  return TimeThrough(NodeTime{index_, path, n, node, in, length_});
}

namespace {

/// The outputs (`out`, sized) of a recurrent node whose time axis is in its batch (`view.In(op.x_slot)`
/// frames on the batch axis of X): it runs within each frame, so its outputs are frames on their batch axes.
std::vector<TimeFact> PerFrameFacts(const NodeTime& view, const RecurrentOp& op, const RecurrentAxes& axes,
                                    std::vector<TimeFact> out) {
  const TimeFact& x = view.In(op.x_slot);
  auto set = [&](int slot, TimeFact fact) {
    if (slot >= 0 && static_cast<size_t>(slot) < out.size()) out[static_cast<size_t>(slot)] = std::move(fact);
  };
  std::optional<TimeBreak> broken = x.broken;
  for (int slot : {op.initial_h_slot, op.initial_c_slot}) {
    const TimeFact& s = view.In(slot);
    if (s.steady() || (s.frames() && s.axis == axes.state_batch)) continue;
    if (!broken) broken = view.Break("starts each frame from a state that is not the frame's own");
  }
  TimeFact y = x;
  y.axis = axes.y_batch;
  y.broken = broken;
  TimeFact last = y;
  last.axis = axes.state_batch;
  set(0, y);
  set(op.y_h_slot, last);
  if (op.y_c_slot >= 0) set(op.y_c_slot, last);
  return out;
}

/// Where an initial state that is neither steady nor the first frames comes from, named by its origin,
/// not by the value in the slot (which a rewrite replaces).
std::string InitialStateOrigin(const TimeFact& s) {
  return s.kind == TimeFact::Kind::kFinal && !s.origin.empty() ? "the final state of " + s.origin
         : s.kind == TimeFact::Kind::kFinal                    ? "a final state of the sequence"
                                                               : "a value computed from the frames";
}

}  // namespace

std::vector<TimeFact> TimeFlow::RecurrentFacts(const GraphPath& path, int n, const onnx::NodeProto& node,
                                               const std::vector<const TimeFact*>& in) {
  const RecurrentOp& op = *FindRecurrentOp(node);
  const NodeTime view{index_, path, n, node, in, length_};
  // Y_h and Y_c too when the model leaves them out: a rewrite adds them as state outputs.
  const size_t outputs = static_cast<size_t>(std::max({1, node.output_size(), op.y_h_slot + 1, op.y_c_slot + 1}));
  const std::optional<OwnerTime> owner = owners_ ? owners_(path, n) : std::nullopt;
  const bool carried = owner ? owner->carried : true;
  const bool fed_initial = owner && owner->fed_initial;
  const TimeFact& x = view.In(op.x_slot);
  auto is_state_slot = [&](int k) { return k == op.initial_h_slot || k == op.initial_c_slot; };
  for (int k = 0; k < node.input_size(); ++k) {
    if (k == op.x_slot || is_state_slot(k) || k == op.sequence_lens_slot) continue;
    if (!view.In(k).steady()) return std::vector<TimeFact>(outputs, view.Mixed("takes weights that change with time"));
  }
  if (x.steady() && AllSteady(in)) {
    if (!carried) return {};
    // Over a sequence that is not the time axis, with its state fed from call to call: every call goes on
    // where the last left off, which one run over the whole sequence does not.
    return std::vector<TimeFact>(outputs, view.Mixed("carries its state from call to call over a sequence that "
                                                     "is not the time axis"));
  }
  if (x.kind == Kind::kMixed) return std::vector<TimeFact>(outputs, x);
  std::string direction = "forward";
  if (const onnx::AttributeProto* a = FindAttribute(node, "direction")) direction = a->s();
  const int64_t layout = op.has_layout ? IntAttribute(node, "layout", 0) : 0;
  const RecurrentAxes axes = AxesOfLayout(layout);
  std::vector<TimeFact> out(outputs);
  const bool has_cell = op.y_c_slot >= 0;
  auto set = [&](int slot, TimeFact fact) {
    if (slot >= 0 && static_cast<size_t>(slot) < out.size()) out[static_cast<size_t>(slot)] = std::move(fact);
  };
  if (x.frames() && x.axis == axes.x_batch) {
    // Time in the batch: the recurrence runs within each frame (over frequency, say), from an initial
    // state per frame. Its states are no stream's.
    recurrences_.push_back(RecurrenceTime{path, n, RecurrenceTime::Way::kPerFrame});
    return PerFrameFacts(view, op, axes, std::move(out));
  }
  if (!x.frames() || x.axis != axes.x_sequence || x.folded) {
    recurrences_.push_back(RecurrenceTime{path, n, RecurrenceTime::Way::kOther});
    const std::string why = x.kind == Kind::kFinal   ? "runs over a final state as its sequence"
                            : x.frames() && x.folded ? "runs over time folded with other axes"
                            : x.frames()             ? "runs with time in its features"
                                                     : "runs over the chunk's length";
    return std::vector<TimeFact>(outputs, view.Mixed(why));
  }
  recurrences_.push_back(RecurrenceTime{path, n, RecurrenceTime::Way::kOverTime});
  std::optional<TimeBreak> broken = x.broken;
  if (!broken && x.context > 0) {
    broken = view.Break("runs again over " + std::to_string(x.context) +
                        " frames of the previous call, which its carried state has already seen");
  }
  if (!broken && direction != "forward") {
    broken = view.Break("runs " + direction + ": every frame's output needs the whole sequence");
    broken->whole = true;
  }
  if (!broken && op.sequence_lens_slot < node.input_size() && !node.input(op.sequence_lens_slot).empty()) {
    broken = view.Break("takes sequence_lens: chunks would need lengths of their own");
  }
  for (int slot : {op.initial_h_slot, op.initial_c_slot}) {
    const TimeFact& s = view.In(slot);
    // The first frames are the whole run's on the first call, the only one that reads an initial state.
    if (broken || s.steady() || s.kind == Kind::kFirst || fed_initial) continue;
    broken = view.Break("starts from " + InitialStateOrigin(s) +
                        ": the first call would start from its own chunk's end, one run from the whole sequence's");
    broken->whole = true;
  }
  if (!broken && !carried) {
    broken = view.Break("starts again from its initial state on every call: its state is not carried between calls");
  }
  set(0, TimeFact::Frames(axes.y_sequence, broken));
  TimeFact last = TimeFact::Final(broken);
  last.origin = view.Break("").what;
  set(op.y_h_slot, last);
  if (has_cell) set(op.y_c_slot, last);
  return out;
}

std::vector<TimeFact> TimeFlow::IfFacts(const GraphPath& path, int n, const onnx::NodeProto& node) {
  const NodeTime view{index_, path, n, node, {&Of(path, IfCondition(node))}, length_};
  const size_t outputs = static_cast<size_t>(std::max(1, node.output_size()));
  if (!view.In(0).steady()) {
    return std::vector<TimeFact>(outputs, view.Mixed("chooses its branch by a value that changes with time"));
  }
  const onnx::GraphProto* branches[2] = {GraphAttribute(node, kThenBranch), GraphAttribute(node, kElseBranch)};
  GraphPath then_path = path, else_path = path;
  then_path.push_back(GraphStep{n, kThenBranch, -1});
  else_path.push_back(GraphStep{n, kElseBranch, -1});
  if (branches[0] == nullptr || branches[1] == nullptr) return {};
  // A branch that cannot run in a call that succeeds (the unbatched-input branch of a rank test) says
  // nothing about the If's outputs.
  if (!branch_facts_) branch_facts_ = BranchFacts::Find(index_);
  const std::optional<bool> known = KnownCondition(index_, path, IfCondition(node));
  const bool then_runs = known.value_or(true) && !branch_facts_->Excludes(index_, path, n, kThenBranch);
  const bool else_runs = !known.value_or(false) && !branch_facts_->Excludes(index_, path, n, kElseBranch);
  if (then_runs) RunGraph(then_path);
  if (else_runs) RunGraph(else_path);
  std::vector<TimeFact> out(outputs);
  const TimeBreak disagree = view.Break("returns values whose time axes differ between its branches");
  for (size_t k = 0; k < outputs; ++k) {
    const int slot = static_cast<int>(k);
    if (slot >= branches[0]->output_size() || slot >= branches[1]->output_size()) break;
    const TimeFact& a = Of(then_path, branches[0]->output(slot).name());
    const TimeFact& b = Of(else_path, branches[1]->output(slot).name());
    out[k] = !else_runs ? a : !then_runs ? b : Join(a, b, disagree);
  }
  return out;
}

std::vector<TimeFact> TimeFlow::LoopFacts(const GraphPath& path, int n, const onnx::NodeProto& node,
                                          const std::vector<const TimeFact*>& in) {
  const NodeTime view{index_, path, n, node, in, length_};
  const size_t outputs = static_cast<size_t>(std::max(1, node.output_size()));
  const std::optional<LoopAnatomy> loop = ReadLoop(index_, path, n, CarrierSlots{});
  const auto every_output = [&](const TimeFact& fact) {
    threaded_.insert_or_assign({path, n}, fact);
    return std::vector<TimeFact>(outputs, fact);
  };
  if (!loop) return every_output(view.Mixed("is a loop rnnstate cannot read"));
  const LoopVerdict verdict = JudgeLoop(index_, *loop);
  const bool walks_time = std::any_of(verdict.times.begin(), verdict.times.end(), [&](const TimeRef& t) {
    return std::any_of(sources_.begin(), sources_.end(),
                       [&](const InputAxis& s) { return s.input == t.input && s.axis == t.axis; });
  });
  if (!walks_time || (!verdict.streamable && !verdict.fixed)) {
    return every_output(view.Mixed("reads values that change with time in a way rnnstate cannot follow" +
                                   (verdict.reason.empty() ? std::string() : " (" + verdict.reason + ")")));
  }
  recurrences_.push_back(RecurrenceTime{path, n, RecurrenceTime::Way::kOverTime});
  // A Loop's trip count and condition are the chunk's length and a test of it: the verdict proved them.
  const size_t skipped = std::min<size_t>(in.size(), loop->kind == ContainerKind::kLoop ? 2 : 0);
  std::vector<const TimeFact*> inputs(in.begin() + static_cast<std::ptrdiff_t>(skipped), in.end());
  for (const TimeFact* f : OuterFacts(path, n)) inputs.push_back(f);
  std::optional<TimeBreak> broken = FirstBreak(inputs);
  if (!broken && !verdict.streamable) broken = view.Break(verdict.reason);
  std::vector<TimeFact> out(outputs, TimeFact::Final(broken));
  threaded_.insert_or_assign({path, n}, out.front());  // a state carried out of the loop: its last step's
  const onnx::AttributeProto* scan_axes = FindAttribute(node, "scan_output_axes");
  const int states = loop->kind == ContainerKind::kLoop ? node.input_size() - 2 : ScanStateCount(node);
  for (size_t k = 0; k < outputs; ++k) {
    const int slot = static_cast<int>(k);
    if (IsScanOutput(loop->kind, node, slot)) {
      const int scan = slot - states;
      int64_t axis = scan_axes != nullptr && scan < scan_axes->ints_size() ? scan_axes->ints(scan) : 0;
      if (axis < 0) axis += view.OutRank(slot);
      out[k] = TimeFact::Frames(axis, broken);
    }
  }
  for (const CarriedInfo& carried : loop->carried) {
    const size_t slot = static_cast<size_t>(carried.slots.node_output);
    if (slot >= out.size()) continue;
    if (carried.role == CarriedRole::kPassThrough) {
      out[slot] = view.In(carried.slots.node_input);
    } else if (carried.role == CarriedRole::kCollector) {
      out[slot] = TimeFact::Frames(0, broken);  // the steps' values, one element per step
      out[slot].sequence = true;
    } else if (carried.role == CarriedRole::kCounter || carried.role == CarriedRole::kUnclassified) {
      out[slot] = view.Mixed("carries '" + carried.body_input + "' along the chunk's steps");
    }
  }
  return out;
}

}  // namespace rnnstate
