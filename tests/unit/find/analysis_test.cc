// The analysis of a whole model (analysis.h): every producer's states grouped by owner, the model's facts
// (opset, IR, metadata), which states are exposed already (a direct graph input and output, or a recorded
// pair that still holds), which share their initial value, and the helpers over the result (StatesOf,
// StatesByNode, MarkUnexposed).

#include "find/analysis.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "find/analyze_text.h"
#include "pipeline_stages.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::analysis_test {
namespace {

using namespace test_names;

/// The analysis of `model` (its index lives only for the call).
Analysis AnalyzeModel(const onnx::ModelProto& model) {
  const ModelIndex index(model);
  return Analyze(index);
}

/// A GRU fed by its own graph input h0 and returning its final state hn (exposed as the authors wrote it),
/// beside a GRU whose state is absent.
const char* kExposedAndAbsent = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R, float[1, batch, 3] h0)
    => (float[seq, 1, batch, 3] Y, float[1, batch, 3] hn, float[seq, 1, batch, 3] Z) {
  Y, hn = GRU <hidden_size = 3> (X, W, R, , , h0)
  Z = GRU <hidden_size = 3> (X, W, R)
})";

/// Two GRUs whose initial states are one zero tensor computed from the batch of X (PyTorch without h0).
std::string TwoGrusSharingZeros() {
  return R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, batch, 3] Y, float[seq, 1, batch, 3] Z) {
)" + testing::ZeroStateOfBatchText("X", 1, 3) +
         R"(  Y = GRU <hidden_size = 3> (X, W, R, , , h0)
  Z = GRU <hidden_size = 3> (X, W, R, , , h0)
})";
}

TEST(Analyze, StatesAreGroupedByOwnerInNodeOrder) {
  const Analysis analysis = AnalyzeText(LstmThenGru(4));
  ASSERT_EQ(analysis.nodes.size(), 2u);
  EXPECT_EQ(analysis.nodes[0].op, "LSTM");
  EXPECT_EQ(analysis.nodes[1].op, "GRU");
  ASSERT_EQ(analysis.states.size(), 3u);
  EXPECT_EQ(analysis.states[0].node, 0);
  EXPECT_EQ(analysis.states[1].node, 0);
  EXPECT_EQ(analysis.states[2].node, 1);
  EXPECT_EQ(analysis.states[1].state.kind, StateKind::kCell);
  EXPECT_EQ(analysis.onnx_opset, 14);
  EXPECT_EQ(analysis.ir_version, 8);
  EXPECT_EQ(analysis.metadata_error, "");
  EXPECT_THAT(analysis.recorded_pairs, IsEmpty());
  EXPECT_FALSE(analysis.packed);
}

TEST(Analyze, StatesOfAndStatesByNodeAgree) {
  const Analysis analysis = AnalyzeText(LstmThenGru(4));
  const auto by_node = analysis.StatesByNode();
  ASSERT_EQ(by_node.size(), 2u);
  for (size_t node = 0; node < 2; ++node) EXPECT_EQ(analysis.StatesOf(node), by_node[node]) << node;
  ASSERT_EQ(by_node[0].size(), 2u);
  EXPECT_EQ(by_node[0][0], &analysis.states[0]);
  EXPECT_EQ(by_node[0][1], &analysis.states[1]);
  ASSERT_EQ(by_node[1].size(), 1u);
  EXPECT_EQ(by_node[1][0], &analysis.states[2]);
  EXPECT_THAT(analysis.StatesOf(7), IsEmpty());
}

TEST(Analyze, AStateFedByItsOwnInputAndReturnedIsExposedAnAbsentOneIsNot) {
  const Analysis analysis = AnalyzeText(kExposedAndAbsent);
  ASSERT_EQ(analysis.states.size(), 2u);
  const StateAnalysis& fed = analysis.states[0];
  EXPECT_EQ(fed.origin.kind, StateOrigin::Kind::kGraphInput);
  EXPECT_EQ(fed.origin.value, "h0");
  EXPECT_TRUE(fed.final_state.graph_output);
  EXPECT_TRUE(fed.exposed);
  const StateAnalysis& absent = analysis.states[1];
  EXPECT_EQ(absent.origin.kind, StateOrigin::Kind::kAbsent);
  EXPECT_FALSE(absent.exposed);
  EXPECT_EQ(absent.recorded, -1);
}

