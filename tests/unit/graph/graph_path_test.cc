// Addresses of subgraphs (graph/graph_path.h): a path resolves to the graph it names or to nothing, never
// creates one; paths order, hash and enclose one another; nodes and paths read as messages quote them;
// ForEachGraph visits every graph, parents first.

#include "graph/graph_path.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "test_models.h"
#include "test_names.h"

namespace rnnstate::graph_path_test {
namespace {

using namespace test_names;

/// Main graph: node 0 a Relu (unnamed), node 1 the Loop "decode" whose body holds node 0 an Identity and
/// node 1 an unnamed If with a then and an else branch.
onnx::ModelProto LoopWithIf() {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[2] x, int64 trip, bool cond) => (float[2] r, float[2] y) {
  r = Relu (x)
  y = Loop (trip, cond, r) <body = body (int64 i, bool c_in, float[2] v) => (bool c_out, float[2] w) {
    c_out = Identity (c_in)
    w = If (c_in) <then_branch = then_g () => (float[2] t) { t = Identity (v) },
                   else_branch = else_g () => (float[2] e) { e = Neg (v) }>
  }>
})");
  model.mutable_graph()->mutable_node(1)->set_name("decode");
  return model;
}

const GraphPath kBody = {GraphStep{1, "body", -1}};
const GraphPath kThen = {GraphStep{1, "body", -1}, GraphStep{1, "then_branch", -1}};
const GraphPath kElse = {GraphStep{1, "body", -1}, GraphStep{1, "else_branch", -1}};

TEST(ResolveGraph, FollowsEachStepToTheSubgraphItNames) {
  onnx::ModelProto model = LoopWithIf();
  const onnx::ModelProto& read = model;
  EXPECT_EQ(ResolveGraph(read, {}), &model.graph());
  ASSERT_NE(ResolveGraph(read, kBody), nullptr);
  EXPECT_EQ(ResolveGraph(read, kBody)->name(), "body");
  EXPECT_EQ(ResolveGraph(read, kThen)->name(), "then_g");
  EXPECT_EQ(ResolveGraph(read, kElse)->name(), "else_g");
  // The mutable overload reaches the same graphs.
  EXPECT_EQ(ResolveGraph(model, kElse), ResolveGraph(read, kElse));
}

TEST(ResolveGraph, APathThatLeadsNowhereIsNullAndChangesNothing) {
  const onnx::ModelProto model = LoopWithIf();
  const std::string before = Bytes(model);
  EXPECT_EQ(ResolveGraph(model, {GraphStep{0, "body", -1}}), nullptr);   // a Relu has no subgraph
  EXPECT_EQ(ResolveGraph(model, {GraphStep{2, "body", -1}}), nullptr);   // no node 2
  EXPECT_EQ(ResolveGraph(model, {GraphStep{-1, "body", -1}}), nullptr);  // no node -1
  EXPECT_EQ(ResolveGraph(model, {GraphStep{1, "then_branch", -1}}), nullptr);
  EXPECT_EQ(ResolveGraph(model, {GraphStep{1, "body", 0}}), nullptr);  // GRAPH, not GRAPHS
  EXPECT_EQ(ResolveGraph(model, {kBody[0], GraphStep{1, "then_branch", -1}, GraphStep{0, "x", -1}}), nullptr);
  EXPECT_EQ(Bytes(model), before);
  const onnx::ModelProto empty;
  EXPECT_EQ(ResolveGraph(empty, {}), nullptr);
  EXPECT_FALSE(empty.has_graph());
}

TEST(ResolveGraph, AGraphsAttributeIsSteppedIntoByItsPosition) {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[2] x) => (float[2] y) {
  y = Relu (x)
})");
  onnx::AttributeProto* list = model.mutable_graph()->mutable_node(0)->add_attribute();
  list->set_name("branches");
  list->set_type(onnx::AttributeProto::GRAPHS);
  list->add_graphs()->set_name("first");
  list->add_graphs()->set_name("second");
  EXPECT_EQ(ResolveGraph(model, {GraphStep{0, "branches", 1}})->name(), "second");
  EXPECT_EQ(ResolveGraph(model, {GraphStep{0, "branches", 2}}), nullptr);
  EXPECT_EQ(ResolveGraph(model, {GraphStep{0, "branches", -1}}), nullptr);
}

