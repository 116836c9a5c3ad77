// TritonUnbatchedConfig (contract/export_triton_unbatched.h) called with the states directly: every dims
// is the whole shape, a symbolic batch written 1 in inputs and states and -1 in outputs; a state whose
// other size is not fixed and a data input without a shape are refused (exit 4); an output without a
// shape is left out with a warning.

#include "contract/export_triton_unbatched.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pipeline_stages.h"
#include "rnnstate/error.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::export_triton_unbatched_test {
namespace {

using namespace test_names;

/// A time-major LSTM, x [seq, batch, 2] -> y [seq, 1, batch, 3] (W, R initializers), rewritten with its
/// states required and as the node takes them ([1, batch, 3] each).
onnx::ModelProto TimeMajorLstm() {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] x) => (float[seq, 1, batch, 3] y) {
  y = LSTM <hidden_size = 3> (x, W, R)
})");
  testing::AddFloatInitializer(*model.mutable_graph(), "W", {1, 12, 2}, {0.1F, -0.2F});
  testing::AddFloatInitializer(*model.mutable_graph(), "R", {1, 12, 3}, {0.3F, 0.1F});
  RewriteModel(model, InMode(StateInputMode::kRequired), false);
  return model;
}

TEST(TritonUnbatchedConfig, WritesWholeShapesWithOneSequencePerRequest) {
  const onnx::ModelProto model = TimeMajorLstm();
  std::vector<std::string> warnings{"stale"};
  const std::string config = TritonUnbatchedConfig(model, "lstm", StateTensorsOf(model), &warnings);
  EXPECT_THAT(config, HasSubstr("name: \"lstm\"\nbackend: \"onnxruntime\"\nmax_batch_size: 0\n"));
  EXPECT_THAT(config, HasSubstr("name: \"x\""));
  EXPECT_THAT(config, HasSubstr("dims: [ -1, 1, 2 ]"));      // x: the batch one sequence
  EXPECT_THAT(config, HasSubstr("dims: [ -1, 1, -1, 3 ]"));  // y: the batch as the model declares it
  EXPECT_THAT(config, HasSubstr("dims: [ 1, 1, 3 ]"));       // each state, whole
  EXPECT_THAT(config, Not(HasSubstr("name: \"W\"")));
  EXPECT_THAT(config, HasSubstr("sequence_batching"));
  EXPECT_TRUE(warnings.empty());
}

TEST(TritonUnbatchedConfig, RefusesAStateSizeThatIsNotFixed) {
  const onnx::ModelProto model = TimeMajorLstm();
  std::vector<StateTensor> tensors = StateTensorsOf(model);
  ASSERT_FALSE(tensors.empty());
  tensors[0].shape.back() = MetaDim{-1, "hidden"};
  ExpectError([&] { TritonUnbatchedConfig(model, "m", tensors, nullptr); }, ExitCode::kUnsupported,
              "its size on axis 2 is not fixed, and Triton's initial_state needs fixed dims");
}

TEST(TritonUnbatchedConfig, RefusesADataInputWithoutAShapeAndLeavesOutSuchAnOutput) {
  onnx::ModelProto model = TimeMajorLstm();
  model.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  std::vector<std::string> warnings;
  const std::string config = TritonUnbatchedConfig(model, "m", StateTensorsOf(model), &warnings);
  EXPECT_THAT(config, Not(HasSubstr("output [")));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("has no declared shape"));
  EXPECT_THAT(warnings[0], HasSubstr("left out of config.pbtxt"));
  model.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  ExpectError([&] { TritonUnbatchedConfig(model, "m", StateTensorsOf(model), nullptr); }, ExitCode::kUnsupported,
              "data input");
}

}  // namespace
}  // namespace rnnstate::export_triton_unbatched_test
