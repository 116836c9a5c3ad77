#pragma once
/// \file
/// Names of owners as metadata records them. Unnamed owners of states that will be
/// rewritten (and unnamed containers on the way to them) get stable names, and graph paths are spelled
/// with those names, so that metadata written before the rewrite still matches the model after it
/// (where node indices have moved).

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "find/analysis.h"
#include "graph/graph_path.h"
#include "graph/naming.h"
#include "rnnstate/metadata.h"
#include "rnnstate/options.h"
#include "states/recurrent_state.h"

namespace rnnstate {

/// New names by (graph path, node index).
using NodeNames = std::map<std::pair<GraphPath, int>, std::string>;

/// True when `options` select `state` for rewriting (see PlanOptions::node_filter).
bool Selected(const PlanOptions& options, const RecurrentState& state);

/// Names the unnamed owners of the selected, rewritable states and the unnamed containers on the way
/// to them, and the unnamed windows whose context a state carries; the names are allocated from `names`
/// (unique in the model).
NodeNames NameUnnamedNodes(const ModelIndex& index, const Analysis& analysis, const PlanOptions& options,
                           NameAllocator& names);

/// Graph paths and owner names after renaming.
class PathNamer {
 public:
  PathNamer(const onnx::ModelProto& model, const NodeNames& names) : model_(model), names_(names) {}

  /// "main/Loop_3:body", with renamed nodes under their new names.
  std::string Name(const GraphPath& path) const;
  /// The steps of `path` for metadata: each container by its name after renaming, and the attribute.
  std::vector<PathStep> Steps(const GraphPath& path) const;
  /// The owner's name after renaming.
  std::string OwnerName(const StateOwner& owner) const;

 private:
  const onnx::ModelProto& model_;
  const NodeNames& names_;
};

}  // namespace rnnstate
