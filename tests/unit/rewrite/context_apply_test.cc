// The execution of a plan's context edits (context_apply.h), on edits written by hand: the readers redirected
// to the concatenation, the operands a window loses, the new input, its default, the Concat and the Slice
// of the last frames, and the errors for a plan that does not fit the model.

#include "rewrite/context_apply.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "graph/proto_access.h"
#include "rnnstate/error.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::context_apply_test {
namespace {

using namespace test_names;
using testing::Producer;

/// x [batch, 2, seq] read by a Relu (the context's reader) and a Neg (not one), under ai.onnx `opset`.
onnx::ModelProto TwoReaders(int opset = 14) {
  return ParseModel("<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) + R"(]>
g (float[batch, 2, seq] x) => (float[batch, 2, seq] y, float[batch, 2, seq] z) {
  y = Relu (x)
  z = Neg (x)
})");
}

/// A new context of the last 2 frames of x on axis 2, read by the main graph's node 0, without a default.
ContextEdit ContextOfX() {
  ContextEdit edit;
  edit.value = "x";
  edit.axis = 2;
  edit.frames = 2;
  edit.elem_type = onnx::TensorProto::FLOAT;
  edit.shape = {Dim{-1, "batch"}, Dim{2, ""}, Dim{2, ""}};
  edit.input = edit.value + "_ctx";
  edit.output = edit.input + "_out";
  // default, with_context, starts, ends, axes, readers
  edit.change =
      NewContext{ContextNoDefault{}, "x.with_context", "x.starts", "x.ends", "x.axes", {ContextReader{GraphPath{}, 0}}};
  return edit;
}

/// The context's zero default, its helper values named after `stem`.
ContextZerosDefault ZerosNamed(const std::string& stem) {
  ContextZerosDefault zeros;
  zeros.dims = {1, 2, 2};
  zeros.shape_of_value = stem + ".shape";
  zeros.keep = stem + ".keep";
  zeros.kept = stem + ".kept";
  zeros.unit = stem + ".unit";
  zeros.target = stem + ".target";
  zeros.expanded = stem + ".expanded";
  return zeros;
}

/// Both steps, as the rewrite runs them.
void ApplyBoth(const std::vector<ContextEdit>& contexts, onnx::ModelProto& model) {
  RedirectContextReaders(contexts, model);
  AddContextStates(contexts, model);
}

/// The index of the node producing `name` in the main graph, or -1.
int IndexOfProducer(const onnx::GraphProto& graph, const std::string& name) {
  for (int n = 0; n < graph.node_size(); ++n) {
    for (const auto& output : graph.node(n).output()) {
      if (output == name) return n;
    }
  }
  return -1;
}

TEST(RedirectContextReaders, OnlyThePlannedReadersReadTheConcatenation) {
  onnx::ModelProto model = TwoReaders();
  RedirectContextReaders({ContextOfX()}, model);
  EXPECT_EQ(NodeOfType(model.graph(), "Relu").input(0), "x.with_context");
  EXPECT_EQ(NodeOfType(model.graph(), "Neg").input(0), "x");
  EXPECT_EQ(model.graph().node_size(), 2);  // nothing added yet
  EXPECT_EQ(model.graph().input_size(), 1);
}

TEST(RedirectContextReaders, ARecordedContextChangesNoReader) {
  onnx::ModelProto model = TwoReaders();
  const std::string before = Bytes(model);
  ContextEdit kept = ContextOfX();
  kept.change = KeepContext{};
  ApplyBoth({kept}, model);
  EXPECT_EQ(Bytes(model), before);
}

TEST(RedirectContextReaders, AReaderOutsideTheModelIsAnInternalError) {
  onnx::ModelProto model = TwoReaders();
  ContextEdit edit = ContextOfX();
  std::get<NewContext>(edit.change).readers = {ContextReader{GraphPath{}, 2}};
  ExpectError([&] { RedirectContextReaders({edit}, model); }, ExitCode::kInternal, "do not fit the model");
  edit.graph = GraphPath{GraphStep{0, "then_branch", -1}};
  ExpectError([&] { RedirectContextReaders({edit}, model); }, ExitCode::kInternal, "outside the main graph");
}

TEST(RedirectContextReaders, AWindowLosesItsPaddingOnTime) {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, 2, seq] x, float[2, 2, 3] w) => (float[batch, 2, seq] y) {
  y = Conv <auto_pad = "SAME_UPPER"> (x, w)
})");
  ContextEdit edit = ContextOfX();
  edit.operands = {OperandEdit{0, "pads", -1, {0, 0}, "", false}};
  RedirectContextReaders({edit}, model);
  const onnx::NodeProto& conv = model.graph().node(0);
  EXPECT_EQ(conv.input(0), "x.with_context");
  EXPECT_EQ(FindAttribute(conv, "auto_pad"), nullptr);
  ASSERT_NE(FindAttribute(conv, "pads"), nullptr);
  EXPECT_THAT(FindAttribute(conv, "pads")->ints(), ElementsAre(0, 0));

  edit.operands = {OperandEdit{1, "pads", -1, {0, 0}, "", false}};
  ExpectError([&] { RedirectContextReaders({edit}, model); }, ExitCode::kInternal, "does not fit the model");
}

