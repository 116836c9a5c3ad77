// The public façade (include/rnnstate/pipeline.h): what a program embedding rnnstate sees. Only public
// headers are included here.

#include "rnnstate/pipeline.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_models.h"

namespace rnnstate::pipeline_test {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const char* kGru = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, batch, 3] Y) {
  Y = GRU <hidden_size = 3> (X, W, R)
})";

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

TEST(Pipeline, ErrorsCarryTheCliExitCode) {
  onnx::ModelProto model = testing::ParseModel(R"(<ir_version: 8, opset_import: ["" : 6]>
g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, batch, 3] Y) {
  Y = GRU <hidden_size = 3> (X, W, R)
})");
  try {
    RewriteForStreaming(model);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUnsupported);
  }
}

}  // namespace
}  // namespace rnnstate::pipeline_test
