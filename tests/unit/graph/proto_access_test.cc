// The read helpers over protos (graph/proto_access.h): names made printable for messages, element sizes and
// tensor sizes that refuse overflow, the ai.onnx opset and domain, attributes with their fallbacks, and the
// outer-scope names a subgraph reads (through its own subgraphs too).

#include "graph/proto_access.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "test_models.h"
#include "test_names.h"

namespace rnnstate::proto_access_test {
namespace {

using namespace test_names;

TEST(Printable, EscapesEveryByteThatIsNotPrintableAscii) {
  EXPECT_EQ(Printable("/enc/lstm_1:0"), "/enc/lstm_1:0");
  EXPECT_EQ(Printable(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(Printable("\x1b[31m\n\x7f\xff"), "\\x1b[31m\\x0a\\x7f\\xff");
}

TEST(StateElementSize, CountsTheBytesOfNumbersAndBoolAndRefusesTheRest) {
  EXPECT_EQ(StateElementSize(onnx::TensorProto::FLOAT), 4u);
  EXPECT_EQ(StateElementSize(onnx::TensorProto::DOUBLE), 8u);
  EXPECT_EQ(StateElementSize(onnx::TensorProto::FLOAT16), 2u);
  EXPECT_EQ(StateElementSize(onnx::TensorProto::BFLOAT16), 2u);
  EXPECT_EQ(StateElementSize(onnx::TensorProto::INT64), 8u);
  EXPECT_EQ(StateElementSize(onnx::TensorProto::UINT16), 2u);
  EXPECT_EQ(StateElementSize(onnx::TensorProto::INT8), 1u);
  EXPECT_EQ(StateElementSize(onnx::TensorProto::BOOL), 1u);
  EXPECT_EQ(StateElementSize(onnx::TensorProto::STRING), 0u);
  EXPECT_EQ(StateElementSize(onnx::TensorProto::COMPLEX64), 0u);
  EXPECT_EQ(StateElementSize(onnx::TensorProto::UNDEFINED), 0u);
  EXPECT_EQ(StateElementSize(999), 0u);
}

TEST(DataTypeName, NamesTheEnumValueOrSaysTheNumber) {
  EXPECT_EQ(DataTypeName(onnx::TensorProto::FLOAT), "FLOAT");
  EXPECT_EQ(DataTypeName(onnx::TensorProto::BFLOAT16), "BFLOAT16");
  EXPECT_EQ(DataTypeName(999), "data type 999");
  EXPECT_EQ(DataTypeName(-1), "data type -1");
}

TEST(ShapeText, QuotesValuesNamesAndUnknownDims) {
  onnx::TensorShapeProto shape;
  shape.add_dim()->set_dim_value(1);
  shape.add_dim()->set_dim_param("batch");
  shape.add_dim();
  EXPECT_EQ(ShapeText(shape), "[1,batch,?]");
  EXPECT_EQ(ShapeText(onnx::TensorShapeProto()), "[]");
}

TEST(DenseTensorBytes, MultipliesTheDimsAndRefusesWhatItCannotSize) {
  EXPECT_EQ(DenseTensorBytes(onnx::TensorProto::FLOAT, {2, 1, 3}), 24u);
  EXPECT_EQ(DenseTensorBytes(onnx::TensorProto::DOUBLE, {}), 8u);  // a scalar
  EXPECT_EQ(DenseTensorBytes(onnx::TensorProto::FLOAT, {4, 0}), 0u);
  EXPECT_EQ(DenseTensorBytes(onnx::TensorProto::FLOAT, {2, -1}), std::nullopt);
  EXPECT_EQ(DenseTensorBytes(onnx::TensorProto::STRING, {2}), std::nullopt);
  const int64_t big = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(DenseTensorBytes(onnx::TensorProto::FLOAT, {big}), std::nullopt);
  EXPECT_EQ(DenseTensorBytes(onnx::TensorProto::INT8, {big}), static_cast<uint64_t>(big));
  EXPECT_EQ(DenseTensorBytes(onnx::TensorProto::INT8, {int64_t{1} << 32, int64_t{1} << 32}), std::nullopt);
}

TEST(OnnxOpset, IsTheDefaultDomainsImportUnderEitherName) {
  onnx::ModelProto model;
  EXPECT_EQ(OnnxOpset(model), 0);
  auto* ml = model.add_opset_import();
  ml->set_domain("ai.onnx.ml");
  ml->set_version(3);
  EXPECT_EQ(OnnxOpset(model), 0);
  auto* onnx = model.add_opset_import();
  onnx->set_domain("ai.onnx");
  onnx->set_version(13);
  EXPECT_EQ(OnnxOpset(model), 13);
  onnx->set_domain("");
  EXPECT_EQ(OnnxOpset(model), 13);
  EXPECT_TRUE(IsOnnxDomain(""));
  EXPECT_TRUE(IsOnnxDomain("ai.onnx"));
  EXPECT_FALSE(IsOnnxDomain("com.microsoft"));
}

TEST(IsOnnxOp, MatchesTheOperatorOfTheDefaultDomainOnly) {
  onnx::NodeProto node;
  node.set_op_type("LSTM");
  EXPECT_TRUE(IsOnnxOp(node, {"GRU", "LSTM"}));
  EXPECT_FALSE(IsOnnxOp(node, {"GRU", "RNN"}));
  node.set_domain("ai.onnx");
  EXPECT_TRUE(IsOnnxOp(node, {"LSTM"}));
  node.set_domain("com.microsoft");
  EXPECT_FALSE(IsOnnxOp(node, {"LSTM"}));
}

TEST(Attributes, ReadTheNamedAttributeOrTheFallback) {
  const onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[3, 1, 2] X, float[1, 9, 2] W, float[1, 9, 3] R, bool c) => (float[3, 1, 1, 3] Y, float[2] z) {
  Y = GRU <hidden_size = 3, direction = "reverse"> (X, W, R)
  z = If (c) <then_branch = t () => (float[2] a) { a = Constant <value = float[2] {1, 2}> () },
              else_branch = e () => (float[2] b) { b = Constant <value = float[2] {3, 4}> () }>
})");
  const onnx::NodeProto& gru = model.graph().node(0);
  ASSERT_NE(FindAttribute(gru, "hidden_size"), nullptr);
  EXPECT_EQ(FindAttribute(gru, "hidden_size")->i(), 3);
  EXPECT_EQ(FindAttribute(gru, "clip"), nullptr);
  EXPECT_EQ(IntAttribute(gru, "hidden_size", 7), 3);
  EXPECT_EQ(IntAttribute(gru, "linear_before_reset", 7), 7);
  EXPECT_EQ(StringAttribute(gru, "direction", "forward"), "reverse");
  EXPECT_EQ(StringAttribute(gru, "activations", "none"), "none");
  const onnx::NodeProto& branch = model.graph().node(1);
  ASSERT_NE(GraphAttribute(branch, "else_branch"), nullptr);
  EXPECT_EQ(GraphAttribute(branch, "else_branch")->name(), "e");
  EXPECT_EQ(GraphAttribute(branch, "body"), nullptr);
  EXPECT_EQ(GraphAttribute(gru, "hidden_size"), nullptr);  // an attribute of another type
  onnx::NodeProto copy = branch;
  ASSERT_NE(GraphAttribute(copy, "then_branch"), nullptr);
  GraphAttribute(copy, "then_branch")->set_name("renamed");
  EXPECT_EQ(copy.attribute(0).g().name(), "renamed");
  EXPECT_EQ(GraphAttribute(copy, "direction"), nullptr);
}

/// A Loop whose body reads `w` and `u` from the main graph, `u` only inside the body's own If.
const char* kOuterReads = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[2] x, float[2] w, float[2] u, int64 trip, bool cond) => (float[2] y) {
  y = Loop (trip, cond, x) <body = body (int64 i, bool c_in, float[2] v) => (bool c_out, float[2] o) {
    c_out = Identity (c_in)
    s = Add (v, w)
    o = If (c_in) <then_branch = t () => (float[2] a) { a = Mul (s, u) },
                   else_branch = e () => (float[2] b) { b = Identity (v) }>
  }>
})";

