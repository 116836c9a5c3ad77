// OwnerNodes: each state's owner found among the analysis's nodes, in the producers' order or in any other.

#include "find/owner_nodes.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace rnnstate::owner_nodes_test {
namespace {

RecurrentNode NodeAt(GraphPath graph, int node) {
  RecurrentNode n;
  n.graph = std::move(graph);
  n.node = node;
  return n;
}

StateOwner OwnerAt(GraphPath graph, int node) {
  StateOwner owner;
  owner.graph = std::move(graph);
  owner.node = node;
  return owner;
}

const GraphPath kBody{GraphStep{3, "body", -1}};

TEST(OwnerNodes, FindsOwnersInTheNodesOrderAndInAnyOther) {
  const std::vector<RecurrentNode> nodes{NodeAt({}, 1), NodeAt({}, 4), NodeAt(kBody, 1), NodeAt({}, 9)};
  OwnerNodes owners(nodes);
  // In order, two states an owner, as the producers find them.
  for (int i : {0, 0, 1, 1, 2, 2, 3, 3}) EXPECT_EQ(owners.Of(OwnerAt(nodes[i].graph, nodes[i].node)), i);
  // Out of order: the same node index in another graph is another owner.
  EXPECT_EQ(owners.Of(OwnerAt(kBody, 1)), 2);
  EXPECT_EQ(owners.Of(OwnerAt({}, 1)), 0);
  EXPECT_EQ(owners.Of(OwnerAt({}, 9)), 3);
  EXPECT_EQ(owners.Of(OwnerAt({}, 4)), 1);
}

TEST(OwnerNodes, AnOwnerWithoutANodeIsAnError) {
  const std::vector<RecurrentNode> nodes{NodeAt({}, 1)};
  OwnerNodes owners(nodes);
  EXPECT_THROW(owners.Of(OwnerAt({}, 2)), std::out_of_range);
  EXPECT_THROW(owners.Of(OwnerAt(kBody, 1)), std::out_of_range);
  EXPECT_EQ(owners.Of(OwnerAt({}, 1)), 0);
}

}  // namespace
}  // namespace rnnstate::owner_nodes_test
