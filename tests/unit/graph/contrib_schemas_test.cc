// ONNX Runtime's com.microsoft.DynamicQuantizeLSTM made known to onnx (graph/contrib_schemas.h): once
// registered, by any number of calls, onnx's registry has its schema (12 inputs, 3 outputs, 8-bit weights),
// its shape inference gives the LSTM shapes from X, direction and hidden_size, and onnx's checker checks
// the node against it (an attribute the operator does not have is refused).

#include "graph/contrib_schemas.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <string>

#include "test_models.h"
#include "test_names.h"

namespace rnnstate::contrib_schemas_test {
namespace {

using namespace test_names;

/// A quantized LSTM over X [5, 2, 4] with `direction` and `more` attributes (", layout = 0").
onnx::ModelProto QuantizedLstm(const std::string& direction, const std::string& more = "") {
  const std::string weights = "uint8";
  return ParseModel(R"(<ir_version: 8, opset_import: ["" : 14, "com.microsoft" : 1]>
g (float[5, 2, 4] X, )" +
                    weights + "[" + (direction == "bidirectional" ? "2" : "1") + ", 4, 12] W, " + weights + "[" +
                    (direction == "bidirectional" ? "2" : "1") + R"(, 3, 12] R, float s, uint8 z)
    => (float[5, D, 2, 3] Y, float[D, 2, 3] Y_h, float[D, 2, 3] Y_c) {
  Y, Y_h, Y_c = com.microsoft.DynamicQuantizeLSTM <hidden_size = 3, direction = ")" +
                    direction + "\"" + more + R"(> (X, W, R, , , , , , s, z, s, z)
})");
}

/// The shape inferred for output `name` of `model`, as "[5,1,2,3]".
std::string InferredShape(onnx::ModelProto model, const std::string& name) {
  model.mutable_graph()->clear_output();  // what the outputs declare is not what is inferred
  onnx::shape_inference::InferShapes(model);
  for (const auto& info : model.graph().value_info()) {
    if (info.name() != name) continue;
    std::string text = "[";
    for (const auto& dim : info.type().tensor_type().shape().dim()) {
      text += (text.size() > 1 ? "," : "") + (dim.has_dim_value() ? std::to_string(dim.dim_value()) : dim.dim_param());
    }
    return text + "]";
  }
  return "none";
}

TEST(RegisterContribSchemas, PutsTheQuantizedLstmInOnnxsRegistryOnce) {
  RegisterContribSchemas();
  RegisterContribSchemas();
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema("DynamicQuantizeLSTM", 1, "com.microsoft");
  ASSERT_NE(schema, nullptr);
  EXPECT_EQ(schema->inputs().size(), 12u);
  EXPECT_EQ(schema->outputs().size(), 3u);
  EXPECT_EQ(schema->inputs()[5].GetName(), "initial_h");
  EXPECT_EQ(schema->inputs()[6].GetName(), "initial_c");
  EXPECT_EQ(schema->outputs()[1].GetName(), "Y_h");
  EXPECT_EQ(schema->SinceVersion(), 1);
  EXPECT_EQ(onnx::OpSchemaRegistry::Schema("DynamicQuantizeLSTM", 1, ""), nullptr);
}

TEST(RegisterContribSchemas, GivesShapeInferenceTheLstmShapes) {
  RegisterContribSchemas();
  EXPECT_EQ(InferredShape(QuantizedLstm("forward"), "Y"), "[5,1,2,3]");
  EXPECT_EQ(InferredShape(QuantizedLstm("forward"), "Y_h"), "[1,2,3]");
  EXPECT_EQ(InferredShape(QuantizedLstm("bidirectional"), "Y_c"), "[2,2,3]");
}

TEST(RegisterContribSchemas, LetsTheCheckerCheckTheNode) {
  RegisterContribSchemas();
  EXPECT_NO_THROW(onnx::checker::check_model(QuantizedLstm("forward")));
  EXPECT_THROW(onnx::checker::check_model(QuantizedLstm("forward", ", layout = 0")), onnx::checker::ValidationError);
}

}  // namespace
}  // namespace rnnstate::contrib_schemas_test
