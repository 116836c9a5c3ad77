#include "loops/loop_chunks.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "graph/control_flow.h"
#include "graph/proto_access.h"
#include "ops/axis_map.h"
#include "ops/op_semantics.h"
#include "values/constant_value.h"

namespace rnnstate {

namespace {

constexpr int kMaxFlowDepth = 64;

/// `axis` made non-negative for `rank` (-1 when it cannot be).
int64_t AxisIndex(int64_t axis, int rank) { return NormalizeAxis(axis, rank).value_or(-1); }

/// A value carrying time along `axis` (of its `rank`, -1 unknown); for a sequence, its positions are the
/// steps and `rank` is its elements'.
struct Flow {
  GraphPath graph;
  std::string value;
  int64_t axis = 0;
  int rank = -1;
  bool sequence = false;
};

/// The forward half: follows what leaves the loop along time to the graph outputs.
class TimeFlow {
 public:
  TimeFlow(const ModelIndex& index, ChunkDependence& dependence, const DownstreamLoopJudge& downstream)
      : index_(index), dependence_(dependence), downstream_(downstream) {}

  /// "" when `flow` reaches graph outputs through time-local operators only, else why not.
  std::string Follow(const Flow& flow, int depth = 0) {
    if (depth > kMaxFlowDepth) return "'" + flow.value + "' is followed too deep";
    if (!seen_.insert({ValueRef{flow.graph, flow.value}, flow.axis}).second) return "";
    const GraphIndex& graph = index_.graph(flow.graph);
    if (auto output = graph.outputs.find(flow.value); output != graph.outputs.end() && !flow.graph.empty()) {
      // Out of an If branch: the If's output, when the branch taken is the same in every chunk.
      const GraphStep& step = flow.graph.back();
      const GraphPath parent(flow.graph.begin(), flow.graph.end() - 1);
      const onnx::NodeProto& owner = ResolveGraph(index_.model(), parent)->node(step.node);
      const ContainerKind kind = ContainerKindOf(owner, index_.onnx_opset());
      const int slot = NodeOutputOfBodyOutput(kind, output->second);
      if (kind != ContainerKind::kIf || slot >= owner.output_size()) {
        return "'" + flow.value + "' leaves through the body of " + DescribeNode(index_.model(), parent, step.node);
      }
      if (std::string why = dependence_.Of(parent, IfCondition(owner)); !why.empty()) {
        return DescribeNode(index_.model(), parent, step.node) + " picks its branch from " + why;
      }
      Flow next = flow;
      next.graph = parent;
      next.value = owner.output(slot);
      if (std::string why = Follow(next, depth + 1); !why.empty()) return why;
    }
    const onnx::GraphProto& proto = *ResolveGraph(index_.model(), flow.graph);
    for (const Consumer& consumer : graph.ConsumersOf(flow.value)) {
      const std::string what = DescribeNode(index_.model(), flow.graph, consumer.node);
      if (consumer.slot < 0) {
        const std::optional<std::string> why = StepByStepIn(flow, consumer.node);
        if (!why) return "'" + flow.value + "' is read inside a subgraph of " + what;
        if (!why->empty()) return "'" + flow.value + "' is read step by step by " + what + ", which " + *why;
        continue;
      }
      std::vector<Flow> next;
      if (std::string why = Step(flow, proto.node(consumer.node), consumer.slot, &next); !why.empty()) {
        return "'" + flow.value + "' (the loop's steps along axis " + std::to_string(flow.axis) + ") reaches " + what +
               ", which " + why;
      }
      for (const Flow& n : next) {
        if (std::string why = Follow(n, depth + 1); !why.empty()) return why;
      }
    }
    return "";
  }

 private:
  /// When the Loop `node` of the flow's graph reads the flowing value only at its iteration index along
  /// the time axis (its step t is computed from step t: tf2onnx's stacked Keras layers): "" when that
  /// loop streams (or is made to by `--time-axis`; what it does with each step is its own verdict's
  /// business), else why it does not. nullopt when it reads the value otherwise.
  std::optional<std::string> StepByStepIn(const Flow& flow, int node) {
    const std::optional<LoopAnatomy> loop = ReadLoop(index_, flow.graph, node, CarrierSlots{});
    if (!loop || loop->kind != ContainerKind::kLoop) return std::nullopt;
    std::vector<IndexedRead> reads = loop->iteration.reads;
    for (const CarriedInfo& c : loop->carried) {
      if (c.role == CarriedRole::kCounter && c.start == 0 && c.step == 1)
        reads.insert(reads.end(), c.uses.reads.begin(), c.uses.reads.end());
    }
    std::set<int> at_index;
    for (const IndexedRead& read : reads) {
      if (read.data == flow.value && AxisIndex(read.axis, flow.rank) == flow.axis) at_index.insert(read.node);
    }
    for (const Consumer& use : index_.graph(loop->body).ConsumersOf(flow.value)) {
      if (use.slot != 0 || !at_index.count(use.node)) return std::nullopt;
    }
    const std::string why = downstream_(*loop);
    return why.empty() ? "" : "does not stream (" + why + ")";
  }