TEST(RedirectContextReaders, AnOperandTakenAsAnInputBecomesANewInitializer) {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, 2, seq] x) => (float[batch, 2, ?] y) {
  pads = Constant <value = int64[6] {0, 0, 2, 0, 0, 0}> ()
  y = Pad (x, pads)
})");
  ContextEdit edit = ContextOfX();
  std::get<NewContext>(edit.change).readers = {ContextReader{GraphPath{}, 1}};
  edit.operands = {OperandEdit{1, "pads", 1, {0, 0, 0, 0, 0, 0}, "pads.context", false}};
  RedirectContextReaders({edit}, model);
  const onnx::NodeProto& pad = model.graph().node(1);
  EXPECT_THAT(pad.input(), ElementsAre("x.with_context", "pads.context"));
  EXPECT_THAT(InitializerNames(model.graph()), ElementsAre("pads.context"));
  EXPECT_EQ(model.graph().node(0).output(0), "pads");  // the old constant stays for other readers
}

TEST(AddContextStates, AddsTheInputTheConcatTheSliceAndTheOutputInFrontOfTheReaders) {
  onnx::ModelProto model = TwoReaders();
  ApplyBoth({ContextOfX()}, model);
  const onnx::GraphProto& g = model.graph();
  EXPECT_THAT(InputNames(g), ElementsAre("x", "x_ctx"));
  EXPECT_THAT(OutputNames(g), ElementsAre("y", "z", "x_ctx_out"));
  EXPECT_EQ(DeclaredShape(g, "x_ctx"), "[batch,2,2]");
  EXPECT_THAT(InitializerNames(g), IsEmpty());  // no default: required
  const onnx::NodeProto* concat = Producer(g, "x.with_context");
  ASSERT_NE(concat, nullptr);
  EXPECT_EQ(concat->op_type(), "Concat");
  EXPECT_THAT(concat->input(), ElementsAre("x_ctx", "x"));
  EXPECT_EQ(IntAttribute(*concat, "axis", -1), 2);
  const onnx::NodeProto* slice = Producer(g, "x_ctx_out");
  ASSERT_NE(slice, nullptr);
  EXPECT_THAT(slice->input(), ElementsAre("x.with_context", "x.starts", "x.ends", "x.axes"));
  EXPECT_LT(IndexOfProducer(g, "x.with_context"), IndexOfProducer(g, "y"));
  EXPECT_LT(IndexOfProducer(g, "x_ctx_out"), IndexOfProducer(g, "y"));
  const onnx::NodeProto* starts = Producer(g, "x.starts");
  ASSERT_NE(starts, nullptr);
  EXPECT_THAT(FindAttribute(*starts, "value")->t().int64_data(), ElementsAre(-2));
  EXPECT_THAT(FindAttribute(*Producer(g, "x.ends"), "value")->t().int64_data(),
              ElementsAre(std::numeric_limits<int64_t>::max()));
  EXPECT_THAT(FindAttribute(*Producer(g, "x.axes"), "value")->t().int64_data(), ElementsAre(2));
}

TEST(AddContextStates, BeforeOpsetTenTheSliceTakesItsBoundsAsAttributes) {
  onnx::ModelProto model = TwoReaders(9);
  ApplyBoth({ContextOfX()}, model);
  const onnx::NodeProto* slice = Producer(model.graph(), "x_ctx_out");
  ASSERT_NE(slice, nullptr);
  EXPECT_THAT(slice->input(), ElementsAre("x.with_context"));
  EXPECT_THAT(FindAttribute(*slice, "starts")->ints(), ElementsAre(-2));
  EXPECT_THAT(FindAttribute(*slice, "axes")->ints(), ElementsAre(2));
  EXPECT_EQ(Producer(model.graph(), "x.starts"), nullptr);
}

