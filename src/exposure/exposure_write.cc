// TraceWrite (declared in exposure.h): from a state's final slot forward to the main-graph outputs that
// hold all of it, element for element.

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "exposure/exposure.h"
#include "exposure/view_forward.h"
#include "exposure/view_ops.h"
#include "graph/control_flow.h"
#include "graph/proto_access.h"
#include "values/shape_eval.h"

namespace rnnstate {

namespace {

constexpr size_t kMaxVisits = 512;

/// One value the final state has reached, with where its elements lie in it.
struct Reached {
  GraphPath path;
  std::string value;
  Holding held;
};

/// The map as text, so that a value reached with two maps (Concat(Y_h, Y_h)) is visited for each.
std::string MapKey(const ElementMap& map) {
  std::string key;
  for (size_t j = 0; j < map.rank(); ++j) {
    key += std::to_string(map.offset(j)) + ":";
    for (size_t a = 0; a < map.state().size(); ++a) key += std::to_string(map.coef(j, a)) + ",";
    key += ";";
  }
  return key;
}

class WriteWalk {
 public:
  /// `facts`: If branches that cannot run, when known; `boundary`: when set, a walk inside the branch at
  /// that path, which records the branch outputs it reaches instead of leaving through them.
  WriteWalk(const ModelIndex& index, int32_t source_type, const BranchFacts* facts = nullptr,
            std::optional<GraphPath> boundary = std::nullopt)
      : index_(index), source_type_(source_type), facts_(facts), boundary_(std::move(boundary)) {}

  /// The branch outputs a walk with a boundary reached (position -> what it holds there); a position
  /// reached with two different maps is left out.
  const std::map<int, Holding>& BranchOutputs() const { return branch_outputs_; }

  WriteTrace Run(Reached start) {
    start_path_ = start.path;
    start_value_ = start.value;
    std::vector<Reached> pending{std::move(start)};
    std::set<std::tuple<GraphPath, std::string, std::string>> seen;  // a value reached with one map
    while (!pending.empty() && seen.size() < kMaxVisits) {
      Reached at = std::move(pending.back());
      pending.pop_back();
      if (!seen.insert({at.path, at.value, MapKey(at.held.map)}).second) continue;
      Visit(at, pending);
    }
    if (!trace_.places.empty()) {
      trace_.broken.clear();
    } else if (trace_.broken.empty()) {
      trace_.broken = note_;
    }
    return trace_;
  }

 private:
  /// A path broke the proof: a view operator that does not pass the state on whole (the first one found).
  void Stop(const std::string& why) {
    if (trace_.broken.empty()) trace_.broken = why;
  }
  /// A path ended without breaking a proof (a use that is no view, a value used by nothing): said only
  /// when nothing broke.
  void Note(const std::string& why) {
    if (note_.empty()) note_ = why;
  }

  void Visit(const Reached& at, std::vector<Reached>& pending) {
    const GraphIndex& graph_index = index_.graph(at.path);
    const bool output = graph_index.outputs.count(at.value) > 0;
    if (output) LeaveGraph(at, graph_index.outputs.at(at.value), pending);
    const onnx::GraphProto& graph = *ResolveGraph(index_.model(), at.path);
    const Consumers& uses = graph_index.ConsumersOf(at.value);
    if (uses.empty() && !output) {
      Note((at.path == start_path_ && at.value == start_value_ ? "the final value '" : "'") + at.value +
           "' is used by nothing");
    }
    for (const Consumer& use : uses) {
      const onnx::NodeProto& node = graph.node(use.node);
      if (use.slot < 0) {  // read inside a subgraph: written out only through an If's outputs
        if (!ThroughBranches(at, node, use.node, pending)) {
          Note("'" + at.value + "' is only read inside " + Where(node, use.node));
        }
        continue;
      }
      Reached next = at;
      next.held.shape = MergeShapes(ShapeOf(index_, at.path, at.value), at.held.shape);
      const ForwardStep step = StepForward(index_, at.path, node, use.slot, next.held);
      if (step.output < 0 || step.output >= node.output_size()) {
        if (step.weak) {
          Note(Where(node, use.node) + step.why);
        } else if (!step.why.empty()) {
          Stop(Where(node, use.node) + step.why);
        } else {
          Note("'" + at.value + "' goes into " + Where(node, use.node) + ", which is not a view");
        }
        continue;
      }
      next.value = node.output(step.output);
      pending.push_back(std::move(next));
    }
  }

