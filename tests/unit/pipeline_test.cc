// The public façade (include/rnnstate/pipeline.h): what a program embedding rnnstate sees. Only public
// headers are included here.

#include "rnnstate/pipeline.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_models.h"
#include "test_names.h"

namespace rnnstate::pipeline_test {
namespace {

using namespace test_names;

TEST(Pipeline, RewriteCheckAndReportOneModelInMemory) {
  onnx::ModelProto model = testing::ParseModel(kGru);
  EXPECT_EQ(CheckForStreaming(model).problems.size(), 1u);  // h is not exposed
  EXPECT_EQ(ReportOf(model, "gru.onnx").at("nodes").size(), 1u);
  RewriteResult result = RewriteForStreaming(model);
  EXPECT_TRUE(result.changed);
  ASSERT_EQ(result.pairs.size(), 1u);
  EXPECT_EQ(result.pairs[0].input, "GRU_0.h_in");
  EXPECT_THAT(CheckForStreaming(model).problems, IsEmpty());
  EXPECT_FALSE(RewriteForStreaming(model).changed);  // idempotent
}

TEST(Pipeline, RewriteListsItsPlanLinesAfterFreeingThePlanning) {
  // The plan's edits are freed before the output's validation: their lines are written first.
  onnx::ModelProto model = testing::ParseModel(kGru);
  const RewriteResult result = RewriteForStreaming(model);
  ASSERT_TRUE(result.changed);
  ASSERT_EQ(result.plan_lines.size(), 1u);
  EXPECT_THAT(result.plan_lines[0], HasSubstr("new input 'GRU_0.h_in'"));
  // Nothing to change (no validation, nothing freed): the lines are still the plan's.
  const RewriteResult again = RewriteForStreaming(model);
  EXPECT_FALSE(again.changed);
  EXPECT_EQ(again.plan_lines.size(), 1u);
}

TEST(Pipeline, ErrorsCarryTheCliExitCode) {
  onnx::ModelProto model = testing::ParseModel(R"(<ir_version: 8, opset_import: ["" : 6]>
g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, batch, 3] Y) {
  Y = GRU <hidden_size = 3> (X, W, R)
})");
  ExpectError([&] { RewriteForStreaming(model); }, ExitCode::kUnsupported, "");
}

/// A causal convolution (2 frames of zeros in front of a kernel of 3) before a GRU, at ai.onnx opset OPSET.
std::string CausalConvGruAt(int opset) {
  return "<ir_version: 7, opset_import: [\"\" : " + std::to_string(opset) + R"(]>
g (float[batch, 2, seq] x, float[2, 2, 3] k, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, batch, 3] Y) {
  c = Conv <pads = [2, 0]> (x, k)
  t = Transpose <perm = [2, 0, 1]> (c)
  Y = GRU <hidden_size = 3> (t, W, R)
})";
}

TEST(Pipeline, ReportAndCheckShowAModelOfAnOpsetOnlyRewriteRefuses) {
  // Opset 6: the rewrite refuses it (exit 4); report and check judge it as it is, planning no window's
  // context (whose default once refused the report too).
  const onnx::ModelProto old = testing::ParseModel(CausalConvGruAt(6));
  const Json report = ReportOf(old, "old.onnx");
  ASSERT_EQ(report.at("nodes").size(), 1u);
  EXPECT_THAT(report.dump(), ::testing::HasSubstr("ai.onnx opset 6 is not supported"));
  EXPECT_FALSE(CheckForStreaming(old).problems.empty());
  onnx::ModelProto copy = old;
  ExpectError([&] { RewriteForStreaming(copy); }, ExitCode::kUnsupported, "ai.onnx opset 6 is not supported");
  // Opset 7 (no Expand): the window's context is carried, its zeros tiled (the GRU's own zero default still
  // needs Expand: skipped with a warning).
  onnx::ModelProto at7 = testing::ParseModel(CausalConvGruAt(7));
  const RewriteResult result = RewriteForStreaming(at7);
  ASSERT_EQ(result.pairs.size(), 1u);
  EXPECT_EQ(result.pairs[0].kind, "context");
}

