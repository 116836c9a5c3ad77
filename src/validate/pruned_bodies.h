#pragma once
/// \file
/// The subgraphs of a changed node cut down to what changed in them, as changed_region.h cuts the main
/// graph: a rewrite that threads a state out of an If or Loop nested D levels deep changes each of the D
/// nodes holding it, and their bodies would otherwise take the whole model into the region.
///
///   If (changed)                          If (pruned copy)
///     then_branch: A = Relu (x)             then_branch: Lp = Loop (...)  (pruned the same way)
///                  ... 5,000 nodes ...                   c = Identity (ci)  (defines a body output)
///                  Lp = Loop (...)  (changed)
///
/// Why the pruned body stands for the whole one: the argument of changed_region.h, applied to each body
/// against the same body of the input, with two additions. A body value the kept nodes read but an
/// unchanged node of the body defines becomes an input of the region's main graph, typed as the input's
/// inference typed it (an outer-scope name to the body: onnx's checker and inference read outer names
/// through the lexical scope, and a name defined once in the whole model means one value wherever it is
/// read — NamesDefinedOnce). A body output an unchanged node defines brings that node along (a body must
/// define its outputs), and a Constant node the kept nodes read comes along (inference reads its value).
/// The values the kept changed nodes define that the input had are compared after inference, as the main
/// graph's are (changed_region.h: ChangedRegion::kept).

#include <google/protobuf/arena.h>
#include <onnx/onnx_pb.h>

#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graph/shape_inference.h"

namespace rnnstate {

/// What the pruned bodies hold, over every depth.
struct BodyValues {
  std::unordered_set<std::string_view> defined;           ///< values the bodies' changed nodes define
  std::unordered_set<std::string_view> constant_outputs;  ///< of the bodies' changed Constant nodes
};

/// Cuts the subgraphs of a rewritten graph's changed nodes down to what changed in them, against the
/// input's inferred copy (InferredModel), allocating the copies on an arena.
class BodyPruner {
 public:
  /// `declared` is InferredModel::declared_in_subgraphs; `changed`, the graph inputs and initializers of the
  /// main graph the rewrite changed (every reader of one, at any depth, is kept).
  BodyPruner(const std::unordered_map<const onnx::GraphProto*, int>& declared,
             const std::unordered_set<std::string_view>& changed, google::protobuf::Arena& arena)
      : declared_(declared), changed_(changed), arena_(arena) {}

  /// The nodes `region` of `now` (changed_region.h's region nodes), each a pruned copy where it holds
  /// subgraphs and `was` has its counterpart (the node of the same type defining one of its outputs),
  /// else itself.
  std::vector<const onnx::NodeProto*> Prune(const onnx::GraphProto& now, const onnx::GraphProto& was,
                                            const std::vector<int>& region);

  /// What the pruned bodies hold (views into the rewritten model).
  const BodyValues& values() const { return values_; }

 private:
  using NameSet = std::unordered_set<std::string_view>;
  /// A copy of `now` with its subgraphs pruned against those of `was`; nullptr when one cannot be.
  const onnx::NodeProto* PruneNode(const onnx::NodeProto& now, const onnx::NodeProto& was, const NameSet& changed);
  /// Fills `into` with `now` cut down against `was`; false when it cannot be (an unchanged node with a
  /// subgraph would have to be kept, or the input's declarations of `was` are unknown).
  bool PruneGraph(const onnx::GraphProto& now, const onnx::GraphProto& was, const NameSet& changed,
                  onnx::GraphProto& into);

  const std::unordered_map<const onnx::GraphProto*, int>& declared_;
  const NameSet& changed_;
  google::protobuf::Arena& arena_;
  BodyValues values_;
};

/// True when no name is defined twice anywhere below `graph` (a graph's input and initializer may share
/// one): then a name means one value in every graph.
bool NamesDefinedOnce(const onnx::GraphProto& graph);

}  // namespace rnnstate