  /// True when the Slice `node` keeps only the last step of the time axis `t` (`starts -1`, `ends` past
  /// any length, step 1): each call returns its chunk's last step, and the last call the one run's.
  bool LastStep(const Flow& flow, const onnx::NodeProto& node, const std::vector<int64_t>& axes) {
    const auto starts = ConstantIntegers(index_, flow.graph, node.input(1));
    const auto ends = node.input_size() > 2 ? ConstantIntegers(index_, flow.graph, node.input(2)) : std::nullopt;
    const auto steps = node.input_size() > 4 && !node.input(4).empty()
                           ? ConstantIntegers(index_, flow.graph, node.input(4))
                           : std::optional<std::vector<int64_t>>(std::vector<int64_t>(axes.size(), 1));
    if (!starts || !ends || !steps || starts->size() != axes.size() || ends->size() != axes.size() ||
        steps->size() != axes.size()) {
      return false;
    }
    for (size_t k = 0; k < axes.size(); ++k) {
      if (NormalizeAxis(axes[k], flow.rank) != flow.axis) continue;
      return (*starts)[k] == -1 && (*ends)[k] >= std::numeric_limits<int32_t>::max() && (*steps)[k] == 1;
    }
    return false;
  }

  /// True when the Shape `node` of the flowing value is read only for the lengths of axes other than
  /// the time axis: `Gather(s, k)` or `Slice(s, b, e)` of constant positions (Keras sizes a stacked
  /// layer's zeros from `tf.shape(inputs)[0:1]`, the batch).
  bool ShapeReadsOtherAxes(const Flow& flow, const onnx::NodeProto& node) {
    const int64_t start = IntAttribute(node, "start", 0);
    if (start < 0 || FindAttribute(node, "end") != nullptr || node.output_size() != 1) return false;
    const onnx::GraphProto& proto = *ResolveGraph(index_.model(), flow.graph);
    for (const Consumer& use : index_.graph(flow.graph).ConsumersOf(node.output(0))) {
      if (use.slot != 0) return false;
      const onnx::NodeProto& pick = proto.node(use.node);
      std::vector<int64_t> positions;
      if (IsOnnxOp(pick, {"Gather"}) && AxisAttribute(pick, index_.onnx_opset()) == 0 && pick.input_size() == 2) {
        positions = ConstantIntegers(index_, flow.graph, pick.input(1)).value_or(std::vector<int64_t>{-1});
      } else if (IsOnnxOp(pick, {"Slice"}) && pick.input_size() >= 3 && pick.input_size() <= 4) {
        const std::optional<int64_t> begin = ConstantScalar(index_, flow.graph, pick.input(1));
        const std::optional<int64_t> end = ConstantScalar(index_, flow.graph, pick.input(2));
        const bool axis_zero = pick.input_size() < 4 || ConstantScalar(index_, flow.graph, pick.input(3)) == 0;
        if (!begin || !end || *begin < 0 || *end < *begin || !axis_zero) return false;
        for (int64_t e = *begin; e < *end && start + e < std::max(flow.rank, 0); ++e) positions.push_back(e);
        if (flow.rank < 0) return false;
      } else {
        return false;
      }
      for (int64_t e : positions) {
        if (e < 0 || start + e == flow.axis) return false;
      }
    }
    return true;
  }

  /// "" when `name` is the same in every chunk or is the flowing value itself.
  bool Invariant(const Flow& flow, const std::string& name) {
    return name.empty() || name == flow.value || dependence_.Of(flow.graph, name).empty();
  }

  bool OthersInvariant(const Flow& flow, const onnx::NodeProto& node, int slot) {
    for (int k = 0; k < node.input_size(); ++k) {
      if (k != slot && !Invariant(flow, node.input(k))) return false;
    }
    return true;
  }

