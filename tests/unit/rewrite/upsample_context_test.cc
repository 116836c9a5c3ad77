// The context of a strided ConvTranspose over time as a state (time/upsample_windows.h, issue 39): an
// aligned upsampling — its tail cut by a Slice (PyTorch's causal `deconv(x)[..., :-(k - s)]`) or cropped by
// its own pads — gets a context of floor(span / stride) input frames, its pads crop c * s frames before time
// and the tail after, the Slice keeps every frame; the model is then judged chunk-exact, check passes, a
// rewrite of the rewrite changes no byte. Negative controls: PyTorch's symmetric padding (a crop before
// time) gets no context and the model does not stream; windows that do not overlap need no context.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "graph/proto_access.h"
#include "pipeline_stages.h"
#include "rnnstate/pipeline.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::upsample_context_test {
namespace {

using namespace test_names;
using testing::Producer;

/// A GRU's output [seq, 1, batch, 3] made [batch, 3, seq], a ConvTranspose (kernel 4, stride 2) over time
/// with `attributes`, its output read by `tail` (which must define `y` from `u`), then a second GRU.
std::string UpsampleModel(const std::string& attributes, const std::string& tail, int kernel = 4) {
  return R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] x, float[1, 9, 2] W, float[1, 9, 3] R, float[3, 2, )" +
         std::to_string(kernel) + R"(] w, float[1, 6, 2] W2, float[1, 6, 2] R2)
    => (float[seq2, 1, batch, 2] Y2) {
  Y = GRU <hidden_size = 3> (x, W, R)
  one = Constant <value = int64[1] {1}> ()
  q = Squeeze (Y, one)
  t = Transpose <perm = [1, 2, 0]> (q)
  u = ConvTranspose <)" + attributes + R"(> (t, w)
  )" + tail + R"(
  s = Transpose <perm = [2, 0, 1]> (y)
  Y2 = GRU <hidden_size = 2> (s, W2, R2)
})";
}

const char* kCutTail = R"(starts = Constant <value = int64[1] {0}> ()
  ends = Constant <value = int64[1] {-2}> ()
  axes = Constant <value = int64[1] {2}> ()
  y = Slice (u, starts, ends, axes))";

onnx::ModelProto Rewritten(const std::string& text, StateInputMode mode = StateInputMode::kDefaults) {
  onnx::ModelProto model = ParseModel(text);
  RewriteModel(model, InMode(mode), /*strict=*/false);
  return model;
}

/// The int64 initializer `name` of the main graph.
std::vector<int64_t> Ints(const onnx::GraphProto& g, const std::string& name) {
  for (const auto& tensor : g.initializer()) {
    if (tensor.name() == name) return {tensor.int64_data().begin(), tensor.int64_data().end()};
  }
  return {};
}

TEST(UpsampleContext, ACausalUpsamplingCutByASliceCarriesOneInputFrameAndCropsItsOutput) {
  const onnx::ModelProto model = Rewritten(UpsampleModel("strides = [2]", kCutTail));
  const onnx::GraphProto& g = model.graph();
  const onnx::NodeProto& up = testing::NodeOfType(g, "ConvTranspose");
  EXPECT_THAT(FindAttribute(up, "pads")->ints(), ElementsAre(2, 2));  // c * s before, the tail after
  const onnx::NodeProto* concat = Producer(g, up.input(0));
  ASSERT_NE(concat, nullptr);
  EXPECT_EQ(concat->op_type(), "Concat");
  EXPECT_EQ(concat->input(1), "t");
  EXPECT_THAT(Ints(g, Producer(g, "y")->input(2)), ElementsAre(std::numeric_limits<int64_t>::max()));
  const StatePair pair = ContextPair(model);
  EXPECT_EQ(pair.context->value, "t");
  EXPECT_EQ(pair.context->axis, 2);
  EXPECT_EQ(pair.context->frames, 1);
  EXPECT_EQ(MetaShapeText(pair.shape), "[batch,3,1]");
  for (const StatePair& state : testing::RecordedPairs(model)) EXPECT_TRUE(state.streamable) << state.input;
  EXPECT_THAT(CheckForStreaming(model).problems, IsEmpty());
}

TEST(UpsampleContext, AnUpsamplingCroppingItsOwnTailKeepsItsCropAfterTime) {
  for (const char* attributes : {"strides = [2], pads = [0, 2]", "strides = [2], pads = [0, 3], output_padding = [1]"}) {
    const onnx::ModelProto model = Rewritten(UpsampleModel(attributes, "y = Identity (u)"));
    const onnx::NodeProto& up = testing::NodeOfType(model.graph(), "ConvTranspose");
    const onnx::AttributeProto* pads = FindAttribute(up, "pads");
    ASSERT_NE(pads, nullptr);
    EXPECT_EQ(pads->ints(0), 2) << attributes;
    EXPECT_EQ(pads->ints(1), std::string(attributes).find("output_padding") == std::string::npos ? 2 : 3);
    EXPECT_EQ(ContextPair(model).context->frames, 1);
    EXPECT_TRUE(ContextPair(model).streamable);
  }
}

TEST(UpsampleContext, ARewriteOfTheRewriteChangesNothing) {
  for (StateInputMode mode : {StateInputMode::kRequired, StateInputMode::kDefaults}) {
    onnx::ModelProto model = Rewritten(UpsampleModel("strides = [2]", kCutTail), mode);
    const std::string first = testing::Bytes(model);
    EXPECT_FALSE(RewriteModel(model, InMode(mode), /*strict=*/false).changed);
    EXPECT_EQ(testing::Bytes(model), first);
    EXPECT_THAT(CheckForStreaming(model).problems, IsEmpty());
  }
}

TEST(UpsampleContext, PyTorchsSymmetricPaddingIsNotCarriedAndTheModelDoesNotStream) {
  const onnx::ModelProto model = Rewritten(UpsampleModel("strides = [2], pads = [1, 1]", "y = Identity (u)"));
  for (const StatePair& state : testing::RecordedPairs(model)) {
    EXPECT_NE(state.kind, kKindContext);
    EXPECT_FALSE(state.streamable);
  }
  EXPECT_THAT(ReportModel(model, "m.onnx", ReportFormat::kText).text, HasSubstr("crops 1 frame before time"));
}

TEST(UpsampleContext, WindowsThatDoNotOverlapStreamAsTheyAre) {
  const onnx::ModelProto model = Rewritten(UpsampleModel("strides = [2]", "y = Identity (u)", 2));
  for (const StatePair& state : testing::RecordedPairs(model)) {
    EXPECT_NE(state.kind, kKindContext);
    EXPECT_TRUE(state.streamable) << state.input;
  }
  // The same without its tail cut: the last frames overlap the next call's, nothing is carried.
  const onnx::ModelProto uncut = Rewritten(UpsampleModel("strides = [2]", "y = Identity (u)"));
  for (const StatePair& state : testing::RecordedPairs(uncut)) EXPECT_FALSE(state.streamable) << state.input;
}

}  // namespace
}  // namespace rnnstate::upsample_context_test
