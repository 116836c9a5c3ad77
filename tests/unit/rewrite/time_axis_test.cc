// `rewrite --time-axis`: a tf2onnx-style Loop with a constant trip count equal to the static sequence length
// becomes one that runs the fed input's length (time_axis), built as ONNX text.

#include "rewrite/time_axis.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "find/analysis.h"
#include "graph/graph_edit.h"
#include "loop_text.h"
#include "pipeline_stages.h"
#include "rnnstate/error.h"
#include "test_models.h"
#include "test_names.h"
#include "values/shape_eval.h"
#include "views/check.h"

namespace rnnstate::time_axis_test {
namespace {

using namespace test_names;
using testing::Producer;

/// tf2onnx's form: trip count M = 6 (x is [batch, 6, 3]), an int32 counter t with the inlined condition
/// `t + 1 < 6:int32` (also before the loop), h carried, x read at t along axis 1, per-step h transposed back.
const std::string kFixedLoop = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, 6, 3] x, float[3, 4] W, float[4, 4] U) => (float[batch, 6, 4] y, float[batch, 4] h_n) {
  M = Constant <value = int64 {6}> ()
  T = Constant <value = int32 {6}> ()
)" + BatchZerosText("x", 0, 4, {"shape", "zero", "b", "four", "dims", "h0"}) +
                               R"(
  t0 = Constant <value = int32 {0}> ()
  cond0 = Less (t0, T)
  t_n, h_n, ys = Loop (M, cond0, t0, h0) <body = body (int64 i, bool cond, int32 t, float[batch, 4] h)
      => (bool cond_out, int32 t_next, float[batch, 4] h_next, float[batch, 4] y_t) {
)" + TanhCell().At("t", 1).Text() +
                               R"(
    one = Constant <value = int32 {1}> ()
    t_next = Add (t, one)
    cond_out = Less (t_next, T)
    y_t = Identity (h_next)
  }>
  y = Transpose <perm = [1, 0, 2]> (ys)
})";

PlanOptions WithTimeAxis(const std::string& axis) {
  PlanOptions options;
  options.time_axes.push_back(ParseTimeAxis(axis));
  return options;
}

TEST(TimeAxis, ParsesInputAndAxis) {
  EXPECT_EQ(ParseTimeAxis("x:1").input, "x");
  EXPECT_EQ(ParseTimeAxis("x:1").axis, 1);
  EXPECT_EQ(ParseTimeAxis("onnx::x:0").input, "onnx::x");  // names may contain ':'
  for (const char* bad : {"x", "x:", ":1", "x:-1", "x:a", "x:1.5"}) {
    EXPECT_THROW(ParseTimeAxis(bad), Error) << bad;
  }
}

TEST(TimeAxis, ConstantTripCountAndBoundBecomeTheFedLength) {
  onnx::ModelProto model = ParseModel(kFixedLoop);
  RewriteOutcome outcome = RewriteModel(model, WithTimeAxis("x:1"), /*strict=*/true);
  EXPECT_THAT(outcome.time_axis_changes, ElementsAre(HasSubstr("--time-axis x:1: length 6 -> 'x_time'")));
  const onnx::GraphProto& g = model.graph();
  EXPECT_EQ(testing::DeclaredShape(g, "x"), "[batch,x_time,3]");
  EXPECT_EQ(testing::DeclaredShape(g, "y"), "[batch,x_time,4]");  // through the Transpose of the scan output
  const onnx::NodeProto* m = Producer(g, "M");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->op_type(), "Identity");
  const onnx::NodeProto* t = Producer(g, "T");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->op_type(), "Cast");  // the int32 bound of the condition
  const onnx::NodeProto* length = Producer(g, m->input(0));
  ASSERT_NE(length, nullptr);
  EXPECT_EQ(length->op_type(), "Gather");
  EXPECT_EQ(Producer(g, length->input(0))->op_type(), "Shape");
  // The rewritten loop walks x:1 and streams; its state is exposed.
  const auto pairs = testing::RecordedPairs(model);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_TRUE(pairs[0].streamable);
  // Rewriting the output with the same option changes nothing.
  const std::string once = testing::Bytes(model);
  RewriteOutcome again = RewriteModel(model, WithTimeAxis("x:1"), /*strict=*/true);
  EXPECT_FALSE(again.changed);
  EXPECT_EQ(testing::Bytes(model), once);
}

