// ApplyPlan on hand-written plans, one test per edit variant that apply_test.cc does not cover: every
// default (broadcast zeros, a moved or copied initializer, the selection of the original computation),
// the required-mode input edits (drop a default, put a learned default behind a selection), a reused
// output, and threading a final state out of a Loop and a Scan.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "rewrite/apply.h"
#include "rewrite/gru_state_edit.h"
#include "rnnstate/error.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::apply_variants_test {
namespace {

using namespace test_names;
using testing::Producer;

/// A GRU of hidden size 3 on X [5, B, 2] whose h slot reads `h0`.
onnx::ModelProto GruReading(const std::string& batch, const std::string& extra_inputs = "") {
  return ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[5, )" + batch +
                    R"(, 2] X, float[1, 9, 2] W, float[1, 9, 3] R)" + extra_inputs + R"() => (float[5, 1, )" + batch +
                    R"(, 3] Y) {
  Y = GRU <hidden_size = 3> (X, W, R, , , h0)
})");
}

/// The edit of the GRU's h, which read h0.
StateEdit HEdit(InputEdit input, OutputEdit output, std::vector<Dim> shape) {
  return GruHEdit(std::move(input), std::move(output), std::move(shape), "h0");
}

const std::vector<Dim> kFixed{Dim{1, ""}, Dim{2, ""}, Dim{3, ""}};
const std::vector<Dim> kDynamic{Dim{1, ""}, Dim{-1, "batch"}, Dim{3, ""}};

TEST(ApplyVariants, BroadcastZerosExpandedToTheBatchOfX) {
  onnx::ModelProto model = GruReading("batch");
  AddFloatInitializer(*model.mutable_graph(), "h0", {1, 1, 3}, {0});
  BroadcastShapeNames b;
  b.x = "X";
  b.batch_axis = 1;
  b.batch_position = 1;
  b.shape_of_x = "x.shape";
  b.batch_index = "x.batch_index";
  b.batch = "x.batch";
  b.fixed_dims = {{1, "d0"}, {3, "d2"}};
  b.state_shape = "state.shape";
  b.anchor = 0;  // before the GRU
  Plan plan;
  plan.broadcasts.push_back(b);
  plan.edits.push_back(HEdit(NewInput{BroadcastZerosDefault{{1, 1, 3}, 0}, "h_in.expanded", {}}, NameSlot{}, kDynamic));
  ApplyPlan(plan, model);
  const auto& g = model.graph();
  EXPECT_THAT(InputNames(g), ElementsAre("X", "W", "R", "h_in"));
  EXPECT_EQ(DeclaredShape(g, "h_in"), "[1,batch,3]");
  const onnx::NodeProto* expand = Producer(g, "h_in.expanded");
  ASSERT_NE(expand, nullptr);
  EXPECT_EQ(expand->op_type(), "Expand");
  EXPECT_THAT(std::vector<std::string>(expand->input().begin(), expand->input().end()),
              ElementsAre("h_in", "state.shape"));
  const onnx::NodeProto* concat = Producer(g, "state.shape");
  ASSERT_NE(concat, nullptr);
  EXPECT_THAT(std::vector<std::string>(concat->input().begin(), concat->input().end()),
              ElementsAre("d0", "x.batch", "d2"));
  EXPECT_EQ(Producer(g, "x.shape")->input(0), "X");
  EXPECT_EQ(NodeOfType(g, "GRU").input(5), "h_in.expanded");
  // The original zeros fed nothing else: pruned; the input's own [1,1,3] zeros are its default.
  EXPECT_THAT(InitializerNames(g), ElementsAre("h_in"));
  EXPECT_EQ(g.initializer(0).raw_data(), std::string(3 * 4, '\0'));
}

