// `rnnstate export triton`'s config.pbtxt parsed as Triton's ModelConfig text format, strictly: the
// message subset rnnstate writes is tests/unit/contract/triton_model_config.proto (Triton's names and
// field numbers), so a misspelt or unknown field, a wrong type or a malformed list fails to parse.

#include <gmock/gmock.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <string>

#include "contract/export_triton.h"
#include "io/model_io.h"
#include "pipeline_stages.h"
#include "rnnstate/error.h"
#include "test_models.h"
#include "test_names.h"
#include "triton_model_config.pb.h"

namespace rnnstate::triton_config_test {
namespace {

using namespace test_names;

/// Collects the parser's errors instead of printing them.
class Errors : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    text += std::to_string(line + 1) + ":" + std::to_string(column + 1) + ": " + message + "\n";
  }
  std::string text;
};

/// `config` parsed strictly as inference.ModelConfig; fails the test with the parser's errors.
inference::ModelConfig Parsed(const std::string& config) {
  google::protobuf::TextFormat::Parser parser;
  Errors errors;
  parser.RecordErrorsTo(&errors);
  inference::ModelConfig parsed;
  EXPECT_TRUE(parser.ParseFromString(config, &parsed)) << errors.text << config;
  return parsed;
}

// A batch-first PyTorch-like model: x [batch, seq, 2] transposed into the LSTM, y [batch, seq, 3].
const char* kBatchFirst = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, seq, 2] x, float[1, 12, 2] W, float[1, 12, 3] R) => (float[batch, seq, 3] y) {
  X = Transpose <perm = [1, 0, 2]> (x)
  Y = LSTM <hidden_size = 3> (X, W, R)
  axes = Constant <value = int64[1] {1}> ()
  S = Squeeze (Y, axes)
  y = Transpose <perm = [1, 0, 2]> (S)
})";

/// `text` with its graph inputs W and R turned into initializers: weights are not inputs a client sends.
onnx::ModelProto WithWeights(const char* text) {
  onnx::ModelProto model = ParseModel(text);
  auto* inputs = model.mutable_graph()->mutable_input();
  for (int i = inputs->size() - 1; i >= 0; --i) {
    const onnx::ValueInfoProto& input = inputs->Get(i);
    if (input.name() != "W" && input.name() != "R") continue;
    std::vector<int64_t> dims;
    for (const auto& dim : input.type().tensor_type().shape().dim()) dims.push_back(dim.dim_value());
    testing::AddFloatInitializer(*model.mutable_graph(), input.name(), dims, {0.1F, -0.2F, 0.3F});
    inputs->DeleteSubrange(i, 1);
  }
  return model;
}

onnx::ModelProto Rewritten(const char* text, PackKind pack, StateLayout layout) {
  onnx::ModelProto model = WithWeights(text);
  RewriteModel(model, Packing(pack, layout, StateInputMode::kRequired), false);
  return model;
}

/// The error of a config asked with max_batch_size 8.
std::string ErrorOf(const onnx::ModelProto& model) {
  return ErrorMessage([&] { TritonModelConfig(model, "m", 8); }, ExitCode::kUnsupported);
}

TEST(TritonModelConfig, PackedModelParsesAsAWholeConfig) {
  const std::string text =
      TritonModelConfig(Rewritten(kBatchFirst, PackKind::kTensor, StateLayout::kAsNode), "lstm", 4);
  const inference::ModelConfig config = Parsed(text);
  EXPECT_EQ(config.name(), "lstm");
  EXPECT_EQ(config.backend(), "onnxruntime");
  EXPECT_EQ(config.max_batch_size(), 4);
  ASSERT_EQ(config.input_size(), 1);
  EXPECT_EQ(config.input(0).name(), "x");
  EXPECT_EQ(config.input(0).data_type(), inference::TYPE_FP32);
  EXPECT_THAT(config.input(0).dims(), ElementsAre(-1, 2));
  ASSERT_EQ(config.output_size(), 1);
  EXPECT_EQ(config.output(0).name(), "y");
  EXPECT_THAT(config.output(0).dims(), ElementsAre(-1, 3));
  ASSERT_TRUE(config.has_sequence_batching());
  ASSERT_EQ(config.sequence_batching().state_size(), 1);
  const auto& state = config.sequence_batching().state(0);
  EXPECT_EQ(state.input_name(), "state_in");
  EXPECT_EQ(state.output_name(), "state_out");
  EXPECT_EQ(state.data_type(), inference::TYPE_FP32);
  EXPECT_THAT(state.dims(), ElementsAre(6));
  ASSERT_EQ(state.initial_state_size(), 1);
  EXPECT_TRUE(state.initial_state(0).zero_data());
  EXPECT_THAT(state.initial_state(0).dims(), ElementsAre(6));
}

TEST(TritonModelConfig, BatchFirstStatesAreOneStateEach) {
  const inference::ModelConfig config =
      Parsed(TritonModelConfig(Rewritten(kBatchFirst, PackKind::kNone, StateLayout::kBatchFirst), "m", 8));
  ASSERT_EQ(config.sequence_batching().state_size(), 2);
  EXPECT_EQ(config.sequence_batching().state(0).input_name(), "LSTM_1.h_in");
  EXPECT_THAT(config.sequence_batching().state(1).dims(), ElementsAre(1, 3));
  EXPECT_EQ(config.input_size(), 1);  // the states are not inputs a client sends
}

