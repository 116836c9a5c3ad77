// The per-node helpers and class rules of time/time_rules.h called directly on one node: how messages name
// a node, AxisOrNone and MovedTo, NodeTime's questions about its inputs, the elementwise rule (frames
// broadcast against steady operands) and the reduction rule (frames kept when other axes are reduced,
// mixed when time is).

#include "time/time_rules.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "test_models.h"
#include "test_names.h"

namespace rnnstate::time_rules_test {
namespace {

using namespace test_names;
using ::testing::StartsWith;

/// One node (the first of `graph`, opset 14 text after the header), its first input with `x_fact`.
struct OneNode {
  explicit OneNode(const std::string& graph, const TimeFact& x_fact, const std::string& node_name = "")
      : model(Named(ParseModel("<ir_version: 8, opset_import: [\"\" : 14]>\n" + graph), node_name)),
        index(model),
        x(x_fact) {}
  /// `model` with its first node named `name` (unchanged for ""): named before the index is made.
  static onnx::ModelProto Named(onnx::ModelProto model, const std::string& name) {
    if (!name.empty()) model.mutable_graph()->mutable_node(0)->set_name(name);
    return model;
  }
  NodeTime Node() const {
    NodeTime n{index, main_graph, 0, model.graph().node(0), {}};
    for (int slot = 0; slot < model.graph().node(0).input_size(); ++slot) n.in.push_back(slot == 0 ? &x : &steady);
    return n;
  }
  onnx::ModelProto model;
  ModelIndex index;
  GraphPath main_graph;
  TimeFact x;
  TimeFact steady = TimeFact::Steady();
};

const char* const kAdd = R"(g (float[seq, batch, 4] x, float[4] b) => (float[seq, batch, 4] y) {
  y = Add (x, b)
})";

TEST(TimeRulesNodeLabel, NamesANodeByItsNameOrItsOutput) {
  const OneNode unnamed(kAdd, TimeFact::Frames(0));
  EXPECT_EQ(NodeLabel(unnamed.index, unnamed.main_graph, 0), "Add (output 'y')");
  const OneNode named(kAdd, TimeFact::Frames(0), "enc.0");
  EXPECT_EQ(NodeLabel(named.index, named.main_graph, 0), "Add 'enc.0'");
}

TEST(AxisOrNone, NormalizesAxesInRangeOnly) {
  EXPECT_EQ(AxisOrNone(-1, 3), 2);
  EXPECT_EQ(AxisOrNone(1, 3), 1);
  EXPECT_EQ(AxisOrNone(3, 3), -1);
  EXPECT_EQ(AxisOrNone(-4, 3), -1);
}

TEST(MovedTo, MovesFramesToTheGivenAxis) {
  const TimeFact moved = MovedTo(TimeFact::Frames(0), 2);
  EXPECT_EQ(TimeFactText(moved), "frames on axis 2");
}

TEST(NodeTimeInputs, AnswersForItsInputs) {
  const OneNode add(kAdd, TimeFact::Frames(0));
  const NodeTime n = add.Node();
  EXPECT_TRUE(n.OthersSteady(0));
  EXPECT_FALSE(n.OthersSteady(1));
  EXPECT_EQ(n.InRank(0), 3);
  EXPECT_EQ(n.InRank(1), 1);
  EXPECT_EQ(n.OutRank(0), 3);
  EXPECT_FALSE(n.InputBreak().has_value());
}

TEST(ElementwiseTime, BroadcastsFramesAgainstSteadyOperands) {
  const OneNode add(kAdd, TimeFact::Frames(0));
  EXPECT_EQ(TimeFactText(ElementwiseTime(add.Node())), "frames on axis 0");
}

TEST(ReductionTime, KeepsFramesOverOtherAxesAndMixesThemOverTime) {
  const OneNode features(R"(g (float[seq, batch, 4] x) => (float[seq, batch, 1] y) {
  y = ReduceMean <axes = [2]> (x)
})",
                         TimeFact::Frames(0));
  EXPECT_EQ(TimeFactText(ReductionTime(features.Node())), "frames on axis 0");
  const OneNode over_time(R"(g (float[seq, batch, 4] x) => (float[1, batch, 4] y) {
  y = ReduceMean <axes = [0]> (x)
})",
                          TimeFact::Frames(0));
  EXPECT_THAT(TimeFactText(ReductionTime(over_time.Node())), StartsWith("mixed"));
}

}  // namespace
}  // namespace rnnstate::time_rules_test