TEST(TimeAxis, WithoutTheOptionTheLoopIsExposedButNotStreamable) {
  onnx::ModelProto model = ParseModel(kFixedLoop);
  RewriteModel(model, PlanOptions{}, /*strict=*/true);
  const auto pairs = testing::RecordedPairs(model);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_FALSE(pairs[0].streamable);
  EXPECT_EQ(testing::DeclaredShape(model.graph(), "x"), "[batch,6,3]");
}

TEST(TimeAxis, AFirstRewriteWithoutTheOptionIsFixedLaterAndItsPairsUpdated) {
  onnx::ModelProto model = ParseModel(kFixedLoop);
  RewriteModel(model, PlanOptions{}, /*strict=*/true);
  ASSERT_FALSE(testing::RecordedPairs(model)[0].streamable);
  RewriteModel(model, WithTimeAxis("x:1"), /*strict=*/true);
  // The recorded pair keeps its input and output but now says what the rewritten loop is: streamable.
  const auto pairs = testing::RecordedPairs(model);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_TRUE(pairs[0].streamable);
  ModelIndex index(model);
  EXPECT_TRUE(CheckModel(index, Analyze(index)).empty());
}

TEST(TimeAxis, AnAxisNoRecurrenceRunsAlongChangesNothingAndSaysWhy) {
  onnx::ModelProto model = ParseModel(kFixedLoop);
  RewriteOutcome outcome = RewriteModel(model, WithTimeAxis("x:2"), /*strict=*/false);
  EXPECT_THAT(WarningTexts(outcome.warnings),
              ::testing::Contains(HasSubstr("--time-axis x:2: no recurrent node or loop runs along x:2")));
  EXPECT_EQ(testing::DeclaredShape(model.graph(), "x"), "[batch,6,3]");
  onnx::ModelProto other = ParseModel(kFixedLoop);
  outcome = RewriteModel(other, WithTimeAxis("nope:1"), /*strict=*/false);
  EXPECT_THAT(WarningTexts(outcome.warnings), ::testing::Contains(HasSubstr("no graph input 'nope'")));
}

TEST(TimeAxis, ConstantUsedElsewhereIsNotReplaced) {
  std::string text = kFixedLoop;
  // M also sizes something else: replacing it could change what that computes.
  text.replace(text.find("  y = Transpose"), 0, "  M2 = Add (M, M)\n");
  onnx::ModelProto model = ParseModel(text);
  ModelIndex index(model);
  TimeAxisPlan plan = PlanTimeAxes(index, {ParseTimeAxis("x:1")});
  EXPECT_FALSE(plan.Changes());
  EXPECT_THAT(plan.warnings, ElementsAre(HasSubstr("constant 'M' (6) is also used by Add")));
  // Refused, the option is no longer the advice of the state's warning ("rewrite with --time-axis x:1").
  RewriteOutcome outcome = RewriteModel(model, WithTimeAxis("x:1"), /*strict=*/false);
  EXPECT_THAT(WarningTexts(outcome.warnings), ::testing::Contains(HasSubstr("--time-axis x:1 did not apply (see its warning)")));
  EXPECT_THAT(WarningTexts(outcome.warnings), ::testing::Not(::testing::Contains(HasSubstr("rewrite with --time-axis x:1"))));
}

/// Expects the rewrite of two stacked layers: two streamable pairs, and `check` passes.
void ExpectTwoStreamablePairsThatCheck(const onnx::ModelProto& model) {
  const auto pairs = testing::RecordedPairs(model);
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_TRUE(pairs[0].streamable);
  EXPECT_TRUE(pairs[1].streamable);
  ModelIndex index(model);
  EXPECT_TRUE(CheckModel(index, Analyze(index)).empty());
}

