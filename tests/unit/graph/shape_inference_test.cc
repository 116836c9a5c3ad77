// The one way onnx's shape inference runs (graph/shape_inference.h): on a structural copy that keeps small
// initializers whole and of the others only name, type and dims, at every depth, leaving the model as it
// was; values the analysis knows bound as Constants so that inference reads them; a node lacking a required
// attribute (which crashes onnx's inference) refused with a reason, and inference's own errors returned; at
// an opset newer than onnx knows, inference without data propagation (which crashed onnx 1.12 on a PyTorch
// export raised to opset 18 whose Pads list their axes: models/opset18/sfe_conv_gru_axes.onnx).

#include "graph/shape_inference.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/defs/schema.h>

#include <string>
#include <vector>

#include "graph/model_index.h"
#include "graph/proto_access.h"
#include "io/model_io.h"
#include "test_models.h"
#include "test_names.h"
#include "values/shape_eval.h"

namespace rnnstate::shape_inference_test {
namespace {

using namespace test_names;
using ::testing::Each;
using ::testing::Gt;

/// The type of `name` among `graph`'s value infos and outputs as text ("" when it has none).
std::string TypeText(const onnx::GraphProto& graph, const std::string& name) {
  for (const auto* list : {&graph.value_info(), &graph.output()}) {
    for (const auto& info : *list) {
      if (info.name() == name && info.type().has_tensor_type()) {
        return DataTypeName(info.type().tensor_type().elem_type()) + ShapeText(info.type().tensor_type().shape());
      }
    }
  }
  return "";
}

/// Adds an initializer of `count` floats named `name` to `graph`.
void AddFloats(onnx::GraphProto& graph, const std::string& name, int count) {
  AddFloatInitializer(graph, name, {count}, {1.0f, 2.0f});
}

TEST(StructuralCopy, KeepsSmallInitializersWholeAndOfWeightsOnlyTheirTypeAtEveryDepth) {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[2] x, bool c) => (float[2] y) {
  y = If (c) <then_branch = t () => (float[2] a) { a = Identity (x) },
              else_branch = e () => (float[2] b) { b = Neg (x) }>
})");
  AddFloats(*model.mutable_graph(), "small", 4);
  AddFloats(*model.mutable_graph(), "weights", 1000);
  onnx::GraphProto& branch = *GraphAttribute(*model.mutable_graph()->mutable_node(0), "then_branch");
  AddFloats(branch, "inner_weights", 1000);
  AddFloats(branch, "inner_small", 2);
  const std::string before = Bytes(model);

  google::protobuf::Arena arena;
  const onnx::ModelProto* copy = StructuralCopy(model, arena);
  EXPECT_EQ(Bytes(model), before);
  EXPECT_EQ(copy->ir_version(), 8);
  EXPECT_EQ(OnnxOpset(*copy), 14);
  ASSERT_EQ(copy->graph().initializer_size(), 2);
  EXPECT_EQ(copy->graph().initializer(0).SerializeAsString(), model.graph().initializer(0).SerializeAsString());
  const onnx::TensorProto& weights = copy->graph().initializer(1);
  EXPECT_EQ(weights.name(), "weights");
  EXPECT_EQ(weights.data_type(), onnx::TensorProto::FLOAT);
  EXPECT_THAT(weights.dims(), ElementsAre(1000));
  EXPECT_EQ(weights.float_data_size(), 0);
  EXPECT_EQ(weights.raw_data(), "");
  const onnx::GraphProto& copied_branch = *GraphAttribute(copy->graph().node(0), "then_branch");
  ASSERT_EQ(copied_branch.initializer_size(), 2);
  EXPECT_EQ(copied_branch.initializer(0).name(), "inner_weights");
  EXPECT_THAT(copied_branch.initializer(0).dims(), ElementsAre(1000));
  EXPECT_EQ(copied_branch.initializer(0).float_data_size(), 0);
  EXPECT_EQ(copied_branch.initializer(1).float_data_size(), 2);
  EXPECT_EQ(copied_branch.node_size(), 1);
  EXPECT_EQ(copied_branch.output(0).name(), "a");
}

