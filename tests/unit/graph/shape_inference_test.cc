// The one way onnx's shape inference is run (graph/shape_inference.h), on a model onnx 1.12's data
// propagation crashed on: a PyTorch export raised to opset 18 whose Pads list their axes
// (models/opset18/sfe_conv_gru_axes.onnx, tools/gen_opset18_models.py). At an opset newer than onnx knows,
// inference runs without data propagation: the index is built, the shapes before the Pads are inferred.

#include "graph/shape_inference.h"

#include <gtest/gtest.h>

#include "graph/model_index.h"
#include "io/model_io.h"
#include "values/shape_eval.h"

namespace rnnstate::shape_inference_test {
namespace {

TEST(ShapeInference, AModelOfANewerOpsetIsInferredWithoutDataPropagation) {
  OpenedModel opened = OpenModel(std::string(RNNSTATE_SOURCE_DIR) + "/models/opset18/sfe_conv_gru_axes.onnx");
  const onnx::ModelProto model = opened.file.model();
  const ModelIndex index(model);  // crashed (a segmentation fault inside onnx) before
  const std::optional<SymShape> gathered = ShapeOf(index, {}, "/sfe/unfold/Shape_output_0");
  ASSERT_TRUE(gathered.has_value());
  ASSERT_EQ(gathered->size(), 1u);
  EXPECT_EQ((*gathered)[0].value, 4);  // Shape of x [batch, 1, seq, 8]: inferred as before
}

}  // namespace
}  // namespace rnnstate::shape_inference_test