TEST(TimeAxis, StackedTf2onnxLayersGetTheFedLengthEverywhereItHides) {
  // Before: "no Loop walks x:1 with the constant trip count 6; nothing changed for it". The shared trip
  // count, the float bounds (main graph and bodies) and both Reshape targets hold the length.
  onnx::ModelProto model = ParseModel(testing::Tf2onnxStacked());
  RewriteOutcome outcome = RewriteModel(model, WithTimeAxis("x:1"), /*strict=*/true);
  EXPECT_THAT(outcome.time_axis_changes,
              ElementsAre(::testing::AllOf(HasSubstr("4 constant(s) become the fed length (Loop"),
                                           HasSubstr("), 2 Reshape target(s) infer it"))));
  const onnx::GraphProto& g = model.graph();
  EXPECT_EQ(testing::DeclaredShape(g, "x"), "[1,x_time,3]");
  for (const char* target : {"s1", "s2"}) {
    const onnx::TensorProto* shape = FindInitializer(g, target);
    ASSERT_NE(shape, nullptr) << target;
    EXPECT_EQ(shape->int64_data(0), -1) << target;
  }
  EXPECT_EQ(Producer(g, "T")->op_type(), "Cast");  // the float bound of the initial condition
  ExpectTwoStreamablePairsThatCheck(model);
}

/// The stacked layers with one float bound for all: `T = Cast(M)` in the main graph, read by the initial
/// condition and by both bodies from outer scope (the trip count's one constant, cast where tf2onnx
/// compares floats). `extra`: nodes added to the main graph.
std::string CastBoundStacked(const std::string& extra = "") {
  std::string text = testing::Tf2onnxStacked();
  text.replace(text.find("float T = {6.0}, "), std::string("float T = {6.0}, ").size(), "");
  text.replace(text.find("  c0 = Less (z, T)"), 0, "  T = Cast <to = 1> (M)\n" + extra);
  for (const std::string n : {"1", "2"}) {
    const std::string bound = "    bound" + n + " = Constant <value = float {6.0}> ()\n";
    text.replace(text.find(bound), bound.size(), "    bound" + n + " = Identity (T)\n");
  }
  return text;
}

TEST(TimeAxis, OneTripCountCastToTheBoundOfEveryLoopIsOneFactAboutTheLength) {
  // Before: "constant 'M' (6) is also used by Cast": the loops sharing M stayed fixed, 0 of 2 streamed.
  onnx::ModelProto model = ParseModel(CastBoundStacked());
  RewriteOutcome outcome = RewriteModel(model, WithTimeAxis("x:1"), /*strict=*/true);
  EXPECT_THAT(outcome.time_axis_changes, ElementsAre(HasSubstr("--time-axis x:1: length 6 -> 'x_time'")));
  const onnx::GraphProto& g = model.graph();
  EXPECT_EQ(testing::DeclaredShape(g, "x"), "[1,x_time,3]");
  // M is the fed length now; the Cast keeps reading it, so every bound is the fed length too.
  const onnx::NodeProto* m = Producer(g, "M");
  ASSERT_NE(m, nullptr);
  EXPECT_NE(m->op_type(), "Constant");
  ASSERT_NE(Producer(g, "T"), nullptr);
  EXPECT_EQ(Producer(g, "T")->op_type(), "Cast");
  EXPECT_EQ(Producer(g, "T")->input(0), "M");
  ExpectTwoStreamablePairsThatCheck(model);
  const std::string once = testing::Bytes(model);
  EXPECT_FALSE(RewriteModel(model, WithTimeAxis("x:1"), /*strict=*/true).changed);
  EXPECT_EQ(testing::Bytes(model), once);
}