TEST(Analyze, MarkUnexposedMarksOnlyTheStatesStillToRewriteAndTheirNodes) {
  Analysis analysis = AnalyzeText(kExposedAndAbsent);
  analysis.MarkUnexposed("opset 99 is not supported");
  EXPECT_EQ(analysis.states[0].state.problem, "");
  EXPECT_EQ(analysis.nodes[0].problem, "");
  EXPECT_EQ(analysis.states[1].state.problem, "opset 99 is not supported");
  EXPECT_EQ(analysis.nodes[1].problem, "opset 99 is not supported");
}

TEST(Analyze, StatesReadingOneComputedZeroTensorShareIt) {
  const Analysis analysis = AnalyzeText(TwoGrusSharingZeros());
  ASSERT_EQ(analysis.states.size(), 2u);
  EXPECT_THAT(analysis.states[0].shared_with, ElementsAre(analysis.states[1].state.Label()));
  EXPECT_THAT(analysis.states[1].shared_with, ElementsAre(analysis.states[0].state.Label()));
  EXPECT_TRUE(analysis.states[0].origin.zero);
}

TEST(Analyze, StatesOfSeparateValuesShareNothing) {
  const Analysis analysis = AnalyzeText(kExposedAndAbsent);
  ASSERT_THAT(analysis.states, Not(IsEmpty()));
  for (const StateAnalysis& state : analysis.states) EXPECT_THAT(state.shared_with, IsEmpty());
}

TEST(Analyze, ARewrittenStateIsRecordedAndExposedWhileItsPairHolds) {
  onnx::ModelProto model = ParseModel(kLstm);
  RewriteModel(model, {}, /*strict=*/false);
  const Analysis rewritten = AnalyzeModel(model);
  ASSERT_EQ(rewritten.recorded_pairs.size(), 2u);
  ASSERT_EQ(rewritten.states.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(rewritten.states[i].recorded, static_cast<int>(i));
    EXPECT_TRUE(rewritten.states[i].exposed) << i;
  }
  // The h output now comes from Y_c: the pair does not hold, the state is rewritten again.
  const std::string h_output = rewritten.recorded_pairs[0].output;
  for (auto& node : *model.mutable_graph()->mutable_node()) {
    for (auto& output : *node.mutable_output()) {
      if (output == h_output) output = "unused";
    }
  }
  auto* identity = model.mutable_graph()->add_node();
  identity->set_op_type("Identity");
  identity->add_input(NodeOfType(model.graph(), "LSTM").output(2));  // Y_c, of h's shape
  identity->add_output(h_output);
  const Analysis stale = AnalyzeModel(model);
  ASSERT_EQ(stale.states.size(), 2u);
  EXPECT_EQ(stale.states[0].recorded, 0);
  EXPECT_FALSE(stale.states[0].exposed);
  EXPECT_TRUE(stale.states[1].exposed);
}

TEST(Analyze, UnreadableMetadataIsReportedAndItsPairsAreNotTraced) {
  onnx::ModelProto model = ParseModel(kLstm);
  RewriteModel(model, {}, /*strict=*/false);
  for (auto& prop : *model.mutable_metadata_props()) {
    if (prop.key() == kMetadataKey) prop.set_value("{not json");
  }
  const Analysis analysis = AnalyzeModel(model);
  EXPECT_NE(analysis.metadata_error, "");
  EXPECT_THAT(analysis.metadata_problems, Not(IsEmpty()));
  EXPECT_THAT(analysis.recorded_pairs, IsEmpty());
  ASSERT_THAT(analysis.states, SizeIs(2u));
  for (const StateAnalysis& state : analysis.states) EXPECT_EQ(state.recorded, -1);
}

}  // namespace
}  // namespace rnnstate::analysis_test