TEST(ApplyVariants, ABroadcastWithoutAPlaceIsAnInternalError) {
  onnx::ModelProto model = GruReading("batch");
  BroadcastShapeNames b;
  b.x = "X";
  b.state_shape = "state.shape";  // b.anchor stays -1: the plan names no node to put it before
  Plan plan;
  plan.broadcasts.push_back(b);
  plan.edits.push_back(HEdit(NewInput{BroadcastZerosDefault{{1, 1, 3}, 0}, "h_in.expanded", {}}, NameSlot{}, kDynamic));
  try {
    ApplyPlan(plan, model);
    FAIL() << "applied a broadcast without a place";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kInternal);
  }
}

TEST(ApplyVariants, AnInitializerServingOnlyThisStateIsRenamedToTheInput) {
  onnx::ModelProto model = GruReading("2");
  AddFloatInitializer(*model.mutable_graph(), "h0", {1, 2, 3}, {0.5f});
  Plan plan;
  plan.edits.push_back(HEdit(NewInput{InitializerDefault{true, {}, {1, 2, 3}}, "h_in", {}}, NameSlot{}, kFixed));
  ApplyPlan(plan, model);
  const auto& g = model.graph();
  EXPECT_THAT(InitializerNames(g), ElementsAre("h_in"));
  EXPECT_EQ(g.initializer(0).float_data(0), 0.5f);  // the learned values, moved
  EXPECT_EQ(NodeOfType(g, "GRU").input(5), "h_in");
}

TEST(ApplyVariants, ASharedInitializerIsCopiedAndKeptForItsOtherReaders) {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[5, 2, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[5, 1, 2, 3] Y, float[1, 2, 3] z) {
  Y = GRU <hidden_size = 3> (X, W, R, , , h0)
  z = Relu (h0)
})");
  AddFloatInitializer(*model.mutable_graph(), "h0", {1, 2, 3}, {0.5f});
  Plan plan;
  plan.edits.push_back(HEdit(NewInput{InitializerDefault{false, {}, {1, 2, 3}}, "h_in", {}}, NameSlot{}, kFixed));
  ApplyPlan(plan, model);
  const auto& g = model.graph();
  EXPECT_THAT(InitializerNames(g), ElementsAre("h0", "h_in"));
  EXPECT_EQ(g.initializer(1).float_data(0), 0.5f);
  EXPECT_EQ(NodeOfType(g, "Relu").input(0), "h0");
  EXPECT_EQ(NodeOfType(g, "GRU").input(5), "h_in");
}

TEST(ApplyVariants, SelectOriginalKeepsTheOriginalComputationBehindAnIf) {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[5, 2, 2] X, float[1, 9, 2] W, float[1, 9, 3] R, float[1, 2, 3] s) => (float[5, 1, 2, 3] Y) {
  h0 = Relu (s)
  Y = GRU <hidden_size = 3> (X, W, R, , , h0)
})");
  SelectOriginalDefault select{{1, 0, 3}, "h_in.size", "h_in.zero", "h_in.is_empty", "h_in.then", "h_in.else", true};
  Plan plan;
  StateEdit edit = HEdit(NewInput{select, "h_in.selected", {}}, NameSlot{}, kFixed);
  edit.key.node = edit.site.node = 1;
  plan.edits.push_back(edit);
  ApplyPlan(plan, model);
  const auto& g = model.graph();
  EXPECT_THAT(InitializerNames(g), ElementsAre("h_in"));  // the empty default [1,0,3]
  EXPECT_EQ(g.initializer(0).dims(1), 0);
  const onnx::NodeProto* choice = Producer(g, "h_in.selected");
  ASSERT_NE(choice, nullptr);
  EXPECT_EQ(choice->op_type(), "If");
  EXPECT_EQ(choice->input(0), "h_in.is_empty");
  EXPECT_EQ(Producer(choice->attribute(0).g(), "h_in.then")->input(0), "h0");    // empty: the original
  EXPECT_EQ(Producer(choice->attribute(1).g(), "h_in.else")->input(0), "h_in");  // fed: the input
  EXPECT_EQ(NodeOfType(g, "Relu").output(0), "h0");                              // the original computation stays
  EXPECT_EQ(NodeOfType(g, "GRU").input(5), "h_in.selected");
}