TEST(FreeNames, AreWhatAGraphAndItsSubgraphsReadWithoutDefiningIt) {
  const onnx::ModelProto model = ParseModel(kOuterReads);
  const onnx::GraphProto& body = *GraphAttribute(model.graph().node(0), "body");
  // s and v are the body's own: the If's reads of them are not free in the body.
  EXPECT_THAT(FreeNames(body), ElementsAre("u", "w"));
  EXPECT_THAT(FreeNames(*GraphAttribute(body.node(2), "then_branch")), ElementsAre("s", "u"));
  EXPECT_THAT(FreeNames(model.graph()), IsEmpty());
  EXPECT_THAT(SubgraphReferences(model.graph().node(0)), ElementsAre("u", "w"));
  EXPECT_THAT(SubgraphReferences(body.node(2)), ElementsAre("s", "u", "v"));
  EXPECT_THAT(SubgraphReferences(body.node(1)), IsEmpty());
}

TEST(FreeNames, CountAGraphOutputThatNoNodeDefines) {
  const onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[2] x, bool c) => (float[2] y) {
  y = If (c) <then_branch = t () => (float[2] x) { }, else_branch = e () => (float[2] b) { b = Neg (x) }>
})");
  EXPECT_THAT(SubgraphReferences(model.graph().node(0)), ElementsAre("x"));
}

TEST(OuterReferences, AnswersAsTheFreeFunctionsAndRemembersEachGraph) {
  const onnx::ModelProto model = ParseModel(kOuterReads);
  OuterReferences cache;
  const onnx::GraphProto& body = *GraphAttribute(model.graph().node(0), "body");
  const std::set<std::string>& first = cache.Of(body);
  EXPECT_EQ(first, FreeNames(body));
  EXPECT_EQ(&cache.Of(body), &first);
  EXPECT_EQ(cache.OfNode(model.graph().node(0)), SubgraphReferences(model.graph().node(0)));
  EXPECT_EQ(cache.OfNode(body.node(2)), SubgraphReferences(body.node(2)));
}

}  // namespace
}  // namespace rnnstate::proto_access_test
