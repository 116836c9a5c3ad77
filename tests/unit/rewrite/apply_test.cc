// ApplyPlan on hand-written plans: apply executes exactly the edits it is given, and refuses a plan that
// does not fit the model.

#include "rewrite/apply.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "rewrite/gru_state_edit.h"
#include "rnnstate/error.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::apply_test {
namespace {

using namespace test_names;
using testing::Producer;

onnx::ModelProto GruModel() {
  return ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[5, 2, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[5, 1, 2, 3] Y) {
  Y = GRU <hidden_size = 3> (X, W, R)
})");
}

/// An edit of the GRU's h with the given sides.
StateEdit GruEdit(InputEdit input, OutputEdit output) {
  return GruHEdit(std::move(input), std::move(output), {Dim{1, ""}, Dim{2, ""}, Dim{3, ""}});
}

TEST(Apply, NewInputWithZeroDefaultAndANamedSlot) {
  onnx::ModelProto model = GruModel();
  Plan plan;
  plan.edits.push_back(GruEdit(NewInput{ZerosDefault{{1, 2, 3}}, "h_in", {}}, NameSlot{}));
  ApplyPlan(plan, model);
  const auto& g = model.graph();
  EXPECT_THAT(InputNames(g), ElementsAre("X", "W", "R", "h_in"));
  EXPECT_THAT(InitializerNames(g), ElementsAre("h_in"));
  EXPECT_EQ(g.initializer(0).raw_data(), std::string(6 * 4, '\0'));
  const onnx::NodeProto& gru = NodeOfType(g, "GRU");
  EXPECT_EQ(gru.input(5), "h_in");
  EXPECT_EQ(gru.output(1), "h_out");
  EXPECT_THAT(OutputNames(g), ElementsAre("Y", "h_out"));
  EXPECT_EQ(model.metadata_props_size(), 0);  // metadata_changes was not set
}

TEST(Apply, RequiredInputAndAnIdentityOutput) {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[5, 2, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[1, 2, 3] o) {
  Y, hn = GRU <hidden_size = 3> (X, W, R)
  o = Relu (hn)
})");
  Plan plan;
  StateEdit edit = GruEdit(NewInput{NoDefault{}, "h_in", {}}, IdentityOutput{});
  edit.final_value = "hn";
  plan.edits.push_back(edit);
  ApplyPlan(plan, model);
  const auto& g = model.graph();
  EXPECT_TRUE(InitializerNames(g).empty());
  const onnx::NodeProto* identity = Producer(g, "h_out");
  ASSERT_NE(identity, nullptr);
  EXPECT_EQ(identity->op_type(), "Identity");
  EXPECT_EQ(identity->input(0), "hn");
  EXPECT_EQ(NodeOfType(g, "Relu").input(0), "hn");  // existing consumers untouched
}

TEST(Apply, OnAnArenaTheModelsOwnNodesAreMovedNotCopied) {
  // A file's model lives on an arena (io/model_file.h): inserting the Identity must keep the existing
  // NodeProtos where they are, not copy each one off the arena and back (a million copies on a big graph).
  google::protobuf::Arena arena;
  auto* model = google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
  model->CopyFrom(ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[5, 2, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[1, 2, 3] o) {
  a = Relu (X)
  Y, hn = GRU <hidden_size = 3> (a, W, R)
  o = Relu (hn)
})"));
  std::vector<const onnx::NodeProto*> before;
  for (const auto& node : model->graph().node()) before.push_back(&node);
  Plan plan;
  StateEdit edit = GruEdit(NewInput{NoDefault{}, "h_in", {}}, IdentityOutput{});
  edit.key = StateKey{{}, 1, 5};
  edit.site = StateSite{{}, 1, 5, 1, false};
  edit.final_value = "hn";
  plan.edits.push_back(edit);
  ApplyPlan(plan, *model);
  const auto& g = model->graph();
  ASSERT_EQ(g.node_size(), 4);
  std::vector<const onnx::NodeProto*> kept;
  for (const auto& node : g.node()) {
    EXPECT_EQ(node.GetArena(), &arena);
    if (node.op_type() != "Identity") kept.push_back(&node);
  }
  EXPECT_EQ(kept, before);
  EXPECT_EQ(Producer(g, "h_out")->op_type(), "Identity");
}

TEST(Apply, KeptStatesChangeNothingButTheMetadata) {
  onnx::ModelProto model = GruModel();
  const std::string before = testing::Bytes(model);
  Plan plan;
  plan.edits.push_back(GruEdit(KeepInput{}, KeepOutput{}));
  ApplyPlan(plan, model);
  EXPECT_EQ(testing::Bytes(model), before);
  plan.pairs.push_back(PairOf("h_in", "h_out", "gru", "main", "h"));
  plan.metadata_changes = true;
  ApplyPlan(plan, model);
  ASSERT_EQ(testing::RecordedPairs(model).size(), 1u);
}

TEST(Apply, ThreadsAStateOutOfAnIfThroughBothBranches) {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[5, 2, 2] X, bool c, float[1, 9, 2] W, float[1, 9, 3] R, float[5, 1, 2, 3] Z) => (float[5, 1, 2, 3] Y) {
  Y = If (c) <
    then_branch = t () => (float[5, 1, 2, 3] a) { a = GRU <hidden_size = 3> (X, W, R) },
    else_branch = e () => (float[5, 1, 2, 3] b) { b = Identity (Z) }>
})");
  const GraphPath then_branch{GraphStep{0, "then_branch", -1}};
  StateEdit edit = GruEdit(NewInput{ZerosDefault{{1, 2, 3}}, "h_in", {}}, KeepOutput{});
  edit.key.graph = then_branch;
  edit.site.graph = then_branch;
  ThreadStep step;
  step.level = ThreadLevel{{}, 0, ContainerKind::kIf, "then_branch"};
  step.inner_value = "inner";
  step.other_attribute = "else_branch";
  step.other_value = "other";
  step.outer_value = "h_out";
  edit.output_edit = ThreadedOutput{"final", {step}};
  Plan plan;
  plan.edits.push_back(edit);
  ApplyPlan(plan, model);
  const onnx::NodeProto& select = model.graph().node(0);
  EXPECT_THAT(std::vector<std::string>(select.output().begin(), select.output().end()), ElementsAre("Y", "h_out"));
  const onnx::GraphProto& then_graph = select.attribute(0).g();
  const onnx::GraphProto& else_graph = select.attribute(1).g();
  EXPECT_THAT(OutputNames(then_graph), ElementsAre("a", "inner"));
  EXPECT_THAT(OutputNames(else_graph), ElementsAre("b", "other"));
  EXPECT_EQ(Producer(else_graph, "other")->input(0), "h_in");  // the branch without the GRU passes it on
  EXPECT_EQ(NodeOfType(then_graph, "GRU").output(1), "final");
  EXPECT_THAT(OutputNames(model.graph()), ElementsAre("Y", "h_out"));
}

TEST(Apply, APlanThatDoesNotFitTheModelIsAnInternalError) {
  onnx::ModelProto model = GruModel();
  Plan plan;
  StateEdit edit = GruEdit(NewInput{ZerosDefault{{1, 2, 3}}, "h_in", {}}, NameSlot{});
  edit.site.node = 7;
  plan.edits.push_back(edit);
  ExpectError([&] { ApplyPlan(plan, model); }, ExitCode::kInternal, "");
}

}  // namespace
}  // namespace rnnstate::apply_test