TEST(ApplyVariants, DropDefaultRemovesTheInitializerAndRedeclaresAFixedBatch) {
  onnx::ModelProto model = GruReading("2", ", float[1, batch, 3] h_in");
  model.mutable_graph()->mutable_node(0)->set_input(5, "h_in");
  AddFloatInitializer(*model.mutable_graph(), "h_in", {1, 1, 3}, {0});
  Plan plan;
  StateEdit edit = HEdit(DropDefault{true}, KeepOutput{}, kFixed);
  edit.original = "h_in";
  plan.edits.push_back(edit);
  ApplyPlan(plan, model);
  EXPECT_TRUE(InitializerNames(model.graph()).empty());
  EXPECT_EQ(DeclaredShape(model.graph(), "h_in"), "[1,2,3]");
}

TEST(ApplyVariants, ALearnedDefaultGoesBehindASelectionOfTheEmptyInput) {
  onnx::ModelProto model = GruReading("2", ", float[1, 2, 3] h_in");
  model.mutable_graph()->mutable_node(0)->set_input(5, "h_in");
  AddFloatInitializer(*model.mutable_graph(), "h_in", {1, 2, 3}, {0.25f});
  DefaultBehindSelect d;
  d.default_name = "h_in.default";
  d.selected = "h_in.selected";
  d.select = SelectOriginalDefault{{1, 0, 3}, "s.size", "s.zero", "s.is_empty", "s.then", "s.else", true};
  Plan plan;
  StateEdit edit = HEdit(d, KeepOutput{}, kFixed);
  edit.original = "h_in";
  plan.edits.push_back(edit);
  ApplyPlan(plan, model);
  const auto& g = model.graph();
  EXPECT_THAT(InitializerNames(g), ElementsAre("h_in.default", "h_in"));
  EXPECT_EQ(g.initializer(0).float_data(0), 0.25f);  // nothing of the learned state is lost
  EXPECT_EQ(g.initializer(1).dims(1), 0);            // the input's default is the empty tensor
  EXPECT_EQ(g.node(0).op_type(), "Size");            // the selection comes first
  const onnx::NodeProto* choice = Producer(g, "h_in.selected");
  ASSERT_NE(choice, nullptr);
  EXPECT_EQ(Producer(choice->attribute(0).g(), "s.then")->input(0), "h_in.default");
  EXPECT_EQ(NodeOfType(g, "GRU").input(5), "h_in.selected");
}

TEST(ApplyVariants, AReusedOutputIsRecordedAndNotDeclaredTwice) {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[5, 2, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[5, 1, 2, 3] Y, float[1, 2, 3] h_out) {
  Y, h_out = GRU <hidden_size = 3> (X, W, R)
})");
  Plan plan;
  StateEdit edit = HEdit(NewInput{NoDefault{}, "h_in", {}}, ReuseOutput{}, kFixed);
  edit.original = "";
  edit.final_value = "h_out";
  plan.edits.push_back(edit);
  ApplyPlan(plan, model);
  EXPECT_THAT(OutputNames(model.graph()), ElementsAre("Y", "h_out"));
  EXPECT_EQ(NodeOfType(model.graph(), "GRU").input(5), "h_in");
}

/// A GRU inside a Loop body (its state restarts every iteration) or a Scan body.
ThreadStep StepOutOf(ContainerKind kind) {
  ThreadStep step;
  step.level = ThreadLevel{{}, 0, kind, "body"};
  step.inner_value = "inner";
  step.carried_input = "carried";
  step.outer_value = "h_out";
  return step;
}