TEST(CopiedWhole, IsTrueForSmallTensorsInTheFileOnly) {
  onnx::GraphProto graph;
  AddFloats(graph, "small", 16);
  AddFloats(graph, "big", 512);
  EXPECT_TRUE(CopiedWhole(graph.initializer(0)));
  EXPECT_FALSE(CopiedWhole(graph.initializer(1)));
  onnx::TensorProto external = graph.initializer(0);
  external.set_data_location(onnx::TensorProto::EXTERNAL);
  EXPECT_FALSE(CopiedWhole(external));
}

TEST(InitializerType, IsTheTensorsElementTypeAndDims) {
  onnx::TensorProto tensor;
  tensor.set_data_type(onnx::TensorProto::INT64);
  tensor.add_dims(3);
  tensor.add_dims(0);
  google::protobuf::Arena arena;
  const onnx::TypeProto* type = InitializerType(tensor, arena);
  EXPECT_EQ(type->tensor_type().elem_type(), onnx::TensorProto::INT64);
  EXPECT_EQ(ShapeText(type->tensor_type().shape()), "[3,0]");
  EXPECT_EQ(type->GetArena(), &arena);
}

/// x reshaped to a shape Div computes (onnx 1.12's data propagation stops at Div): `target` [2] int64.
const char* kComputedReshape = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[6] x) => (float[?, ?] y) {
  twelve = Constant <value = int64[2] {4, 6}> ()
  two = Constant <value = int64[1] {2}> ()
  target = Div (twelve, two)
  y = Reshape (x, target)
})";

TEST(InferShapes, InfersTheTypesOfTheCopyInPlace) {
  OwnedCopy copy = MakeStructuralCopy(ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, 3] x) => (float[?, ?] y) {
  r = Relu (x)
  y = Transpose (r)
})"));
  EXPECT_EQ(InferShapes(*copy.model), "");
  EXPECT_EQ(TypeText(copy.model->graph(), "r"), "FLOAT[batch,3]");
  EXPECT_EQ(TypeText(copy.model->graph(), "y"), "FLOAT[3,batch]");
}

TEST(BindKnownValues, MakesTheNodeAConstantSoThatInferenceReadsIt) {
  const onnx::ModelProto model = ParseModel(kComputedReshape);
  OwnedCopy unbound = MakeStructuralCopy(model);
  EXPECT_EQ(InferShapes(*unbound.model), "");
  EXPECT_EQ(TypeText(unbound.model->graph(), "y"), "FLOAT[?,?]");

  OwnedCopy bound = MakeStructuralCopy(model);
  BindKnownValues(*bound.model, {KnownValue{{}, 2, onnx::TensorProto::INT64, {2, 3}}});
  const onnx::NodeProto& node = bound.model->graph().node(2);
  EXPECT_EQ(node.op_type(), "Constant");
  EXPECT_THAT(node.output(), ElementsAre("target"));
  EXPECT_THAT(node.input(), IsEmpty());
  EXPECT_THAT(node.attribute(0).t().int64_data(), ElementsAre(2, 3));
  EXPECT_EQ(InferShapes(*bound.model), "");
  EXPECT_EQ(TypeText(bound.model->graph(), "y"), "FLOAT[2,3]");
  EXPECT_EQ(model.graph().node(2).op_type(), "Div");  // the model itself is untouched
}