  /// `at` read inside the branches of the If `node` (node `index` of the graph `at` is in): the If's
  /// outputs that every branch that can run makes the same view of it hold it. False when none does.
  bool ThroughBranches(const Reached& at, const onnx::NodeProto& node, int index, std::vector<Reached>& pending) {
    if (ContainerKindOf(node, index_.onnx_opset()) != ContainerKind::kIf) return false;
    std::optional<std::map<int, Holding>> common;
    for (const char* branch : kIfBranches) {
      if (facts_ && facts_->Excludes(index_, at.path, index, branch)) continue;
      GraphPath inner = at.path;
      inner.push_back(GraphStep{index, branch, -1});
      WriteWalk walk(index_, source_type_, facts_, inner);
      Reached start = at;
      start.path = inner;
      walk.Run(std::move(start));
      const std::map<int, Holding>& reached = walk.BranchOutputs();
      if (!common) {
        common = reached;
        continue;
      }
      for (auto it = common->begin(); it != common->end();) {
        auto other = reached.find(it->first);
        const bool same = other != reached.end() && MapKey(other->second.map) == MapKey(it->second.map) &&
                          other->second.types == it->second.types;
        it = same ? std::next(it) : common->erase(it);
      }
    }
    if (!common || common->empty()) return false;
    for (const auto& [position, held] : *common) {
      const int slot = NodeOutputOfBodyOutput(ContainerKind::kIf, position);
      if (slot >= node.output_size() || node.output(slot).empty()) continue;
      pending.push_back(Reached{at.path, node.output(slot), held});
    }
    return true;
  }

  /// A graph output: the state leaves the main graph, or an If branch through the If's output.
  void LeaveGraph(const Reached& at, int position, std::vector<Reached>& pending) {
    if (boundary_ && at.path == *boundary_) {
      auto [it, added] = branch_outputs_.emplace(position, at.held);
      if (!added && MapKey(it->second.map) != MapKey(at.held.map)) ambiguous_.insert(position);
      for (int p : ambiguous_) branch_outputs_.erase(p);
      return;
    }
    if (at.path.empty()) {
      if (!Lossless(at.held.types, source_type_) || !Represents(ElemType(index_, {}, at.value), source_type_)) {
        Stop("output '" + at.value + "' holds it through a Cast that loses precision");
        return;
      }
      trace_.places.push_back(ElementPlace{at.value, at.held.map});
      return;
    }
    const GraphPath parent(at.path.begin(), at.path.end() - 1);
    const onnx::NodeProto& container = ResolveGraph(index_.model(), parent)->node(at.path.back().node);
    if (ContainerKindOf(container, index_.onnx_opset()) != ContainerKind::kIf) {
      Stop("it leaves " + Where(container, at.path.back().node) + " as a carried value");
      return;
    }
    const int slot = NodeOutputOfBodyOutput(ContainerKind::kIf, position);
    if (slot >= container.output_size()) return;
    Reached next = at;
    next.path = parent;
    next.value = container.output(slot);
    pending.push_back(std::move(next));
  }

  const ModelIndex& index_;
  const int32_t source_type_;
  const BranchFacts* facts_;
  const std::optional<GraphPath> boundary_;
  std::map<int, Holding> branch_outputs_;
  std::set<int> ambiguous_;
  WriteTrace trace_;
  std::string note_;
  GraphPath start_path_;
  std::string start_value_;
};

}  // namespace

WriteTrace TraceValueWrite(const ModelIndex& index, const std::string& value, const SymShape& shape,
                           int32_t elem_type) {
  return WriteWalk(index, elem_type).Run(Reached{GraphPath{}, value, ElementMap::Identity(shape), {elem_type}, shape});
}

WriteTrace TraceWrite(const ModelIndex& index, const RecurrentState& state) {
  return TraceWrite(index, state, StateShape(state));
}

WriteTrace TraceWrite(const ModelIndex& index, const RecurrentState& state, const SymShape& shape,
                      const BranchFacts* facts) {
  const onnx::NodeProto& owner = ResolveGraph(index.model(), state.owner.graph)->node(state.owner.node);
  if (state.final_slot >= owner.output_size() || owner.output(state.final_slot).empty()) {
    return WriteTrace{{}, "the final state is not produced"};
  }
  Reached start{state.owner.graph, owner.output(state.final_slot),
                Holding{ElementMap::Identity(shape), {state.elem_type}, shape}};
  return WriteWalk(index, state.elem_type, facts).Run(std::move(start));
}

}  // namespace rnnstate
