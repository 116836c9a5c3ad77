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

}  // namespace
}  // namespace rnnstate::pipeline_test