TEST(TritonModelConfig, ABatchOnlyInputIsOneElementReshapedAway) {
  const char* with_gain = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, seq, 2] x, float[batch] gain, float[1, 12, 2] W, float[1, 12, 3] R) => (float[batch, seq, 3] y) {
  X = Transpose <perm = [1, 0, 2]> (x)
  Y = LSTM <hidden_size = 3> (X, W, R)
  axes = Constant <value = int64[1] {1}> ()
  S = Squeeze (Y, axes)
  T = Transpose <perm = [1, 0, 2]> (S)
  g3 = Constant <value = int64[3] {-1, 1, 1}> ()
  G = Reshape (gain, g3)
  y = Mul (T, G)
})";
  const inference::ModelConfig config =
      Parsed(TritonModelConfig(Rewritten(with_gain, PackKind::kTensor, StateLayout::kAsNode), "m", 8));
  ASSERT_EQ(config.input_size(), 2);
  EXPECT_EQ(config.input(1).name(), "gain");
  EXPECT_THAT(config.input(1).dims(), ElementsAre(1));
  EXPECT_TRUE(config.input(1).has_reshape());
  EXPECT_EQ(config.input(1).reshape().shape_size(), 0);
}

TEST(TritonModelConfig, AnOutputNotBatchFirstIsLeftOutWithAWarning) {
  const char* with_h = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, seq, 2] x, float[1, 12, 2] W, float[1, 12, 3] R) => (float[batch, seq, 3] y, float[1, batch, 3] h_n) {
  X = Transpose <perm = [1, 0, 2]> (x)
  Y, h_n = LSTM <hidden_size = 3> (X, W, R)
  axes = Constant <value = int64[1] {1}> ()
  S = Squeeze (Y, axes)
  y = Transpose <perm = [1, 0, 2]> (S)
})";
  std::vector<std::string> warnings;
  const inference::ModelConfig config =
      Parsed(TritonModelConfig(Rewritten(with_h, PackKind::kTensor, StateLayout::kAsNode), "m", 8, &warnings));
  ASSERT_EQ(config.output_size(), 1);
  EXPECT_EQ(config.output(0).name(), "y");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("output 'h_n' [1,batch,3] has its batch on axis 1"));
  EXPECT_THAT(warnings[0], HasSubstr("left out of config.pbtxt"));
}

// PyTorch's time-major LSTM: X [seq, batch, 2] straight into the node, Y [seq, 1, batch, 3].
const char* kTimeMajor = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[1, 12, 2] W, float[1, 12, 3] R) => (float[seq, 1, batch, 3] Y) {
  Y = LSTM <hidden_size = 3> (X, W, R)
})";

TEST(TritonModelConfig, ATimeMajorModelIsExportedUnbatched) {
  std::vector<std::string> warnings;
  const inference::ModelConfig config = Parsed(
      TritonModelConfig(Rewritten(kTimeMajor, PackKind::kTensor, StateLayout::kAsNode), "m", std::nullopt, &warnings));
  EXPECT_EQ(config.max_batch_size(), 0);
  // Whole shapes: the batch 1 where Triton feeds it (one sequence per request), -1 in the outputs, which the
  // onnxruntime backend compares with the model's dims exactly.
  ASSERT_EQ(config.input_size(), 1);
  EXPECT_THAT(config.input(0).dims(), ElementsAre(-1, 1, 2));
  ASSERT_EQ(config.output_size(), 1);
  EXPECT_THAT(config.output(0).dims(), ElementsAre(-1, 1, -1, 3));
  ASSERT_EQ(config.sequence_batching().state_size(), 1);
  const auto& state = config.sequence_batching().state(0);
  EXPECT_THAT(state.dims(), ElementsAre(1, 6));
  ASSERT_EQ(state.initial_state_size(), 1);
  EXPECT_THAT(state.initial_state(0).dims(), ElementsAre(1, 6));
  EXPECT_TRUE(state.initial_state(0).zero_data());
  ASSERT_FALSE(warnings.empty());
  EXPECT_THAT(warnings[0], HasSubstr("data input 'X' [seq,batch,2] has its batch on axis 1"));
  EXPECT_THAT(warnings[0], HasSubstr("exported with max_batch_size 0"));
  EXPECT_THAT(warnings[0], HasSubstr("batch_first"));
}

TEST(TritonModelConfig, UnbatchedStatesKeepTheirLayout) {
  // The nodes' own [1, batch, 3] states, which a batched config refuses: whole, the batch 1.
  const inference::ModelConfig config =
      Parsed(TritonModelConfig(Rewritten(kTimeMajor, PackKind::kNone, StateLayout::kAsNode), "m", std::nullopt));
  EXPECT_EQ(config.max_batch_size(), 0);
  ASSERT_EQ(config.sequence_batching().state_size(), 2);
  EXPECT_THAT(config.sequence_batching().state(0).dims(), ElementsAre(1, 1, 3));
  EXPECT_THAT(config.sequence_batching().state(1).dims(), ElementsAre(1, 1, 3));
}