  /// The outputs of `node` (reading `flow` at input `slot`) that carry time, or why it may mix steps: MapAxis
  /// says where time goes; each case adds what keeps steps apart (other operands steady, time not mixed).
  std::string Step(const Flow& flow, const onnx::NodeProto& node, int slot, std::vector<Flow>* next) {
    auto out = [&](int k, int64_t axis, int out_rank, bool sequence = false) -> std::string {
      if (k < node.output_size() && !node.output(k).empty())
        next->push_back(Flow{flow.graph, node.output(k), axis, out_rank, sequence});
      return "";
    };
    const int64_t t = flow.axis;
    const int rank = flow.rank;
    if (!IsOnnxDomain(node.domain())) return "is not a standard operator";
    if (flow.sequence) return SequenceStep(flow, node, out);
    const std::optional<AxisOf> moved =
        MapAxis(index_, flow.graph, node, AxisOf{t, rank}, AxisDirection::kForward, AxisPort{slot, 0});
    auto moved_out = [&](int k) { return out(k, moved->axis, moved->rank); };
    const OpSemantics* row = FindOpSemantics(node, index_.onnx_opset());
    switch (row == nullptr ? AxisEffect::kNone : row->effect) {
      case AxisEffect::kSame:
        if (slot != 0 || !OthersInvariant(flow, node, 0)) return "combines it with values that differ per chunk";
        return moved_out(0);
      case AxisEffect::kBroadcast: {
        int out_rank = rank;
        for (int k = 0; k < node.input_size(); ++k) {
          if (node.input(k) == flow.value) continue;
          if (!Invariant(flow, node.input(k))) return "combines it with values that differ per chunk";
          out_rank = std::max(out_rank, RankOf(index_, flow.graph, node.input(k)));
        }
        return moved ? moved_out(0) : "broadcasts it with an operand of rank " + std::to_string(out_rank);
      }
      case AxisEffect::kPermute:
      case AxisEffect::kRemoveUnit:
      case AxisEffect::kInsertUnit:
      case AxisEffect::kReshape:
      case AxisEffect::kFlatten:
        if (slot != 0) return "changes the axes in a way not followed";
        return moved ? moved_out(0) : "moves, merges or drops the time axis in a way not followed";
      case AxisEffect::kNormalize:
        // The normalizations along a named `axis` (Softmax and its kin, LayerNormalization).
        if (!NamesOneAxis(*row)) break;
        if (slot != 0 || !OthersInvariant(flow, node, 0) || MixesNamedAxis(*row, node, t, rank)) {
          return "normalizes over the time axis";
        }
        return moved_out(0);
      case AxisEffect::kReduce: {
        const std::optional<std::vector<int64_t>> axes = NamedAxes(index_, flow.graph, node);
        if (!axes || axes->empty()) return "reduces over every axis, time included";
        return moved ? moved_out(0) : "reduces over the time axis";
      }
      case AxisEffect::kMatMul:
      case AxisEffect::kGemm:
        if (slot != 0 || !OthersInvariant(flow, node, 0) || !moved) {
          return "multiplies along the time axis, or by values that differ per chunk";
        }
        return moved_out(0);
      case AxisEffect::kGather:
        if (slot != 0 || !moved || !OthersInvariant(flow, node, 0)) {
          return "gathers along the time axis, or at indices that differ per chunk";
        }
        return moved_out(0);
      case AxisEffect::kSplit:
        if (slot != 0 || !moved || !OthersInvariant(flow, node, 0)) return "splits the time axis";
        for (int k = 1; k < node.output_size(); ++k) moved_out(k);
        return moved_out(0);
      case AxisEffect::kCut:
        return SliceStep(flow, node, slot, out);
      default:
        break;
    }
    if (node.op_type() == "Shape") {
      if (!ShapeReadsOtherAxes(flow, node)) return "reads the length of the time axis";
      return "";  // lengths of other axes: the same in every chunk
    }
    return "may mix time steps (not a time-local operator)";
  }

  using Out = std::function<std::string(int, int64_t, int, bool)>;

