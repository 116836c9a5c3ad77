// `rewrite --lookahead` (issue 39): a "same" window over time loses both its paddings on time to a context
// state whose first call's default holds the padding before (so the first call emits the frames its input
// completes), whose time axis is named (the first call holds fewer frames than the later ones), and whose
// pair records the lookahead; the stream record states the delay; a rewrite of the rewrite changes no byte
// and check passes; without --lookahead, and where a skip path lags unalike, the window stays as it is. The
// same for a strided ConvTranspose that lags (PyTorch's symmetric padding): its input frames carried, its
// output late by whole input frames (the stream's delay at its rate, its flush in input frames).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "contract/first_feeds.h"
#include "graph/proto_access.h"
#include "pipeline_stages.h"
#include "rnnstate/json.h"
#include "rnnstate/pipeline.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::lookahead_context_test {
namespace {

using namespace test_names;
using testing::Producer;

/// A "same" Conv (kernel 5, dilation 2: 3 frames of padding before, 5 after) after a Relu, then a GRU.
const char* kSameConvGru = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, 2, seq] x, float[2, 2, 5] w, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, batch, 3] Y) {
  r = Relu (x)
  c = Conv <dilations = [2], pads = [3, 5]> (r, w)
  s = Transpose <perm = [2, 0, 1]> (c)
  Y = GRU <hidden_size = 3> (s, W, R)
})";

PlanOptions Lookahead(StateInputMode mode) {
  PlanOptions options = InMode(mode);
  options.lookahead = true;
  return options;
}

TEST(LookaheadContext, ASameConvLosesBothPaddingsToAContextThatStartsWithThePaddingBefore) {
  onnx::ModelProto model = ParseModel(kSameConvGru);
  const RewriteOutcome outcome = RewriteModel(model, Lookahead(StateInputMode::kDefaults), /*strict=*/false);
  EXPECT_THAT(outcome.PlanLines(),
              ::testing::Contains(HasSubstr("3 frames of zeros; its window looks ahead 5 frames of this value")));
  const onnx::GraphProto& g = model.graph();
  const onnx::NodeProto& conv = testing::NodeOfType(g, "Conv");
  EXPECT_THAT(FindAttribute(conv, "pads")->ints(), ElementsAre(0, 0));
  const onnx::NodeProto* concat = Producer(g, conv.input(0));
  ASSERT_NE(concat, nullptr);
  EXPECT_EQ(concat->op_type(), "Concat");
  EXPECT_EQ(concat->input(1), "r");
  const StatePair pair = ContextPair(model);
  EXPECT_EQ(*pair.context, (ContextSpec{"r", 2, 8, conv.name(), 5, "", false}));
  // The time axis is named: 3 frames on the first call, 8 on every later one.
  ExpectContextDefault(g, pair, {1, 2, 3});
  EXPECT_TRUE(pair.streamable);
  const Json stream = StreamObject(model);
  EXPECT_EQ(stream.value("delay", 0), 5);
  EXPECT_TRUE(stream.value("flush_exact", false));
  EXPECT_FALSE(stream.contains("flush"));  // as many frames as the delay
  EXPECT_TRUE(stream.value("chunk_exact", false));
  EXPECT_THAT(CheckForStreaming(model).problems, IsEmpty());
  EXPECT_THAT(ReportModel(model, "m.onnx", ReportFormat::kText).text, HasSubstr("yes, 5 frames late"));
}

TEST(LookaheadContext, ARewriteOfTheRewriteChangesNoByte) {
  for (StateInputMode mode : {StateInputMode::kRequired, StateInputMode::kDefaults}) {
    onnx::ModelProto model = ParseModel(kSameConvGru);
    RewriteModel(model, Lookahead(mode), false);
    const std::string first = testing::Bytes(model);
    for (const PlanOptions& again : {Lookahead(mode), InMode(mode)}) {
      EXPECT_FALSE(RewriteModel(model, again, false).changed);
      EXPECT_EQ(testing::Bytes(model), first);
    }
  }
}

TEST(LookaheadContext, InRequiredModeTheFirstFeedHoldsThePaddingBefore) {
  onnx::ModelProto model = ParseModel(kSameConvGru);
  RewriteModel(model, Lookahead(StateInputMode::kRequired), false);
  const StatePair pair = ContextPair(model);
  EXPECT_FALSE(pair.optional);
  const std::vector<FirstFeed> feeds = FirstFeeds({pair}, 2, {});
  ASSERT_EQ(feeds.size(), 1u);
  EXPECT_THAT(feeds[0].shape, ElementsAre(2, 2, 3));
}

TEST(LookaheadContext, WithoutLookaheadTheSameConvStaysAsItIs) {
  onnx::ModelProto model = ParseModel(kSameConvGru);
  RewriteModel(model, InMode(StateInputMode::kDefaults), false);
  for (const StatePair& pair : testing::RecordedPairs(model)) {
    EXPECT_NE(pair.kind, kKindContext);
    EXPECT_FALSE(pair.streamable);
  }
  EXPECT_THAT(FindAttribute(testing::NodeOfType(model.graph(), "Conv"), "pads")->ints(), ElementsAre(3, 5));
  EXPECT_FALSE(StreamObject(model).contains("delay"));
  EXPECT_THAT(ReportModel(ParseModel(kSameConvGru), "m.onnx", ReportFormat::kText).text,
              HasSubstr("lookahead: 5 frames"));
}

