// Nodes in the form the model's opset defines (graph/node_builder.h): `axes` and `split` as attributes
// before opset 13 and as Constant inputs (made before their reader) from it on, so that a chain built at
// either opset passes onnx's checker and infers the shapes it means; node names unique among the model's;
// zeros computed by ConstantOfShape where the opset has one for the type; every name a model uses, in all
// scopes.

#include "graph/node_builder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/checker.h>

#include <string>
#include <vector>

#include "graph/proto_access.h"
#include "graph/shape_inference.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::node_builder_test {
namespace {

using namespace test_names;

std::vector<std::string> OpTypes(const std::vector<onnx::NodeProto>& nodes) {
  std::vector<std::string> ops;
  for (const auto& node : nodes) ops.push_back(node.op_type());
  return ops;
}

/// x [2, 6] -> Unsqueeze [0] -> Squeeze [0] -> Split on 1 into [2, 4] -> Concat (b, a) on 1 ->
/// Reshape [0, 3, 2] -> Transpose [1, 0, 2] -> t [3, 2, 2], built at `opset` into a model.
onnx::ModelProto Chain(int64_t opset, std::vector<onnx::NodeProto>* built = nullptr) {
  onnx::ModelProto model = ParseModel("<ir_version: 7, opset_import: [\"\" : " + std::to_string(opset) +
                                      "]>\ng (float[2, 6] x) => (float[3, 2, 2] t) {\n}");
  NameAllocator names(ModelNames(model));
  NameAllocator node_names(ModelNodeNames(model));
  NodeBuilder b(opset, names, node_names);
  b.Unsqueeze("x", {0}, "u");
  b.Squeeze("u", {0}, "s");
  b.Split("s", 1, {2, 4}, {"a", "b"});
  b.Concat({"b", "a"}, 1, "c");
  b.Reshape("c", {0, 3, 2}, "r");
  b.Transpose("r", {1, 0, 2}, "t");
  std::vector<onnx::NodeProto> nodes = b.Take();
  if (built) *built = nodes;
  for (auto& node : nodes) *model.mutable_graph()->add_node() = std::move(node);
  return model;
}

/// The inferred shape of `name` in `model` after shape inference, as text.
std::string InferredShape(const onnx::ModelProto& model, const std::string& name) {
  OwnedCopy copy = MakeStructuralCopy(model);
  EXPECT_EQ(InferShapes(*copy.model), "");
  for (const auto& info : copy.model->graph().value_info()) {
    if (info.name() == name) return ShapeText(info.type().tensor_type().shape());
  }
  for (const auto& info : copy.model->graph().output()) {
    if (info.name() == name) return ShapeText(info.type().tensor_type().shape());
  }
  return "";
}

TEST(NodeBuilder, BeforeOpsetThirteenAxesAndSplitAreAttributes) {
  std::vector<onnx::NodeProto> nodes;
  const onnx::ModelProto model = Chain(11, &nodes);
  EXPECT_THAT(OpTypes(nodes),
              ElementsAre("Unsqueeze", "Squeeze", "Split", "Concat", "Constant", "Reshape", "Transpose"));
  EXPECT_EQ(nodes[0].input_size(), 1);
  ASSERT_NE(FindAttribute(nodes[0], "axes"), nullptr);
  EXPECT_THAT(FindAttribute(nodes[0], "axes")->ints(), ElementsAre(0));
  ASSERT_NE(FindAttribute(nodes[2], "split"), nullptr);
  EXPECT_THAT(FindAttribute(nodes[2], "split")->ints(), ElementsAre(2, 4));
  EXPECT_EQ(IntAttribute(nodes[2], "axis", -1), 1);
  EXPECT_NO_THROW(onnx::checker::check_model(model));
  EXPECT_EQ(InferredShape(model, "t"), "[3,2,2]");
  EXPECT_EQ(InferredShape(model, "a"), "[2,2]");
}

TEST(NodeBuilder, FromOpsetThirteenAxesAndSplitAreConstantsMadeBeforeTheirReader) {
  std::vector<onnx::NodeProto> nodes;
  const onnx::ModelProto model = Chain(13, &nodes);
  EXPECT_THAT(OpTypes(nodes), ElementsAre("Constant", "Unsqueeze", "Constant", "Squeeze", "Constant", "Split", "Concat",
                                          "Constant", "Reshape", "Transpose"));
  EXPECT_THAT(nodes[1].input(), ElementsAre("x", nodes[0].output(0)));
  EXPECT_EQ(FindAttribute(nodes[1], "axes"), nullptr);
  EXPECT_THAT(nodes[5].input(), ElementsAre("s", nodes[4].output(0)));
  EXPECT_EQ(FindAttribute(nodes[5], "split"), nullptr);
  EXPECT_NO_THROW(onnx::checker::check_model(model));
  EXPECT_EQ(InferredShape(model, "t"), "[3,2,2]");
  EXPECT_EQ(InferredShape(model, "b"), "[2,4]");
}

TEST(NodeBuilder, NamesNodesAfterTheirOutputUniqueAmongTheModelsNodeNames) {
  NameAllocator names(std::set<std::string>{"x", "y"});
  NameAllocator node_names(std::set<std::string>{"y"});
  NodeBuilder b(13, names, node_names);
  b.Add("Relu", {"x"}, {"y"});
  EXPECT_EQ(b.Name("y"), "y_2");
  b.Int64Constant("k", {3}, /*scalar=*/true);
  const std::vector<onnx::NodeProto> nodes = b.Take();
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].name(), "y_2");
  EXPECT_EQ(nodes[1].name(), "k");
  EXPECT_EQ(nodes[1].attribute(0).t().dims_size(), 0);  // a scalar
  EXPECT_THAT(nodes[1].attribute(0).t().int64_data(), ElementsAre(3));
  EXPECT_TRUE(b.Take().empty());
}

