// The sizes --pack deals with: zeros are computed (ConstantOfShape), never stored in the model, whatever the
// hidden size; sizes that overflow 64 bits are refused (exit 4) instead of wrapping or throwing bad_alloc;
// where the opset has no ConstantOfShape for the type, the stored zero row is kept under 1 MiB.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pipeline_stages.h"
#include "rnnstate/error.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::pack_plan_limits_test {
namespace {

using namespace test_names;

/// An LSTM (or GRU) whose W and R have no shape (see Parse): only `hidden_size` says how big its states are.
std::string Unshaped(const std::string& hidden_size, const std::string& batch = "1", const std::string& op = "LSTM",
                     int opset = 14, const std::string& type = "float", const std::string& direction = "forward") {
  return "<ir_version: 7, opset_import: [\"\" : " + std::to_string(opset) + "]>\ng (" + type + "[3, " + batch +
         ", 2] X, " + type + " W, " + type + " R) => (" + type + " Y) {\n  Y = " + op +
         " <hidden_size = " + hidden_size + ", direction = \"" + direction + "\"> (X, W, R)\n}";
}

/// `text` parsed, W and R (inputs 1 and 2) without a shape.
onnx::ModelProto Parse(const std::string& text) {
  onnx::ModelProto model = ParseModel(text);
  for (int input : {1, 2})
    model.mutable_graph()->mutable_input(input)->mutable_type()->mutable_tensor_type()->clear_shape();
  return model;
}

RewriteOutcome Pack(onnx::ModelProto& model, PackKind pack, StateInputMode mode = StateInputMode::kRequired) {
  PlanOptions options;
  options.pack = pack;
  options.mode = mode;
  return RewriteModel(model, options, /*strict=*/false);
}

/// Nodes of type `op` anywhere in `graph` (its subgraphs too).
int CountOps(const onnx::GraphProto& graph, const std::string& op) {
  int count = 0;
  for (const auto& node : graph.node()) {
    count += node.op_type() == op;
    for (const auto& attribute : node.attribute()) {
      if (attribute.has_g()) count += CountOps(attribute.g(), op);
    }
  }
  return count;
}

/// The code and message of the error packing `text` throws ("" when it does not throw).
std::pair<ExitCode, std::string> PackError(const std::string& text, PackKind pack) {
  onnx::ModelProto model = Parse(text);
  try {
    Pack(model, pack);
  } catch (const Error& e) {
    return {e.code(), e.what()};
  }
  return {ExitCode::kOk, ""};
}

TEST(PackLimits, ZerosOfAHugeHiddenSizeAreComputedNotStored) {
  // 2^26 floats per state: stored, the zero row of h and c was 512 MB (a 155-byte input).
  for (PackKind pack : {PackKind::kTensor, PackKind::kSequence}) {
    for (const std::string batch : {"1", "batch"}) {
      onnx::ModelProto model = Parse(Unshaped("67108864", batch));
      ASSERT_TRUE(Pack(model, pack).changed);
      EXPECT_LT(model.ByteSizeLong(), 16u << 10) << "batch " << batch;
      EXPECT_GE(CountOps(model.graph(), "ConstantOfShape"), 1);
      EXPECT_EQ(CountOps(model.graph(), "Tile"), 0);
    }
  }
}

TEST(PackLimits, SizesOverflowingSixtyFourBitsAreRefused) {
  // h and c of 2^62 each: 2^63 columns (the tensor's width wrapped); bidirectional: 2 x 2^62 per state.
  for (const std::string& text : {Unshaped("4611686018427387904"), Unshaped("9223372036854775807"),
                                  Unshaped("4611686018427387904", "1", "GRU", 14, "float", "bidirectional")}) {
    const auto [code, message] = PackError(text, PackKind::kTensor);
    EXPECT_EQ(code, ExitCode::kUnsupported) << message;
    EXPECT_THAT(message, HasSubstr("per batch row overflow 64 bits"));
  }
  // Elements that fit int64 but whose bytes do not (4 bytes x 2^62), one row or a fixed batch of rows.
  for (const std::string& text : {Unshaped("4611686018427387904"), Unshaped("4", "4611686018427387904")}) {
    const auto [code, message] = PackError(text, PackKind::kSequence);
    EXPECT_EQ(code, ExitCode::kUnsupported) << message;
    EXPECT_THAT(message, HasSubstr("would not fit in 2^63 bytes"));
  }
  const auto [code, message] = PackError(Unshaped("4", "4611686018427387904"), PackKind::kTensor);
  EXPECT_EQ(code, ExitCode::kUnsupported) << message;
  EXPECT_THAT(message, HasSubstr("zeros [4611686018427387904,8] of float32 would not fit in 2^63 bytes"));
}

TEST(PackLimits, WithoutConstantOfShapeTheStoredZeroRowStaysSmall) {
  // Opset 8 has no ConstantOfShape: a small zero row is stored and tiled, a big one refused.
  onnx::ModelProto small = Parse(Unshaped("3", "batch", "GRU", 8));
  ASSERT_TRUE(Pack(small, PackKind::kTensor).changed);
  EXPECT_EQ(CountOps(small.graph(), "ConstantOfShape"), 0);
  EXPECT_EQ(CountOps(small.graph(), "Tile"), 1);
  const auto [code, message] = PackError(Unshaped("1048576", "1", "GRU", 8), PackKind::kTensor);
  EXPECT_EQ(code, ExitCode::kUnsupported) << message;
  EXPECT_THAT(message, HasSubstr("opset 8 has no ConstantOfShape of float32, and the zero row [1,1048576] stored "
                                 "instead would be over 1 MiB"));
  // bfloat16 gets ConstantOfShape at opset 20 only.
  onnx::ModelProto bf16 = Parse(Unshaped("3", "batch", "GRU", 14, "bfloat16"));
  ASSERT_TRUE(Pack(bf16, PackKind::kTensor).changed);
  EXPECT_EQ(CountOps(bf16.graph(), "ConstantOfShape"), 0);
  EXPECT_EQ(CountOps(bf16.graph(), "Tile"), 1);
}

}  // namespace
}  // namespace rnnstate::pack_plan_limits_test