TEST(BindKnownValues, WritesInt32ValuesAsInt32AndLeavesWhatItCannotBind) {
  onnx::ModelProto copy = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[4] x) => (float[2] a, float[2] b) {
  a, b = Split (x)
  n = Size (x)
})");
  const std::string before = Bytes(copy);
  BindKnownValues(copy, {KnownValue{{}, 0, onnx::TensorProto::INT64, {1}},  // two outputs
                         KnownValue{{}, 7, onnx::TensorProto::INT64, {1}},  // no such node
                         KnownValue{{GraphStep{0, "body", -1}}, 0, onnx::TensorProto::INT64, {1}}});
  EXPECT_EQ(Bytes(copy), before);
  BindKnownValues(copy, {KnownValue{{}, 1, onnx::TensorProto::INT32, {4, -1}}});
  const onnx::TensorProto& value = copy.graph().node(1).attribute(0).t();
  EXPECT_EQ(value.data_type(), onnx::TensorProto::INT32);
  EXPECT_THAT(value.int32_data(), ElementsAre(4, -1));
  EXPECT_EQ(value.int64_data_size(), 0);
}

TEST(InferShapes, RefusesANodeLackingARequiredAttributeAtAnyDepth) {
  OwnedCopy copy = MakeStructuralCopy(ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[2, 3] x, bool c) => (float[2, 3] y) {
  y = If (c) <then_branch = t () => (float[2, 3] s) {
      s = Scan (x) <body = b (float[3] v) => (float[3] w) { w = Identity (v) }>
    }, else_branch = e () => (float[2, 3] n) { n = Neg (x) }>
})"));
  EXPECT_EQ(InferShapes(*copy.model), "Scan lacks its required attribute 'num_scan_inputs'");
  OwnedCopy wrong_type = MakeStructuralCopy(ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[2, 3] x) => (float[?] y) {
  y = Flatten <axis = "one"> (x)
})"));
  EXPECT_EQ(InferShapes(*wrong_type.model), "Flatten has attribute 'axis' of the wrong type");
}

TEST(OnnxSchemaAt, IsOnnxsRegistryAnswerForEachOpsetAskedAgainOrNot) {
  for (int round = 0; round < 2; ++round) {
    for (const int opset : {2, 11, 13, 17}) {
      for (const std::string op : {"Pad", "Squeeze", "LSTM", "NoSuchOperator"}) {
        EXPECT_EQ(OnnxSchemaAt(op, opset), onnx::OpSchemaRegistry::Schema(op, opset, "")) << op << " " << opset;
      }
    }
  }
  EXPECT_EQ(OnnxSchemaAt("NoSuchOperator", 13), nullptr);
  ASSERT_NE(OnnxSchemaAt("Pad", 2), nullptr);
  EXPECT_NE(OnnxSchemaAt("Pad", 2), OnnxSchemaAt("Pad", 11));
}

TEST(InferShapes, JudgesAttributesByTheSchemaOfTheModelsOwnOpset) {
  // Pad takes its pads as an input from opset 11, as a required attribute before: one thread, one
  // operator, two opsets, each judged by its own schema whichever comes first.
  const std::string body = R"( (float[2] x, int64[2] p) => (float[?] y) {
  y = Pad (x, p)
})";
  const auto infer = [&](const std::string& opset, const std::string& graph) {
    OwnedCopy copy = MakeStructuralCopy(ParseModel("<ir_version: 8, opset_import: [\"\" : " + opset + "]>\ng" + graph));
    return InferShapes(*copy.model);
  };
  const std::string old_pad = R"( (float[2] x) => (float[?] y) {
  y = Pad (x)
})";
  EXPECT_EQ(infer("11", body), "");
  EXPECT_EQ(infer("2", old_pad), "Pad lacks its required attribute 'pads'");
  EXPECT_EQ(infer("11", body), "");
}

TEST(InferShapes, ReturnsWhyOnnxsInferenceFailed) {
  // A graph input whose initializer of the same name has another shape: onnx's inference throws.
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[2, 3] x) => (float[2, 3] y) {
  y = Neg (x)
})");
  AddFloats(*model.mutable_graph(), "x", 4);
  OwnedCopy copy = MakeStructuralCopy(model);
  EXPECT_THAT(InferShapes(*copy.model), HasSubstr("x"));
  EXPECT_NE(InferShapes(*copy.model), "");
}