  /// A sequence of the loop's steps: passed on by Identity, concatenated by ConcatFromSequence.
  std::string SequenceStep(const Flow& flow, const onnx::NodeProto& node, const Out& out) {
    if (node.op_type() == "Identity") return out(0, flow.axis, flow.rank, true);
    if (node.op_type() != "ConcatFromSequence") return "reads the collected steps otherwise than concatenating them";
    const bool new_axis = IntAttribute(node, "new_axis", 0) != 0;
    const int out_rank = flow.rank < 0 ? -1 : flow.rank + (new_axis ? 1 : 0);
    const int64_t axis = AxisIndex(AxisAttribute(node, index_.onnx_opset()), out_rank);
    if (axis < 0) return "concatenates along an axis of unknown position";
    return out(0, axis, out_rank, false);
  }

  /// True when the normalization `node` of `row` combines along time axis `t`: its named axis alone
  /// (kNamedAxes) or it and every later axis (kNamedAxisOnward); an axis of unknown position does.
  bool MixesNamedAxis(const OpSemantics& row, const onnx::NodeProto& node, int64_t t, int rank) const {
    const int64_t axis = AxisIndex(AxisAttribute(node, index_.onnx_opset()), rank);
    return axis < 0 || (row.mixing == AxisMixing::kNamedAxes ? axis == t : t >= axis);
  }

  /// A Slice: the time axis passes when the Slice cuts other axes only (or keeps the last step alone).
  std::string SliceStep(const Flow& flow, const onnx::NodeProto& node, int slot, const Out& out) {
    std::optional<std::vector<int64_t>> axes = node.input_size() > 3 && !node.input(3).empty()
                                                   ? ConstantIntegers(index_, flow.graph, node.input(3))
                                                   : std::nullopt;
    if (slot != 0 || !OthersInvariant(flow, node, 0)) return "slices at bounds that differ per chunk";
    if (!axes) {
      const auto starts = ConstantIntegers(index_, flow.graph, node.input(1));
      if (!starts) return "slices axes not known";
      axes.emplace();
      for (size_t a = 0; a < starts->size(); ++a) axes->push_back(static_cast<int64_t>(a));
    }
    for (int64_t a : *axes) {
      const std::optional<int64_t> sliced = NormalizeAxis(a, flow.rank);
      if (sliced && *sliced == flow.axis && LastStep(flow, node, *axes)) return "";  // nothing flows on along time
      if (!sliced || *sliced == flow.axis) return "slices the time axis";
    }
    return out(0, flow.axis, flow.rank, false);
  }