TEST(AddContextStates, AZeroDefaultIsExpandedToTheValuesShapeWithOneFrame) {
  onnx::ModelProto model = TwoReaders();
  ContextEdit edit = ContextOfX();
  std::get<NewContext>(edit.change).default_value = ZerosNamed("z");
  ApplyBoth({edit}, model);
  const onnx::GraphProto& g = model.graph();
  EXPECT_THAT(InitializerNames(g), ElementsAre("x_ctx"));
  EXPECT_THAT(g.initializer(0).dims(), ElementsAre(1, 2, 2));
  const onnx::NodeProto* expand = Producer(g, "z.expanded");
  ASSERT_NE(expand, nullptr);
  EXPECT_EQ(expand->op_type(), "Expand");
  EXPECT_THAT(expand->input(), ElementsAre("x_ctx", "z.target"));
  EXPECT_THAT(FindAttribute(*Producer(g, "z.keep"), "value")->t().int64_data(), ElementsAre(1, 1, 0));
  EXPECT_THAT(FindAttribute(*Producer(g, "z.unit"), "value")->t().int64_data(), ElementsAre(0, 0, 1));
  EXPECT_THAT(Producer(g, "x.with_context")->input(), ElementsAre("z.expanded", "x"));
}

TEST(AddContextStates, BeforeOpsetEightTheZerosAreTiled) {
  onnx::ModelProto model = TwoReaders(7);
  ContextEdit edit = ContextOfX();
  ContextZerosDefault zeros = ZerosNamed("z");
  zeros.shape_of_context = "z.context_shape";
  zeros.context_kept = "z.context_kept";
  zeros.ones = "z.ones";
  zeros.repeats = "z.repeats";
  std::get<NewContext>(edit.change).default_value = zeros;
  ApplyBoth({edit}, model);
  const onnx::NodeProto* tile = Producer(model.graph(), "z.expanded");
  ASSERT_NE(tile, nullptr);
  EXPECT_EQ(tile->op_type(), "Tile");
  EXPECT_THAT(tile->input(), ElementsAre("x_ctx", "z.repeats"));
  EXPECT_EQ(Producer(model.graph(), "z.target")->op_type(), "Sub");
}

TEST(AddContextStates, RequiredModeDropsARecordedContextsDefault) {
  onnx::ModelProto model = TwoReaders();
  ContextEdit edit = ContextOfX();
  std::get<NewContext>(edit.change).default_value = ZerosNamed("z");
  ApplyBoth({edit}, model);
  ASSERT_THAT(InitializerNames(model.graph()), ElementsAre("x_ctx"));
  const int nodes = model.graph().node_size();
  edit.change = DropContextDefault{};
  ApplyBoth({edit}, model);
  EXPECT_THAT(InitializerNames(model.graph()), IsEmpty());
  EXPECT_EQ(model.graph().node_size(), nodes);
  EXPECT_THAT(InputNames(model.graph()), ElementsAre("x", "x_ctx"));
}

TEST(AddContextStates, AWindowsContextGoesRightInFrontOfItsReader) {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, 2, seq] x, float[2, 2, 3] w) => (float[batch, 2, ?] y) {
  a = Relu (x)
  y = Conv <pads = [2, 0]> (a, w)
})");
  ContextEdit edit = ContextOfX();
  edit.value = "a";
  std::get<NewContext>(edit.change).readers = {ContextReader{GraphPath{}, 1}};
  edit.operands = {OperandEdit{1, "pads", -1, {0, 0}, "", false}};
  ApplyBoth({edit}, model);
  const onnx::GraphProto& g = model.graph();
  EXPECT_EQ(g.node(0).op_type(), "Relu");  // the value is computed first
  EXPECT_THAT(Producer(g, "x.with_context")->input(), ElementsAre("x_ctx", "a"));
  EXPECT_LT(IndexOfProducer(g, "a"), IndexOfProducer(g, "x.with_context"));
  EXPECT_LT(IndexOfProducer(g, "x.with_context"), IndexOfProducer(g, "y"));
  EXPECT_EQ(g.node(g.node_size() - 1).op_type(), "Conv");
}

}  // namespace
}  // namespace rnnstate::context_apply_test