/// kGru with an initializer the GRU does not read whose float_data holds 1 value where FLOAT [4] takes 4.
onnx::ModelProto GruWithShortTensor() {
  onnx::ModelProto model = testing::ParseModel(kGru);
  onnx::TensorProto* tensor = model.mutable_graph()->add_initializer();
  tensor->set_name("short");
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  tensor->add_dims(4);
  tensor->add_float_data(0.0f);
  return model;
}

constexpr char kShortTensor[] = "invalid model: tensor 'short' at graph.initializer[0]: float_data has 1 value";

TEST(Pipeline, AModelInMemoryHasItsTensorValuesChecked) {
  const onnx::ModelProto model = GruWithShortTensor();
  onnx::ModelProto copy = model;
  ExpectError([&] { RewriteForStreaming(copy); }, ExitCode::kBadInput, kShortTensor);
  EXPECT_EQ(copy.SerializeAsString(), model.SerializeAsString());
  ExpectError([&] { CheckForStreaming(model); }, ExitCode::kBadInput, kShortTensor);
  ExpectError([&] { ReportOf(model); }, ExitCode::kBadInput, kShortTensor);
  ExpectError([&] { ReportModel(model, "", ReportFormat::kText, InlineTensors::kCheck); }, ExitCode::kBadInput,
              kShortTensor);
}

TEST(Pipeline, TensorValuesCheckedWhenOpenedAreNotCheckedAgain) {
  // The caller's word is taken (the CLI's OpenModel refuses this model before the façade sees it): the
  // short tensor, which no node reads, passes every later check.
  const auto opened = InlineTensors::kCheckedWhenOpened;
  onnx::ModelProto model = GruWithShortTensor();
  EXPECT_EQ(ReportModel(model, "", ReportFormat::kJson, opened).json.at("nodes").size(), 1u);
  EXPECT_EQ(CheckForStreaming(model, {}, opened).problems.size(), 1u);  // h is not exposed
  const RewriteResult result = RewriteForStreaming(model, {}, false, "", opened);
  EXPECT_TRUE(result.changed);
  EXPECT_EQ(result.pairs.size(), 1u);
  // Only the tensors' values are skipped: the model's other rules still apply.
  onnx::ModelProto broken = testing::ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[1, 9, 2] W) => (float[seq, 1, batch, 3] Y) {
  Y = GRU <hidden_size = 3> (X, W, R)
})");
  ExpectError([&] { RewriteForStreaming(broken, {}, false, "", opened); }, ExitCode::kBadInput, "invalid model: ");
  ExpectError([&] { CheckForStreaming(broken, {}, opened); }, ExitCode::kBadInput, "invalid model: ");
  ExpectError([&] { ReportModel(broken, "", ReportFormat::kText, opened); }, ExitCode::kBadInput, "invalid model: ");
}

TEST(Pipeline, TheTimeAxisCopyHasItsTensorValuesCheckedWhateverTheCallerSays) {
  // `--time-axis` rewrites tensors of a copy after the file was opened: the caller's word is not taken there.
  onnx::ModelProto model = testing::ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[5, 1, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[5, 1, 1, 3] Y) {
  Y = GRU <hidden_size = 3> (X, W, R)
})");
  *model.mutable_graph()->add_initializer() = GruWithShortTensor().graph().initializer(0);
  PlanOptions fixed_length;
  fixed_length.time_axes.push_back(ParseTimeAxis("X:0"));
  ExpectError([&] { RewriteForStreaming(model, fixed_length, false, "", InlineTensors::kCheckedWhenOpened); },
              ExitCode::kBadInput, "tensor 'short'");
  // Without the time axis the caller's word stands.
  EXPECT_TRUE(RewriteForStreaming(model, {}, false, "", InlineTensors::kCheckedWhenOpened).changed);
}

}  // namespace
}  // namespace rnnstate::pipeline_test