TEST(TimeAxis, ACastOfTheTripCountUsedForSomethingElseStillRefuses) {
  // T also scales a value the loops do not compare against: replacing M would change what it computes.
  onnx::ModelProto model = ParseModel(CastBoundStacked("  scaled = Mul (T, T)\n"));
  ModelIndex index(model);
  TimeAxisPlan plan = PlanTimeAxes(index, {ParseTimeAxis("x:1")});
  EXPECT_FALSE(plan.Changes());
  EXPECT_THAT(plan.warnings, ElementsAre(HasSubstr("constant 'M' (6) is also used by Mul")));
}

}  // namespace

namespace {

/// PyTorch without dynamic axes: x [1, 6, 2] viewed as [1, 6, 2, 1] and back (the Reshape constants hold
/// the length 6), a GRU over time, its frames declared [6, 1, 1, 3].
const char* kFixedExport = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[1, 6, 2] x, float[1, 9, 2] w, float[1, 9, 3] r) => (float[6, 1, 1, 3] y) {
  s4 = Constant <value = int64[4] {1, 6, 2, 1}> ()
  v = Reshape (x, s4)
  s3 = Constant <value = int64[3] {1, 6, 2}> ()
  back = Reshape (v, s3)
  tm = Transpose <perm = [1, 0, 2]> (back)
  zero = Constant <value = int64[1] {0}> ()
  end = Constant <value = int64[1] {6}> ()
  one = Constant <value = int64[1] {1}> ()
  all = Slice (tm, zero, end, zero, one)
  y, h = GRU <hidden_size = 3> (all, w, r)
})";

TEST(TimeAxis, AFixedLengthExportWithoutLoopsOpens) {
  onnx::ModelProto model = ParseModel(kFixedExport);
  const RewriteOutcome outcome = RewriteModel(model, WithTimeAxis("x:1"), /*strict=*/true);
  EXPECT_THAT(outcome.time_axis_changes,
              ElementsAre(HasSubstr("2 Reshape target(s) infer it, 1 Slice(s) run to the end")));
  EXPECT_EQ(testing::DeclaredShape(model.graph(), "x"), "[1,x_time,2]");
  EXPECT_EQ(testing::DeclaredShape(model.graph(), "y"), "[x_time,1,1,3]");
  const auto pairs = testing::RecordedPairs(model);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_TRUE(pairs[0].streamable);
  // The Reshape targets infer the length; the Slice runs to the end.
  ModelIndex index(model);
  EXPECT_EQ(*IntValues(index, {}, Producer(model.graph(), "v")->input(1)), (std::vector<int64_t>{1, -1, 2, 1}));
  EXPECT_EQ(IntValues(index, {}, Producer(model.graph(), "all")->input(2))->front(), INT64_MAX);
  // Rewritten again: nothing changes.
  const std::string bytes = testing::Bytes(model);
  RewriteModel(model, WithTimeAxis("x:1"), /*strict=*/true);
  EXPECT_EQ(testing::Bytes(model), bytes);
}

TEST(TimeAxis, AConstantOfTheWholeLengthIsRefusedNamed) {
  std::string text = kFixedExport;
  // A positional table of the whole length added to the frames: no input's length explains it.
  text.replace(text.find("  v = Reshape"), 0,
               "  pos = Constant <value = float[1, 6, 2] {0,1,2,3,4,5,6,7,8,9,10,11}> ()\n"
               "  xp = Add (x, pos)\n");
  text.replace(text.find("v = Reshape (x, s4)"), std::string("v = Reshape (x, s4)").size(), "v = Reshape (xp, s4)");
  onnx::ModelProto model = ParseModel(text);
  const RewriteOutcome outcome = RewriteModel(model, WithTimeAxis("x:1"), /*strict=*/false);
  EXPECT_THAT(
      WarningTexts(outcome.warnings),
      ::testing::Contains(::testing::AllOf(HasSubstr("holds the whole length 6 in a constant"), HasSubstr("'pos'"))));
  EXPECT_EQ(testing::DeclaredShape(model.graph(), "x"), "[1,6,2]");
}

}  // namespace
}  // namespace rnnstate::time_axis_test