StateEdit BodyEdit(const ThreadStep& step, int node) {
  const GraphPath body{GraphStep{0, "body", -1}};
  StateEdit edit = HEdit(NewInput{NoDefault{}, "h_in", {}}, ThreadedOutput{"final", {step}}, kFixed);
  edit.original = "";
  edit.key.graph = body;
  edit.site.graph = body;
  edit.key.node = edit.site.node = node;
  return edit;
}

TEST(ApplyVariants, ThreadsAStateOutOfALoopAsANewCarriedVariable) {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (int64 n, bool c, float[5, 2, 2] X, float[1, 9, 2] W, float[1, 9, 3] R, float[2] v0) => (float[2] v) {
  v = Loop (n, c, v0) <body = b (int64 i, bool ci, float[2] vi) => (bool co, float[2] vo) {
    co = Identity (ci)
    Y = GRU <hidden_size = 3> (X, W, R)
    vo = Identity (vi)
  }>
})");
  Plan plan;
  plan.edits.push_back(BodyEdit(StepOutOf(ContainerKind::kLoop), 1));
  ApplyPlan(plan, model);
  const onnx::NodeProto& loop = model.graph().node(0);
  EXPECT_THAT(std::vector<std::string>(loop.input().begin(), loop.input().end()), ElementsAre("n", "c", "v0", "h_in"));
  EXPECT_THAT(std::vector<std::string>(loop.output().begin(), loop.output().end()), ElementsAre("v", "h_out"));
  const onnx::GraphProto& body = loop.attribute(0).g();
  EXPECT_THAT(InputNames(body), ElementsAre("i", "ci", "vi", "carried"));
  EXPECT_THAT(OutputNames(body), ElementsAre("co", "vo", "inner"));  // before any scan output
  EXPECT_EQ(Producer(body, "inner")->input(0), "final");
  EXPECT_EQ(NodeOfType(body, "GRU").output(1), "final");
  EXPECT_THAT(OutputNames(model.graph()), ElementsAre("v", "h_out"));
}

/// A Scan carrying s over xs, with a GRU in its body that reads X, W and R from outer scope.
const char* kScanBesideAGru = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[2] s0, float[4, 2] xs, float[5, 2, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[2] s, float[4, 2] ys) {
  s, ys = Scan <num_scan_inputs = 1, body = b (float[2] si, float[2] xi) => (float[2] so, float[2] yo) {
    Y = GRU <hidden_size = 3> (X, W, R)
    so = Add (si, xi)
    yo = Identity (so)
  }> (s0, xs)
})";

TEST(ApplyVariants, ThreadsAStateOutOfAScanAsANewStateVariable) {
  onnx::ModelProto model = ParseModel(kScanBesideAGru);
  Plan plan;
  plan.edits.push_back(BodyEdit(StepOutOf(ContainerKind::kScan9), 0));
  ApplyPlan(plan, model);
  const onnx::NodeProto& scan = model.graph().node(0);
  // State variables come before the scan inputs and outputs, in the node and in its body.
  EXPECT_THAT(std::vector<std::string>(scan.input().begin(), scan.input().end()), ElementsAre("s0", "h_in", "xs"));
  EXPECT_THAT(std::vector<std::string>(scan.output().begin(), scan.output().end()), ElementsAre("s", "h_out", "ys"));
  const onnx::GraphProto& body = scan.attribute(1).g();
  EXPECT_THAT(InputNames(body), ElementsAre("si", "carried", "xi"));
  EXPECT_THAT(OutputNames(body), ElementsAre("so", "inner", "yo"));
}

TEST(ApplyVariants, AThreadedOutputWithoutANewInputIsAnInternalError) {
  onnx::ModelProto model = ParseModel(kScanBesideAGru);
  StateEdit edit = BodyEdit(StepOutOf(ContainerKind::kScan9), 0);
  edit.input_edit = KeepInput{};
  Plan plan;
  plan.edits.push_back(edit);
  ExpectError([&] { ApplyPlan(plan, model); }, ExitCode::kInternal, "");
}

}  // namespace
}  // namespace rnnstate::apply_variants_test