TEST(NodeBuilder, ZerosOfShapeStoreOneZeroOfTheType) {
  NameAllocator names(std::set<std::string>{});
  NameAllocator node_names(std::set<std::string>{});
  NodeBuilder b(14, names, node_names);
  b.ZerosOfShape("dims", onnx::TensorProto::FLOAT16, "zeros");
  const std::vector<onnx::NodeProto> nodes = b.Take();
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].op_type(), "ConstantOfShape");
  EXPECT_THAT(nodes[0].input(), ElementsAre("dims"));
  const onnx::TensorProto& value = FindAttribute(nodes[0], "value")->t();
  EXPECT_EQ(value.data_type(), onnx::TensorProto::FLOAT16);
  EXPECT_THAT(value.dims(), ElementsAre(1));
  EXPECT_EQ(value.name(), "");
}

TEST(ConstantOfShapeTakes, NumbersAndBoolFromOpsetNineBfloat16FromTwenty) {
  EXPECT_FALSE(ConstantOfShapeTakes(onnx::TensorProto::FLOAT, 8));
  EXPECT_TRUE(ConstantOfShapeTakes(onnx::TensorProto::FLOAT, 9));
  EXPECT_TRUE(ConstantOfShapeTakes(onnx::TensorProto::BOOL, 9));
  EXPECT_TRUE(ConstantOfShapeTakes(onnx::TensorProto::UINT64, 17));
  EXPECT_FALSE(ConstantOfShapeTakes(onnx::TensorProto::BFLOAT16, 19));
  EXPECT_TRUE(ConstantOfShapeTakes(onnx::TensorProto::BFLOAT16, 20));
  EXPECT_FALSE(ConstantOfShapeTakes(onnx::TensorProto::STRING, 20));
  EXPECT_FALSE(ConstantOfShapeTakes(onnx::TensorProto::COMPLEX64, 20));
}

TEST(ModelNames, GathersEveryNameOfEveryScope) {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, 2] x, int64 trip, bool cond) => (float[batch, 2] y) {
  y = Loop (trip, cond, x) <body = body (int64 i, bool c_in, float[n, 2] v) => (bool c_out, float[n, 2] w) {
    c_out = Identity (c_in)
    w = Neg (v)
  }>
})");
  model.mutable_graph()->mutable_node(0)->set_name("loop");
  onnx::GraphProto& body = *GraphAttribute(*model.mutable_graph()->mutable_node(0), "body");
  body.mutable_node(1)->set_name("inner");
  *body.add_value_info() = body.input(2);
  body.mutable_value_info(0)->set_name("seq");
  body.mutable_value_info(0)->mutable_type()->Clear();
  body.mutable_value_info(0)->mutable_type()->mutable_sequence_type()->mutable_elem_type()->CopyFrom(
      body.input(2).type());
  body.mutable_value_info(0)
      ->mutable_type()
      ->mutable_sequence_type()
      ->mutable_elem_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_param("in_sequence");
  AddFloatInitializer(body, "bias", {2}, {0.5f});
  EXPECT_THAT(ModelDimParams(model), ElementsAre("batch", "in_sequence", "n"));
  EXPECT_THAT(ModelNodeNames(model), ElementsAre("", "inner", "loop"));
  EXPECT_THAT(ModelNames(model), ElementsAre("batch", "bias", "body", "c_in", "c_out", "cond", "g", "i", "in_sequence",
                                             "inner", "loop", "n", "seq", "trip", "v", "w", "x", "y"));
}

}  // namespace
}  // namespace rnnstate::node_builder_test
