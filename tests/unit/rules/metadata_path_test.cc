// Where a recorded pair's `path` leads (rules/metadata_path.h): the main graph for an empty path, a node's
// graph attribute by the node's name or, unnamed, by its label, one graph of a list by index; and the
// problems said when a step names no such node, the attribute holds no graph there, or the pair's `graph`
// text is not the path's (old metadata without dtype may omit the path silently).

#include "rules/metadata_path.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_models.h"
#include "test_names.h"

namespace rnnstate::metadata_path_test {
namespace {

using namespace test_names;

/// An unnamed If (label If_1) holding a Relu in each branch, named "inner" in the else branch.
const char* const kIfBranches = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[2] x, bool c) => (float[2] y) {
  a = Relu (x)
  y = If (c) <then_branch = t () => (float[2] p) { p = Relu (a) },
              else_branch = e () => (float[2] q) { q = Neg (a) }>
})";

StatePair PairAt(const std::string& graph, std::vector<PathStep> path, const std::string& dtype = "float32") {
  StatePair pair = PairOf("h_in", "h_out", "node", graph, "h");
  pair.path = std::move(path);
  pair.dtype = dtype;
  return pair;
}

TEST(ResolvePath, LeadsAnEmptyPathToTheMainGraph) {
  const onnx::ModelProto model = ParseModel(kIfBranches);
  std::string problem;
  EXPECT_EQ(ResolvePath(model, PairAt("main", {}), &problem), &model.graph());
  EXPECT_EQ(problem, "");
}

TEST(ResolvePath, FollowsAStepByLabelOrByName) {
  onnx::ModelProto model = ParseModel(kIfBranches);
  std::string problem;
  EXPECT_EQ(ResolvePath(model, PairAt("main/If_1:else_branch", {{"If_1", "else_branch"}}), &problem),
            &model.graph().node(1).attribute(1).g());
  EXPECT_EQ(problem, "");
  model.mutable_graph()->mutable_node(1)->set_name("gate");
  EXPECT_EQ(ResolvePath(model, PairAt("main/gate:then_branch", {{"gate", "then_branch"}}), &problem),
            &model.graph().node(1).attribute(0).g());
  EXPECT_EQ(ResolvePath(model, PairAt("main/If_1:then_branch", {{"If_1", "then_branch"}}), &problem), nullptr);
  EXPECT_EQ(problem, "path step 1 (If_1:then_branch): graph 'main' has no node with that graph attribute");
}

TEST(ResolvePath, TakesOneGraphOfAListByIndex) {
  onnx::ModelProto model = ParseModel(kIfBranches);
  auto* listed = model.mutable_graph()->mutable_node(1)->add_attribute();
  listed->set_name("bodies");
  listed->set_type(onnx::AttributeProto::GRAPHS);
  *listed->add_graphs() = model.graph().node(1).attribute(0).g();
  *listed->add_graphs() = model.graph().node(1).attribute(1).g();
  std::string problem;
  EXPECT_EQ(ResolvePath(model, PairAt("main/If_1:bodies[1]", {{"If_1", "bodies", 1}}), &problem), &listed->graphs(1));
  EXPECT_EQ(ResolvePath(model, PairAt("main/If_1:bodies[2]", {{"If_1", "bodies", 2}}), &problem), nullptr);
  EXPECT_EQ(problem, "path step 1 (If_1:bodies): the attribute holds no graph at index 2");
  EXPECT_EQ(ResolvePath(model, PairAt("main/If_1:bodies", {{"If_1", "bodies"}}), &problem), nullptr);
  EXPECT_EQ(problem, "path step 1 (If_1:bodies): the attribute holds no graph");
}

TEST(ResolvePath, RefusesAGraphTextThatIsNotThePaths) {
  const onnx::ModelProto model = ParseModel(kIfBranches);
  std::string problem;
  EXPECT_EQ(ResolvePath(model, PairAt("main/If_1:then_branch", {{"If_1", "else_branch"}}), &problem), nullptr);
  EXPECT_EQ(problem, "graph 'main/If_1:then_branch' is not the graph its path names ('main/If_1:else_branch')");
  EXPECT_EQ(ResolvePath(model, PairAt("main/If_1:then_branch", {}), &problem), nullptr);
  EXPECT_EQ(problem, "graph 'main/If_1:then_branch' is not the main graph its empty path names");
}

TEST(ResolvePath, LetsOldMetadataOmitThePathOfASubgraph) {
  const onnx::ModelProto model = ParseModel(kIfBranches);
  std::string problem;
  EXPECT_EQ(ResolvePath(model, PairAt("main/If_1:then_branch", {}, ""), &problem), nullptr);
  EXPECT_EQ(problem, "");  // no contract fields: not a problem, only no graph
}

}  // namespace
}  // namespace rnnstate::metadata_path_test
