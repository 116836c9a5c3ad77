// Owners' names as metadata records them (rewrite/owner_names.h): which states options select, stable
// names for the unnamed owners of selected states and the unnamed containers on the way to them (unique in
// the model; named nodes and unselected owners keep what they have), and graph paths spelled with them.

#include "rewrite/owner_names.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "find/analysis.h"
#include "graph/model_index.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::owner_names_test {
namespace {

using namespace test_names;

/// An unnamed If whose branches each run an unnamed GRU over X; a value already named "GRU_0_2".
const char* kGrusInBranches = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R, bool c)
    => (float[seq, 1, batch, 3] Y, float[seq, batch, 2] GRU_0_2) {
  GRU_0_2 = Identity (X)
  Y = If (c) <then_branch = t () => (float[seq, 1, batch, 3] a) { a, ah = GRU <hidden_size = 3> (X, W, R) },
              else_branch = e () => (float[seq, 1, batch, 3] b) { b, bh = GRU <hidden_size = 3> (X, W, R) }>
})";

const GraphPath kThen = {GraphStep{1, "then_branch", -1}};
const GraphPath kElse = {GraphStep{1, "else_branch", -1}};

/// A state of owner `name` in `graph_name`, streamable or not.
RecurrentState StateOf(const std::string& name, const std::string& graph_name, bool streamable) {
  RecurrentState state;
  state.owner.name = name;
  state.owner.graph_name = graph_name;
  state.streamable = streamable;
  return state;
}

TEST(Selected, TakesEveryStateUnlessOptionsNarrowThem) {
  PlanOptions options;
  EXPECT_TRUE(Selected(options, StateOf("enc.lstm", "main", false)));
  options.streamable_only = true;
  EXPECT_FALSE(Selected(options, StateOf("enc.lstm", "main", false)));
  EXPECT_TRUE(Selected(options, StateOf("enc.lstm", "main", true)));
  options.node_filter = NodePattern("^enc");
  EXPECT_TRUE(Selected(options, StateOf("enc.lstm", "main", true)));
  EXPECT_FALSE(Selected(options, StateOf("dec.lstm", "main", true)));
  options.node_filter = NodePattern("Loop_3:body/dec");  // the graph and the name together
  EXPECT_TRUE(Selected(options, StateOf("dec.lstm", "main/Loop_3:body", true)));
  EXPECT_FALSE(Selected(options, StateOf("dec.lstm", "main", true)));
}

TEST(NameUnnamedNodes, NamesTheOwnersAndTheContainersOnTheWayUniquely) {
  const onnx::ModelProto model = ParseModel(kGrusInBranches);
  const ModelIndex index(model);
  const Analysis analysis = Analyze(index);
  NameAllocator names = index.NewNames();
  const NodeNames named = NameUnnamedNodes(index, analysis, PlanOptions(), names);
  ASSERT_EQ(named.size(), 3u);
  EXPECT_EQ(named.at({GraphPath{}, 1}), "If_1");
  const std::set<std::string> grus = {named.at({kThen, 0}), named.at({kElse, 0})};
  EXPECT_THAT(grus, ElementsAre("GRU_0", "GRU_0_3"));  // GRU_0_2 is a value of the model
  EXPECT_TRUE(names.Taken("If_1"));

  const PathNamer namer(model, named);
  EXPECT_EQ(namer.Name(kThen), "main/If_1:then_branch");
  const std::vector<PathStep> steps = namer.Steps(kElse);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].node, "If_1");
  EXPECT_EQ(steps[0].attribute, "else_branch");
  StateOwner owner;
  owner.graph = kThen;
  owner.node = 0;
  owner.name = "GRU_0";
  EXPECT_EQ(namer.OwnerName(owner), named.at({kThen, 0}));
}

TEST(NameUnnamedNodes, LeavesNamedNodesAndUnselectedOwners) {
  onnx::ModelProto model = ParseModel(kGrusInBranches);
  GraphAttribute(*model.mutable_graph()->mutable_node(1), "then_branch")->mutable_node(0)->set_name("fwd");
  const ModelIndex index(model);
  const Analysis analysis = Analyze(index);
  NameAllocator names = index.NewNames();
  PlanOptions only_fwd;
  only_fwd.node_filter = NodePattern("^fwd$");
  const NodeNames named = NameUnnamedNodes(index, analysis, only_fwd, names);
  // The named GRU keeps its name, the other is not selected: only the If on the way is named.
  ASSERT_EQ(named.size(), 1u);
  EXPECT_EQ(named.begin()->second, "If_1");
  EXPECT_EQ(PathNamer(model, {}).Name(kThen), "main/If_1:then_branch");  // the label unnamed nodes show
  StateOwner owner;
  owner.name = "fwd";
  owner.graph = kThen;
  owner.node = 0;
  EXPECT_EQ(PathNamer(model, named).OwnerName(owner), "fwd");
}

}  // namespace
}  // namespace rnnstate::owner_names_test
