#pragma once

#include <map>
#include <stdexcept>
#include <utility>
#include <vector>

#include "find/recurrent_node.h"
#include "graph/graph_path.h"
#include "states/recurrent_state.h"

namespace rnnstate {

/// The index in the analysis's nodes of each state's owner (one node per owner). The producers find the
/// states owner by owner, in the nodes' order: the owner is looked for where the last one was found and
/// at the next node; a map, built on the first miss, answers any other order.
class OwnerNodes {
 public:
  explicit OwnerNodes(const std::vector<RecurrentNode>& nodes) : nodes_(nodes) {}

  /// The index of `owner`'s node; throws std::out_of_range when no node is the owner.
  int Of(const StateOwner& owner) {
    for (size_t i = last_; i < nodes_.size() && i <= last_ + 1; ++i) {
      if (nodes_[i].node == owner.node && nodes_[i].graph == owner.graph) {
        last_ = i;
        return static_cast<int>(i);
      }
    }
    if (by_owner_.empty()) {
      for (size_t i = 0; i < nodes_.size(); ++i) by_owner_[{nodes_[i].graph, nodes_[i].node}] = static_cast<int>(i);
    }
    return by_owner_.at({owner.graph, owner.node});
  }

 private:
  const std::vector<RecurrentNode>& nodes_;
  size_t last_ = 0;
  std::map<std::pair<GraphPath, int>, int> by_owner_;
};

}  // namespace rnnstate
