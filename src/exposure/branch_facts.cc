#include "exposure/branch_facts.h"

#include <set>

#include "graph/control_flow.h"
#include "graph/proto_access.h"
#include "ops/op_semantics.h"
#include "states/recurrent_ops.h"

namespace rnnstate {

namespace {

constexpr int kMaxFactDepth = 16;

/// A condition value with Casts and Identities stripped, where it is defined.
std::pair<GraphPath, std::string> ConditionRoot(const ModelIndex& index, const GraphPath& path, std::string value) {
  ResolvedName at = index.Resolve(path, value);
  for (int depth = 0; depth < kMaxFactDepth && at.node != nullptr && at.node->input_size() > 0 &&
                      IsOnnxOp(*at.node, {"Cast", "Identity"});
       ++depth) {
    value = at.node->input(0);
    at = index.Resolve(at.graph, value);
  }
  return {at.graph, value};
}

/// The change of rank from input 0 to output 0 of a rank-preserving or unit-axis view, or nullopt.
std::optional<int> RankChange(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node) {
  if (IsElementwiseUnary(node)) return 0;
  if (!IsOnnxOp(node, {"Squeeze", "Unsqueeze"})) return std::nullopt;
  const std::optional<std::vector<int64_t>> axes = AxesOperand(index, path, node);
  if (!axes || axes->empty()) return std::nullopt;  // Squeeze without axes: the rank depends on the data
  const int count = static_cast<int>(axes->size());
  return node.op_type() == "Unsqueeze" ? count : -count;
}

class Finder {
 public:
  explicit Finder(const ModelIndex& index) : index_(index) {}

  /// The ranks `value` can have (empty: not known), through If branches and unit-axis views.
  std::set<int> PossibleRanks(const GraphPath& path, const std::string& value, int depth) const {
    if (const int rank = RankOf(index_, path, value); rank >= 0) return {rank};
    const ResolvedName at = index_.Resolve(path, value);
    if (depth > kMaxFactDepth || at.node == nullptr || at.node->input_size() == 0) return {};
    const onnx::NodeProto& node = *at.node;
    if (ContainerKindOf(node, index_.onnx_opset()) == ContainerKind::kIf) {
      std::set<int> ranks;
      for (const char* branch : kIfBranches) {
        const onnx::GraphProto* body = GraphAttribute(node, branch);
        const int position = BodyOutputOfNodeOutput(ContainerKind::kIf, at.producer.slot);
        if (body == nullptr || position >= body->output_size()) return {};
        GraphPath inner = at.graph;
        inner.push_back(GraphStep{at.producer.index, branch, -1});
        const std::set<int> some = PossibleRanks(inner, body->output(position).name(), depth + 1);
        if (some.empty()) return {};
        ranks.insert(some.begin(), some.end());
      }
      return ranks;
    }
    const std::optional<int> change = RankChange(index_, at.graph, node);
    if (!change) return {};
    std::set<int> ranks;
    for (int r : PossibleRanks(at.graph, node.input(0), depth + 1)) {
      if (r + *change >= 0) ranks.insert(r + *change);
    }
    return ranks;
  }

  /// `value` (seen from `path`) must have rank `rank` for the call to succeed.
  void RequireRank(const GraphPath& path, const std::string& value, int rank, int depth) {
    const ResolvedName at = index_.Resolve(path, value);
    if (depth > kMaxFactDepth || rank < 0 || at.node == nullptr || at.node->input_size() == 0) return;
    const onnx::NodeProto& node = *at.node;
    if (ContainerKindOf(node, index_.onnx_opset()) == ContainerKind::kIf) {
      const int position = BodyOutputOfNodeOutput(ContainerKind::kIf, at.producer.slot);
      for (const char* branch : kIfBranches) {
        const onnx::GraphProto* body = GraphAttribute(node, branch);
        if (body == nullptr || position >= body->output_size()) return;
        GraphPath inner = at.graph;
        inner.push_back(GraphStep{at.producer.index, branch, -1});
        const std::string& out = body->output(position).name();
        const std::set<int> ranks = PossibleRanks(inner, out, 0);
        if (!ranks.empty() && !ranks.count(rank)) {
          // This branch cannot run: the condition has the value that takes the other.
          Record(ConditionRoot(index_, at.graph, IfCondition(node)), std::string(branch) != kThenBranch);
        } else {
          RequireRank(inner, out, rank, depth + 1);
        }
      }
      return;
    }
    if (const std::optional<int> change = RankChange(index_, at.graph, node)) {
      RequireRank(at.graph, node.input(0), rank - *change, depth + 1);
    }
  }

  void Record(const std::pair<GraphPath, std::string>& condition, bool value) {
    if (conflicting_.count(condition)) return;
    auto [it, added] = known_.emplace(condition, value);
    if (!added && it->second != value) {
      // Both branches contradicted: the model cannot run at all there; know nothing.
      known_.erase(it);
      conflicting_.insert(condition);
    }
  }

  std::map<std::pair<GraphPath, std::string>, bool> known_;

 private:
  const ModelIndex& index_;
  std::set<std::pair<GraphPath, std::string>> conflicting_;
};

}  // namespace

BranchFacts BranchFacts::Find(const ModelIndex& index) {
  Finder finder(index);
  for (const auto& [path, graph] : index.graphs()) {
    const onnx::GraphProto& proto = *ResolveGraph(index.model(), path);
    for (int n = 0; n < proto.node_size(); ++n) {
      const onnx::NodeProto& node = proto.node(n);
      const RecurrentOp* op = FindRecurrentOp(node);
      if (op == nullptr) continue;
      // X and every input whose shape the spec fixes (the states among them) have the spec's rank.
      if (op->x_slot < node.input_size()) finder.RequireRank(path, node.input(op->x_slot), 3, 0);
      for (const SpecShape& shape : op->shapes) {
        if (shape.slot == op->initial_h_slot || shape.slot == op->initial_c_slot) {
          if (shape.slot < node.input_size() && !node.input(shape.slot).empty()) {
            finder.RequireRank(path, node.input(shape.slot), static_cast<int>(shape.dims.size()), 0);
          }
        }
      }
    }
  }
  BranchFacts facts;
  facts.known_ = std::move(finder.known_);
  return facts;
}

bool BranchFacts::Excludes(const ModelIndex& index, const GraphPath& path, int node, const std::string& branch) const {
  if (known_.empty()) return false;
  const onnx::NodeProto& select = ResolveGraph(index.model(), path)->node(node);
  if (ContainerKindOf(select, index.onnx_opset()) != ContainerKind::kIf) return false;
  auto fact = known_.find(ConditionRoot(index, path, IfCondition(select)));
  if (fact == known_.end()) return false;
  return branch != IfBranchTaken(fact->second);
}

}  // namespace rnnstate