TEST(Encloses, AGraphEnclosesItselfAndWhatIsNestedInIt) {
  EXPECT_TRUE(Encloses({}, kThen));
  EXPECT_TRUE(Encloses(kBody, kThen));
  EXPECT_TRUE(Encloses(kThen, kThen));
  EXPECT_FALSE(Encloses(kThen, kBody));
  EXPECT_FALSE(Encloses(kThen, kElse));
  EXPECT_FALSE(Encloses({GraphStep{0, "body", -1}}, kThen));
}

TEST(GraphStep, OrdersByNodeThenAttributeThenPosition) {
  EXPECT_LT((GraphStep{0, "z", 5}), (GraphStep{1, "a", -1}));
  EXPECT_LT((GraphStep{1, "a", 5}), (GraphStep{1, "b", -1}));
  EXPECT_LT((GraphStep{1, "a", -1}), (GraphStep{1, "a", 0}));
  EXPECT_FALSE((GraphStep{1, "a", 0}) < (GraphStep{1, "a", 0}));
}

TEST(GraphPathHash, EqualPathsHashAlikeAndEachPartCounts) {
  const GraphPathHash hash;
  EXPECT_EQ(hash(kThen), hash(GraphPath(kThen)));
  EXPECT_NE(hash(kThen), hash(kElse));
  EXPECT_NE(hash(kBody), hash({GraphStep{2, "body", -1}}));
  EXPECT_NE(hash(kBody), hash({GraphStep{1, "body", 0}}));
  EXPECT_NE(hash({}), hash(kBody));
}

TEST(NodeLabel, IsTheNameOrTheOperatorAndPosition) {
  const onnx::ModelProto model = LoopWithIf();
  EXPECT_EQ(NodeLabel(model.graph().node(1), 1), "decode");
  EXPECT_EQ(NodeLabel(model.graph().node(0), 0), "Relu_0");
  EXPECT_EQ(NodeLabel(onnx::NodeProto(), 7), "node_7");
}

TEST(DescribeNode, QuotesTheLabelAfterTheOperator) {
  const onnx::ModelProto model = LoopWithIf();
  EXPECT_EQ(DescribeNode(model, {}, 1), "Loop 'decode'");
  EXPECT_EQ(DescribeNode(model, kBody, 1), "If 'If_1'");
  EXPECT_EQ(DescribeNode(model, kThen, 0), "Identity 'Identity_0'");
  EXPECT_EQ(DescribeNode(model, {}, 2), "?");
  EXPECT_EQ(DescribeNode(model, {}, -1), "?");
  EXPECT_EQ(DescribeNode(model, {GraphStep{0, "body", -1}}, 0), "?");
  EXPECT_EQ(DescribeNode(onnx::NodeProto(), 3), "node 'node_3'");
}

TEST(GraphPathString, NamesEveryLevelFromMain) {
  const onnx::ModelProto model = LoopWithIf();
  EXPECT_EQ(GraphPathString(model, {}), "main");
  EXPECT_EQ(GraphPathString(model, kBody), "main/decode:body");
  EXPECT_EQ(GraphPathString(model, kElse), "main/decode:body/If_1:else_branch");
  EXPECT_EQ(GraphPathString(model, {GraphStep{1, "body", 2}}), "main/decode:body[2]");
  // A step past the model's graphs ends the string instead of reading beyond them.
  EXPECT_EQ(GraphPathString(model, {GraphStep{5, "body", -1}}), "main/?");
  EXPECT_EQ(GraphPathString(model, {GraphStep{0, "body", -1}, GraphStep{0, "x", -1}}), "main/Relu_0:body/?");
  // A negative node index (a default-made or corrupted step) ends it too, as ResolveGraph refuses it.
  EXPECT_EQ(GraphPathString(model, {GraphStep{-1, "body", -1}}), "main/?");
}

TEST(ForEachGraph, VisitsEveryGraphParentsBeforeChildren) {
  const onnx::ModelProto model = LoopWithIf();
  std::vector<std::pair<std::string, std::string>> visited;
  GraphPath path;
  ForEachGraph(model.graph(), path, [&](const GraphPath& at, const onnx::GraphProto& graph) {
    visited.emplace_back(GraphPathString(model, at), graph.name());
    EXPECT_EQ(ResolveGraph(model, at), &graph);
  });
  EXPECT_THAT(visited, ElementsAre(Pair("main", "g"), Pair("main/decode:body", "body"),
                                   Pair("main/decode:body/If_1:then_branch", "then_g"),
                                   Pair("main/decode:body/If_1:else_branch", "else_g")));
  EXPECT_TRUE(path.empty());
}

}  // namespace
}  // namespace rnnstate::graph_path_test