TEST(TritonModelConfig, AskedToBatchATimeMajorModelRefusesWithTheOptionThatWorks) {
  const onnx::ModelProto model = Rewritten(kTimeMajor, PackKind::kTensor, StateLayout::kAsNode);
  const std::string why = ErrorOf(model);
  EXPECT_THAT(why, HasSubstr("data input 'X' [seq,batch,2] has its batch on axis 1"));
  EXPECT_THAT(why, HasSubstr("--max-batch-size 8 asks it to batch: export it with --max-batch-size 0"));
  EXPECT_EQ(Parsed(TritonModelConfig(model, "m", 0)).max_batch_size(), 0);
}

TEST(TritonModelConfig, MaxBatchSizeZeroGivesTheUnbatchedConfigOfABatchFirstModel) {
  const inference::ModelConfig config =
      Parsed(TritonModelConfig(Rewritten(kBatchFirst, PackKind::kTensor, StateLayout::kAsNode), "m", 0));
  EXPECT_EQ(config.max_batch_size(), 0);
  EXPECT_THAT(config.input(0).dims(), ElementsAre(1, -1, 2));
  EXPECT_THAT(config.output(0).dims(), ElementsAre(-1, -1, 3));
  EXPECT_THAT(config.sequence_batching().state(0).dims(), ElementsAre(1, 6));
  // Without --max-batch-size the batch-first model stays batched.
  EXPECT_EQ(Parsed(TritonModelConfig(Rewritten(kBatchFirst, PackKind::kTensor, StateLayout::kAsNode), "m",
                                     std::nullopt))
                .max_batch_size(),
            kDefaultMaxBatchSize);
}

TEST(TritonModelConfig, AScalarDataInputIsOneElementReshapedAwayUnbatched) {
  // Weights fed as graph inputs have no batch: unbatched, each is a whole-shape input; a scalar gain too.
  const char* with_scalar = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float gain, float[1, 12, 2] W, float[1, 12, 3] R) => (float[seq, 1, batch, 3] Z) {
  Y = LSTM <hidden_size = 3> (X, W, R)
  Z = Mul (Y, gain)
})";
  onnx::ModelProto model = ParseModel(with_scalar);
  PlanOptions packed;
  packed.pack = PackKind::kTensor;
  packed.mode = StateInputMode::kRequired;
  RewriteModel(model, packed, false);
  const inference::ModelConfig config = Parsed(TritonModelConfig(model, "m", std::nullopt));
  ASSERT_EQ(config.input_size(), 4);
  EXPECT_EQ(config.input(1).name(), "gain");
  EXPECT_THAT(config.input(1).dims(), ElementsAre(1));
  EXPECT_EQ(config.input(1).reshape().shape_size(), 0);
  EXPECT_THAT(config.input(2).dims(), ElementsAre(1, 12, 2));
}

TEST(TritonModelConfig, UnbatchedRefusesWhatTritonCannotCarryAtAll) {
  // Defaults mode: the packed input has a default, invisible to ONNX Runtime's C API. Asked to batch, the
  // refusal is that one, not advice to use --max-batch-size 0, which would be refused the same way.
  onnx::ModelProto defaults = WithWeights(kTimeMajor);
  PlanOptions options;
  options.pack = PackKind::kTensor;
  RewriteModel(defaults, options, false);
  EXPECT_THAT(ErrorOf(defaults), HasSubstr("--state-inputs required"));
  EXPECT_THAT(ErrorOf(defaults), ::testing::Not(HasSubstr("--max-batch-size 0")));
  try {
    TritonModelConfig(defaults, "m", std::nullopt);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("--state-inputs required"));
  }
}

TEST(TritonModelConfig, ABundledPyTorchModelParses) {
  OpenedModel opened = OpenModel(std::string(RNNSTATE_SOURCE_DIR) + "/models/torch/lstm2_bf_dyn.onnx");
  onnx::ModelProto model = opened.file.model();
  PlanOptions options;
  options.pack = PackKind::kTensor;
  options.mode = StateInputMode::kRequired;
  RewriteModel(model, options, false, opened.directory);
  const inference::ModelConfig config = Parsed(TritonModelConfig(model, "lstm2_bf_dyn", 8));
  EXPECT_EQ(config.name(), "lstm2_bf_dyn");
  EXPECT_GE(config.input_size(), 1);
  EXPECT_EQ(config.sequence_batching().state_size(), 1);
}

TEST(TritonModelConfig, StrictParsingRejectsAFieldTritonDoesNotHave) {
  google::protobuf::TextFormat::Parser parser;
  Errors errors;
  parser.RecordErrorsTo(&errors);
  inference::ModelConfig config;
  EXPECT_FALSE(parser.ParseFromString("name: \"m\"\nbackend: \"onnxruntime\"\nmax_batch: 8\n", &config));
  EXPECT_THAT(errors.text, HasSubstr("max_batch"));
}

}  // namespace
}  // namespace rnnstate::triton_config_test