TEST(LookaheadContext, ASkipPathWithoutTheLookaheadLeavesTheModelAsTheDefaultRewriteDoes) {
  onnx::ModelProto asked = ParseModel(kResidualSameConvGru), plain = ParseModel(kResidualSameConvGru);
  const RewriteOutcome outcome = RewriteModel(asked, Lookahead(StateInputMode::kDefaults), false);
  RewriteModel(plain, InMode(StateInputMode::kDefaults), false);
  EXPECT_EQ(testing::Bytes(asked), testing::Bytes(plain));
  bool named = false;
  for (const Warning& warning : outcome.warnings) named = named || warning.text.find("Add") != std::string::npos;
  EXPECT_TRUE(named);
}

/// PyTorch's usual upsampler: ConvTranspose1d(k 4, stride 2, padding 1) over time, then a GRU at its rate.
const char* kSymmetricUpsampleGru = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, 2, seq] x, float[2, 2, 4] w, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq2, 1, batch, 3] Y) {
  u = ConvTranspose <strides = [2], pads = [1, 1]> (x, w)
  s = Transpose <perm = [2, 0, 1]> (u)
  Y = GRU <hidden_size = 3> (s, W, R)
})";

TEST(LookaheadContext, AnUpsamplingThatLagsCarriesItsInputFramesAndComesAWholeInputFrameLate) {
  for (StateInputMode mode : {StateInputMode::kRequired, StateInputMode::kDefaults}) {
    onnx::ModelProto model = ParseModel(kSymmetricUpsampleGru);
    RewriteModel(model, Lookahead(mode), /*strict=*/false);
    const onnx::NodeProto& up = testing::NodeOfType(model.graph(), "ConvTranspose");
    // 2 input frames of context (1 on the first call), 3 full frames cropped before and after.
    EXPECT_THAT(FindAttribute(up, "pads")->ints(), ElementsAre(3, 3));
    const StatePair pair = ContextPair(model);
    EXPECT_EQ(*pair.context, (ContextSpec{"x", 2, 2, up.name(), 1, "", false}));
    EXPECT_THAT(FirstFeeds({pair}, 2, {})[0].shape, ElementsAre(2, 2, 1));
    const Json stream = StreamObject(model);
    EXPECT_EQ(stream.value("delay", 0), 2);  // output frames
    EXPECT_EQ(stream.value("flush", 0), 1);  // input frames
    EXPECT_TRUE(stream.value("flush_exact", false));
    EXPECT_TRUE(stream.value("chunk_exact", false));
    EXPECT_THAT(CheckForStreaming(model).problems, IsEmpty());
    EXPECT_THAT(ReportModel(model, "m.onnx", ReportFormat::kText).text,
                HasSubstr("yes, 2 frames late: chunked runs with the states fed back equal one run but its last 2 "
                          "frames, which a flush of 1 frame of zeros brings"));
    const std::string first = testing::Bytes(model);
    for (const PlanOptions& again : {Lookahead(mode), InMode(mode)}) {
      EXPECT_FALSE(RewriteModel(model, again, false).changed);
      EXPECT_EQ(testing::Bytes(model), first);
    }
  }
}

TEST(LookaheadContext, WithoutLookaheadAnUpsamplingThatLagsStaysAndTheVerdictSaysHowLate) {
  onnx::ModelProto model = ParseModel(kSymmetricUpsampleGru);
  RewriteModel(model, InMode(StateInputMode::kDefaults), false);
  EXPECT_THAT(FindAttribute(testing::NodeOfType(model.graph(), "ConvTranspose"), "pads")->ints(), ElementsAre(1, 1));
  const Json stream = StreamObject(model);
  EXPECT_FALSE(stream.value("chunk_exact", true));
  EXPECT_FALSE(stream.contains("delay"));
  EXPECT_THAT(stream.value("reason", ""), HasSubstr("rewrite --lookahead carries it, its output then 2 frames late"));
}

TEST(LookaheadContext, AnAutoPadSameConvIsWrittenOutWithoutItsPaddingOnTime) {
  // kernel (4, 3) over [time, frequency], SAME_LOWER: 2 frames before time, 1 after; 1 on each side of frequency.
  const char* model_text = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, 1, seq, 5] x, float[2, 1, 4, 3] w, float[1, 9, 10] W, float[1, 9, 3] R)
    => (float[seq, 1, batch, 3] Y) {
  c = Conv <auto_pad = "SAME_LOWER"> (x, w)
  t = Transpose <perm = [2, 0, 1, 3]> (c)
  shape = Constant <value = int64[3] {0, 0, 10}> ()
  s = Reshape (t, shape)
  Y = GRU <hidden_size = 3> (s, W, R)
})";
  onnx::ModelProto model = ParseModel(model_text);
  RewriteModel(model, Lookahead(StateInputMode::kDefaults), /*strict=*/false);
  const onnx::NodeProto& conv = testing::NodeOfType(model.graph(), "Conv");
  EXPECT_EQ(FindAttribute(conv, "auto_pad"), nullptr);
  EXPECT_THAT(FindAttribute(conv, "pads")->ints(), ElementsAre(0, 1, 0, 1));
  EXPECT_EQ(ContextPair(model).context->lookahead, 1);
  EXPECT_EQ(StreamObject(model).value("delay", 0), 1);
  EXPECT_THAT(CheckForStreaming(model).problems, IsEmpty());
  onnx::ModelProto plain = ParseModel(model_text);
  RewriteModel(plain, InMode(StateInputMode::kDefaults), false);
  EXPECT_NE(FindAttribute(testing::NodeOfType(plain.graph(), "Conv"), "auto_pad"), nullptr);
  EXPECT_FALSE(StreamObject(plain).value("chunk_exact", true));
}

}  // namespace
}  // namespace rnnstate::lookahead_context_test
