// The two entry points of `export triton` (contract/export_triton.h) on what the behaviour-named tests
// (triton_config_test, export_test) leave out: the default max_batch_size, a state batch fixed by the model
// or a data input without the batch (exported unbatched with the reason first, or refused when a batch
// size is asked), a state row that is not fixed, and the not-streamable warnings of TritonStateConfig.

#include "contract/export_triton.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pipeline_stages.h"
#include "rnnstate/error.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::export_triton_test {
namespace {

using namespace test_names;

/// A batch-first GRU model over x [`batch`, seq, 2] (W, R initializers) with `extra` inputs, rewritten
/// with --pack tensor --state-inputs required.
onnx::ModelProto BatchFirstGru(const std::string& batch, const std::string& extra = "") {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[)" + batch + R"(, seq, 2] x)" +
                                      extra + R"() => (float[)" + batch + R"(, seq, 3] y) {
  X = Transpose <perm = [1, 0, 2]> (x)
  Y = GRU <hidden_size = 3> (X, W, R)
  axes = Constant <value = int64[1] {1}> ()
  S = Squeeze (Y, axes)
  y = Transpose <perm = [1, 0, 2]> (S)
})");
  testing::AddFloatInitializer(*model.mutable_graph(), "W", {1, 9, 2}, {0.1F, -0.2F});
  testing::AddFloatInitializer(*model.mutable_graph(), "R", {1, 9, 3}, {0.3F, 0.1F});
  RewriteModel(model, Packing(PackKind::kTensor, StateLayout::kAsNode, StateInputMode::kRequired), false);
  return model;
}

TEST(TritonModelConfig, BatchesByTheDefaultSizeWhenNoneIsAsked) {
  std::vector<std::string> warnings{"stale"};
  const std::string config = TritonModelConfig(BatchFirstGru("batch"), "gru", std::nullopt, &warnings);
  EXPECT_THAT(config, HasSubstr("max_batch_size: " + std::to_string(kDefaultMaxBatchSize) + "\n"));
  EXPECT_THAT(config, HasSubstr("name: \"x\""));
  EXPECT_THAT(config, HasSubstr("name: \"y\""));
  EXPECT_THAT(config, Not(HasSubstr("name: \"W\"")));  // an initializer is no input a client sends
  EXPECT_THAT(config, HasSubstr("dims: [ -1, 2 ]"));
  EXPECT_TRUE(warnings.empty());
  EXPECT_THAT(TritonModelConfig(BatchFirstGru("batch"), "gru", 3), HasSubstr("max_batch_size: 3\n"));
}

TEST(TritonModelConfig, AFixedBatchIsExportedUnbatchedWithTheReasonFirst) {
  std::vector<std::string> warnings;
  const std::string config = TritonModelConfig(BatchFirstGru("1"), "gru", std::nullopt, &warnings);
  EXPECT_THAT(config, HasSubstr("max_batch_size: 0\n"));
  ASSERT_FALSE(warnings.empty());
  EXPECT_THAT(warnings.front(), HasSubstr("is fixed at 1"));
  EXPECT_THAT(warnings.front(), HasSubstr("max_batch_size 0"));
  EXPECT_THAT(ErrorMessage([] { TritonModelConfig(BatchFirstGru("1"), "gru", 4); }, ExitCode::kUnsupported),
              HasSubstr("--max-batch-size 4 asks it to batch: export it with --max-batch-size 0"));
}

TEST(TritonModelConfig, ADataInputWithoutTheBatchMakesItUnbatched) {
  std::vector<std::string> warnings;
  const std::string config =
      TritonModelConfig(BatchFirstGru("batch", ", float[seq, 2] bias"), "gru", std::nullopt, &warnings);
  EXPECT_THAT(config, HasSubstr("max_batch_size: 0\n"));
  ASSERT_FALSE(warnings.empty());
  EXPECT_THAT(warnings.front(), HasSubstr("data input"));
  EXPECT_THAT(warnings.front(), HasSubstr("has no batch dimension ('batch')"));
}

TEST(TritonStateConfig, NamesTheFileAndLeavesWarningsEmptyForAStreamableModel) {
  std::vector<std::string> warnings{"stale"};
  const std::string config = TritonStateConfig(BatchFirstGru("batch"), "gru.onnx", &warnings);
  EXPECT_THAT(config, ::testing::StartsWith("# Implicit state of gru.onnx (rnnstate export triton)"));
  EXPECT_THAT(config, HasSubstr("sequence_batching"));
  EXPECT_TRUE(warnings.empty());
}

}  // namespace
}  // namespace rnnstate::export_triton_test