/// Outputs declared without shapes (ModelWithoutOutputShapes) and values declared by no one, in the main
/// graph and in an If's branches and a Loop's body: onnx's inference writes into every graph of it.
const char* kUndeclaredShapes = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[2, 3] x, bool c, int64 n) => (float y, float z) {
  r = Relu (x)
  y = If (c) <then_branch = t () => (float s) {
      m = Neg (r)
      s = Abs (m)
    }, else_branch = e () => (float u) { u = Abs (r) }>
  z = Loop (n, c, r) <body = b (int64 i, bool k, float[2, 3] a) => (bool k2, float a2) {
      k2 = Identity (k)
      h = Sigmoid (a)
      a2 = Neg (h)
    }>
})";

/// Clears the shape of every float output of `graph` and of its subgraphs (the text declares them scalars).
void ClearFloatOutputShapes(onnx::GraphProto& graph) {
  for (auto& output : *graph.mutable_output()) {
    if (output.type().tensor_type().elem_type() == onnx::TensorProto::FLOAT) {
      output.mutable_type()->mutable_tensor_type()->clear_shape();
    }
  }
  for (auto& node : *graph.mutable_node()) {
    for (auto& attribute : *node.mutable_attribute()) {
      if (attribute.has_g()) ClearFloatOutputShapes(*attribute.mutable_g());
    }
  }
}

/// kUndeclaredShapes with its float outputs' shapes cleared.
onnx::ModelProto ModelWithoutOutputShapes() {
  onnx::ModelProto model = ParseModel(kUndeclaredShapes);
  ClearFloatOutputShapes(*model.mutable_graph());
  return model;
}

/// How many value infos `model`'s main graph, its If's then branch and its Loop's body hold.
std::vector<int> ValueInfoCounts(const onnx::ModelProto& model) {
  const onnx::GraphProto& graph = model.graph();
  return {graph.value_info_size(),
          graph.node(1).attribute(0).g().value_info_size() + graph.node(1).attribute(1).g().value_info_size(),
          graph.node(2).attribute(0).g().value_info_size()};
}

TEST(InferShapesInPlace, LeavesTheModelAsItWasAtEveryDepth) {
  const onnx::ModelProto model = ModelWithoutOutputShapes();
  // What inference writes when nothing puts it back: types in every graph.
  onnx::ModelProto written = model;
  EXPECT_EQ(InferShapes(written), "");
  EXPECT_EQ(TypeText(written.graph(), "y"), "FLOAT[2,3]");
  EXPECT_THAT(ValueInfoCounts(written), Each(Gt(0)));
  EXPECT_THAT(ValueInfoCounts(model), Each(0));

  onnx::ModelProto heap = model;
  EXPECT_EQ(InferShapesInPlace(heap), "");
  EXPECT_EQ(Bytes(heap), Bytes(model));
  // A model on an arena, as rnnstate opens files: the saved fields are swapped back on it.
  google::protobuf::Arena arena;
  auto* on_arena = google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
  on_arena->CopyFrom(model);
  EXPECT_EQ(InferShapesInPlace(*on_arena), "");
  EXPECT_EQ(Bytes(*on_arena), Bytes(model));
}

TEST(InferShapesInPlace, GivesInferencesVerdictAndStillLeavesTheModel) {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[2, 3] x) => (float[2, 3] y) {
  y = Neg (x)
})");
  AddFloats(*model.mutable_graph(), "x", 4);  // as in InferShapes.ReturnsWhyOnnxsInferenceFailed
  const std::string before = Bytes(model);
  EXPECT_THAT(InferShapesInPlace(model), HasSubstr("x"));
  EXPECT_EQ(Bytes(model), before);
  onnx::ModelProto malformed = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[2, 3] x) => (float[?] y) {
  y = Flatten <axis = "one"> (x)
})");
  const std::string malformed_before = Bytes(malformed);
  EXPECT_EQ(InferShapesInPlace(malformed), "Flatten has attribute 'axis' of the wrong type");
  EXPECT_EQ(Bytes(malformed), malformed_before);
}

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