  const ModelIndex& index_;
  ChunkDependence& dependence_;
  const DownstreamLoopJudge& downstream_;
  std::set<std::pair<ValueRef, int64_t>> seen_;
};

/// The rank of body output `k`, declared or inferred (-1 unknown).
int BodyRank(const ModelIndex& index, const LoopAnatomy& loop, int k) {
  const onnx::GraphProto& body = *ResolveGraph(index.model(), loop.body);
  return k < body.output_size() ? RankOf(index, loop.body, body.output(k).name()) : -1;
}

/// Why the body's use of outer value `name` (a per-step read, or a chunked input) is more than reading
/// it at the iteration index and reading the lengths of axes other than `time`, or "".
std::string BodyUse(const ModelIndex& index, const LoopAnatomy& loop, const std::string& name, int64_t time,
                    const std::set<int>& reads) {
  const GraphIndex& body = index.graph(loop.body);
  const onnx::GraphProto& proto = *ResolveGraph(index.model(), loop.body);
  for (const Consumer& consumer : body.ConsumersOf(name)) {
    const std::string what = DescribeNode(index.model(), loop.body, consumer.node);
    if (consumer.slot == 0 && reads.count(consumer.node)) continue;
    const onnx::NodeProto& node = proto.node(consumer.node);
    if (consumer.slot < 0 || !IsOnnxOp(node, {"Shape"})) {
      return "the body reads '" + name + "' whole (" + what + "), not only at the iteration index";
    }
    // Shape(x): only the lengths of the other axes (the batch) may be read.
    const int rank = RankOf(index, loop.graph, name);
    const int64_t start = AxisIndex(IntAttribute(node, "start", 0), rank);
    for (const Consumer& use : body.ConsumersOf(node.output(0))) {
      const onnx::NodeProto& pick = proto.node(use.node);
      std::optional<std::vector<int64_t>> picked;
      if (use.slot == 0 && IsOnnxOp(pick, {"Gather"}) && AxisAttribute(pick, index.onnx_opset()) == 0)
        picked = ConstantIntegers(index, loop.body, pick.input(1));
      bool other_axes = picked && start >= 0;
      for (int64_t e : picked.value_or(std::vector<int64_t>{})) other_axes &= e >= 0 && start + e != time;
      if (!other_axes) {
        return "the body reads the length of '" + name + "' along the time axis (" + what + " -> " +
               DescribeNode(index.model(), loop.body, use.node) + "): each chunk sees its own";
      }
    }
  }
  return "";
}

}  // namespace

std::string ChunkProblem(const ModelIndex& index, const LoopAnatomy& loop, const ChunkedInputs& chunked,
                         const ProvenUses& proven, const DownstreamLoopJudge& downstream) {
  const onnx::NodeProto& node = ResolveGraph(index.model(), loop.graph)->node(loop.node);
  ChunkDependence dependence(index, loop.graph, loop.node, chunked, /*first_chunk=*/false);
  // A state's initial value is read on the first call only, where the first frames are the run's own.
  ChunkDependence first(index, loop.graph, loop.node, chunked, /*first_chunk=*/true);
  for (const CarriedInfo& c : loop.carried) {
    ChunkDependence& rule = c.role == CarriedRole::kState ? first : dependence;
    if (std::string why = rule.Of(loop.graph, node.input(c.slots.node_input)); !why.empty()) {
      return "the initial value of carried '" + c.body_input + "' depends on " + why;
    }
  }
  // The per-step reads' data, with the axis they are read along.
  std::map<std::string, int64_t> per_step;
  const onnx::GraphProto& body = *ResolveGraph(index.model(), loop.body);
  for (int n : proven.reads) {
    const onnx::NodeProto& read = body.node(n);
    per_step[read.input(0)] =
        AxisIndex(AxisAttribute(read, index.onnx_opset()), RankOf(index, loop.graph, read.input(0)));
  }
  for (const std::string& name : SubgraphReferences(node)) {
    if (proven.bounds.count(name)) continue;
    const ResolvedName resolved = index.Resolve(loop.graph, name);
    const bool main_input = resolved.graph.empty() && (resolved.producer.kind == Producer::Kind::kGraphInput ||
                                                       resolved.producer.kind == Producer::Kind::kDefaultedInput);
    std::optional<int64_t> time;
    if (auto read = per_step.find(name); read != per_step.end()) time = read->second;
    if (auto cut = chunked.time_axes.find(name); !time && main_input && cut != chunked.time_axes.end()) {
      time = cut->second;
    }
    if (time) {
      if (std::string why = BodyUse(index, loop, name, *time, proven.reads); !why.empty()) return why;
    } else if (std::string why = dependence.Of(loop.graph, name); !why.empty()) {
      return "the body reads '" + name + "', which depends on " + why;
    }
  }
  // What leaves along time: scan outputs (a Loop's on axis 0, a Scan's on its scan_output_axes), and the
  // sequences collectors fill.
  TimeFlow flow(index, dependence, downstream);
  const int carried = static_cast<int>(loop.carried.size());
  const onnx::AttributeProto* axes = FindAttribute(node, "scan_output_axes");
  for (int k = carried; k < node.output_size(); ++k) {
    if (node.output(k).empty()) continue;
    const int rank = BodyRank(index, loop, BodyOutputOfNodeOutput(loop.kind, k));
    const int out_rank = rank < 0 ? -1 : rank + 1;
    int64_t axis = 0;
    if (loop.kind == ContainerKind::kScan9 && axes != nullptr && k - carried < axes->ints_size()) {
      axis = AxisIndex(axes->ints(k - carried), out_rank);
      if (axis < 0)
        return "scan output " + std::to_string(k - carried) + " is written along an axis of unknown position";
    }
    if (std::string why = flow.Follow(Flow{loop.graph, node.output(k), axis, out_rank, false}); !why.empty())
      return why;
  }
  for (const CarriedInfo& c : loop.carried) {
    if (c.role != CarriedRole::kCollector || c.slots.node_output >= node.output_size()) continue;
    const std::string& final_value = node.output(c.slots.node_output);
    if (final_value.empty()) continue;
    // The elements' rank: what the body inserts.
    int rank = -1;
    const ResolvedName inserted = index.Resolve(loop.body, c.body_output);
    if (inserted.producer.kind == Producer::Kind::kNode) {
      const onnx::NodeProto& insert = body.node(inserted.producer.index);
      if (insert.input_size() > 1) rank = RankOf(index, loop.body, insert.input(1));
    }
    if (std::string why = flow.Follow(Flow{loop.graph, final_value, 0, rank, true}); !why.empty()) return why;
  }
  return "";
}

}  // namespace rnnstate
