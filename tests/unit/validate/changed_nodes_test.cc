// Which nodes of a rewritten graph differ from the input's (changed_nodes.h): the input's nodes are
// matched in order within a look-ahead window, a node the rewrite added costs one look-up, and the search
// stops once the region passes the size its caller can use.

#include "validate/changed_nodes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rnnstate::changed_nodes_test {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

/// Adds `op` (outputs, then inputs) to `graph`.
void AddNode(onnx::GraphProto& graph, const std::string& op, const std::vector<std::string>& outputs,
             const std::vector<std::string>& inputs) {
  onnx::NodeProto* node = graph.add_node();
  node->set_op_type(op);
  for (const std::string& output : outputs) node->add_output(output);
  for (const std::string& input : inputs) node->add_input(input);
}

/// A chain of `length` Relu nodes v0 -> v1 -> ... from the graph input `v0`.
onnx::GraphProto Chain(int length) {
  onnx::GraphProto graph;
  for (int i = 0; i < length; ++i) {
    AddNode(graph, "Relu", {"v" + std::to_string(i + 1)}, {"v" + std::to_string(i)});
  }
  return graph;
}

std::optional<std::vector<int>> Region(const onnx::GraphProto& now, const onnx::GraphProto& was,
                                       size_t most = std::numeric_limits<size_t>::max()) {
  InterfaceChanges changes;
  std::unordered_map<std::string_view, int> constants;
  return FindRegionNodes(now, was, changes, constants, most);
}

TEST(SameMessage, IsEqualityOfTheSerializedBytes) {
  onnx::ValueInfoProto a;
  a.set_name("h");
  a.mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  a.mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_param("batch");
  onnx::ValueInfoProto b = a;
  EXPECT_TRUE(SameMessage(a, b));
  // The same size, one byte apart, deep inside.
  b.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("batcH");
  EXPECT_FALSE(SameMessage(a, b));
  b.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("batches");
  EXPECT_FALSE(SameMessage(a, b));
  EXPECT_TRUE(SameMessage(onnx::ValueInfoProto(), onnx::ValueInfoProto()));
  EXPECT_FALSE(SameMessage(a, onnx::ValueInfoProto()));
}

TEST(FindRegionNodes, NodesTheRewriteAddedAreTheRegionAndTheRestMatches) {
  const onnx::GraphProto was = Chain(100);
  onnx::GraphProto now;
  // More added nodes than the look-ahead window is long: added nodes do not move the window.
  for (int i = 0; i < 80; ++i) AddNode(now, "Constant", {"added" + std::to_string(i)}, {});
  for (const auto& node : was.node()) *now.add_node() = node;
  const auto region = Region(now, was);
  ASSERT_TRUE(region.has_value());
  ASSERT_EQ(region->size(), 80u);
  EXPECT_EQ(region->front(), 0);
  EXPECT_EQ(region->back(), 79);
}

TEST(FindRegionNodes, RemovedNodesAreSkippedWithinTheWindowOnly) {
  const onnx::GraphProto was = Chain(200);
  auto without = [&](int from, int count) {
    onnx::GraphProto now;
    for (int n = 0; n < was.node_size(); ++n) {
      if (n < from || n >= from + count) *now.add_node() = was.node(n);
    }
    return now;
  };
  // 3 nodes removed: everything after them still matches.
  EXPECT_THAT(*Region(without(10, 3), was), IsEmpty());
  // 70 removed, past the window (64): the nodes after them are taken as changed (never wrong, only slower).
  const auto region = Region(without(10, 70), was);
  ASSERT_TRUE(region.has_value());
  EXPECT_EQ(region->size(), 120u);
  EXPECT_EQ(region->front(), 10);
}

TEST(FindRegionNodes, NodesWhoseFirstOutputIsOmittedAreMatchedByAllTheirOutputs) {
  // Two LSTMs that omit Y: their first outputs are both "", so neither is found by it alone.
  onnx::GraphProto was;
  AddNode(was, "LSTM", {"", "h1"}, {"x", "w", "r"});
  AddNode(was, "LSTM", {"", "h2"}, {"h1", "w", "r"});
  AddNode(was, "Relu", {"y"}, {"h2"});
  onnx::GraphProto now = was;
  EXPECT_THAT(*Region(now, was), IsEmpty());
  now.mutable_node(1)->set_input(0, "x");  // the second one changed
  EXPECT_THAT(*Region(now, was), ElementsAre(1));
}

TEST(FindRegionNodes, TheSameOutputsOutsideTheWindowAreNotAMatch) {
  onnx::GraphProto was = Chain(100);
  onnx::GraphProto now;
  *now.add_node() = was.node(99);  // the input's last node, first: 99 nodes ahead of the window's start
  for (int n = 0; n < 99; ++n) *now.add_node() = was.node(n);
  const auto region = Region(now, was);
  ASSERT_TRUE(region.has_value());
  EXPECT_THAT(*region, ElementsAre(0));
}

TEST(FindRegionNodes, StopsOnceTheRegionHoldsMoreThanItsCallerTakes) {
  const onnx::GraphProto was = Chain(10);
  onnx::GraphProto now;
  for (int i = 0; i < 5; ++i) AddNode(now, "Constant", {"added" + std::to_string(i)}, {});
  for (const auto& node : was.node()) *now.add_node() = node;
  EXPECT_FALSE(Region(now, was, 4).has_value());
  ASSERT_TRUE(Region(now, was, 5).has_value());
  EXPECT_EQ(Region(now, was, 5)->size(), 5u);
}

}  // namespace
}  // namespace rnnstate::changed_nodes_test
