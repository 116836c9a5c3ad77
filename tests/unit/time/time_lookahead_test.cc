// The model's lookahead (time/time_lookahead.h) as the verdict measures it (time/stream_verdict.h): a
// "same" window over time looks its padding after time ahead; windows in a row add up, through a GRU
// between them; a residual Add joins frames of different lags (named); causal windows and a causal
// convolution cut by a Slice look nothing ahead; windows that are not "same" at stride 1 with zeros of their
// own are not carried with a lookahead (negative controls). Models as ONNX text.

#include "time/time_lookahead.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "find/analysis.h"
#include "graph/model_index.h"
#include "test_models.h"
#include "test_names.h"
#include "time/stream_verdict.h"

namespace rnnstate::time_lookahead_test {
namespace {

using namespace test_names;

/// The verdict on `text`, judged as `rewrite` judges it (windows carried; with `lookahead`, those too).
struct Judged {
  explicit Judged(const std::string& text, bool lookahead = false)
      : model(ParseModel(text)), index(model), analysis(Analyze(index)) {
    JudgeStream(index, analysis, {}, {}, /*carry_windows=*/true, lookahead);
  }
  const StreamVerdict& verdict() const { return *analysis.stream; }
  onnx::ModelProto model;
  ModelIndex index;
  Analysis analysis;
};

/// x [batch, 2, seq] through a Conv with `conv` as its attributes, then a GRU over time.
std::string ConvGru(const std::string& conv, const std::string& op = "Conv") {
  return R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, 2, seq] x, float[2, 2, 5] w, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, batch, 3] Y) {
  c = )" +
         op + " <" + conv + R"(> (x)" + (op == "Conv" ? ", w" : "") + R"()
  s = Transpose <perm = [2, 0, 1]> (c)
  Y = GRU <hidden_size = 3> (s, W, R)
})";
}

/// Two "same" windows (1 and 2 frames ahead) with a GRU between them.
const char* kChain = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, 2, seq] x, float[3, 2, 3] w1, float[2, 3, 5] w2, float[1, 9, 3] W, float[1, 9, 3] R)
    => (float[batch, 2, seq] y) {
  c1 = Conv <pads = [1, 1]> (x, w1)
  s = Transpose <perm = [2, 0, 1]> (c1)
  Y = GRU <hidden_size = 3> (s, W, R)
  q = Squeeze <axes = [1]> (Y)
  z = Transpose <perm = [1, 2, 0]> (q)
  y = Conv <pads = [2, 2]> (z, w2)
})";

TEST(TimeLookahead, ASameConvLooksItsPaddingAfterTimeAhead) {
  const Judged judged(ConvGru("pads = [2, 2]"));
  EXPECT_EQ(judged.verdict().lookahead.frames, 2);
  EXPECT_THAT(judged.verdict().lookahead.windows, ElementsAre(HasSubstr("Conv")));
  EXPECT_EQ(judged.verdict().delay, 0);  // not carried without --lookahead
  EXPECT_FALSE(judged.verdict().ChunkExact());
  EXPECT_THAT(judged.verdict().windows, IsEmpty());
}

TEST(TimeLookahead, WithLookaheadTheSameConvIsCarriedAndTheModelStreamsLate) {
  const Judged judged(ConvGru("dilations = [2], pads = [3, 5]"), /*lookahead=*/true);
  ASSERT_EQ(judged.verdict().windows.size(), 1u);
  EXPECT_EQ(judged.verdict().windows[0].lookahead, 5);
  EXPECT_EQ(judged.verdict().windows[0].frames, 8);
  EXPECT_EQ(judged.verdict().delay, 5);
  EXPECT_TRUE(judged.verdict().ChunkExact()) << judged.verdict().problem;
}

TEST(TimeLookahead, WindowsInARowAddTheirLookaheads) {
  const Judged measured(kChain);
  EXPECT_EQ(measured.verdict().lookahead.frames, 3);
  EXPECT_THAT(measured.verdict().lookahead.problem, IsEmpty());
  const Judged carried(kChain, /*lookahead=*/true);
  EXPECT_EQ(carried.verdict().windows.size(), 2u);
  EXPECT_EQ(carried.verdict().delay, 3);
  EXPECT_TRUE(carried.verdict().ChunkExact()) << carried.verdict().problem;
}

TEST(TimeLookahead, AResidualPathWithoutTheLookaheadIsRefusedAndNamed) {
  const Judged judged(kResidualSameConvGru, /*lookahead=*/true);
  EXPECT_EQ(judged.verdict().lookahead.frames, 1);
  EXPECT_THAT(judged.verdict().lookahead.problem, HasSubstr("Add"));
  EXPECT_THAT(judged.verdict().windows, IsEmpty());  // nothing carried
  EXPECT_EQ(judged.verdict().delay, 0);
  EXPECT_FALSE(judged.verdict().ChunkExact());
}

TEST(TimeLookahead, CausalWindowsLookNothingAhead) {
  const Judged causal(ConvGru("pads = [4, 0]"), /*lookahead=*/true);
  EXPECT_EQ(causal.verdict().lookahead.frames, 0);
  EXPECT_THAT(causal.verdict().lookahead.windows, IsEmpty());
  EXPECT_EQ(causal.verdict().delay, 0);
  EXPECT_TRUE(causal.verdict().ChunkExact());
}

TEST(TimeLookahead, WindowsThatAreNotSameAtStrideOneWithTheirOwnZerosAreNotCarried) {
  for (const auto& [attributes, op] : std::vector<std::pair<std::string, std::string>>{
           {"pads = [2, 2], strides = [2]", "Conv"},              // a stride over time
           {"auto_pad = \"SAME_UPPER\", strides = [2]", "Conv"},  // auto_pad at a stride: its amount varies
           {"kernel_shape = [3], pads = [1, 1]", "MaxPool"},      // pads with minus infinity
           {"kernel_shape = [3], pads = [1, 1]", "AveragePool"},  // does not count its padding
           {"pads = [3, 3]", "Conv"},                             // pads more than the span: longer output
       }) {
    const Judged judged(ConvGru(attributes, op), /*lookahead=*/true);
    EXPECT_EQ(judged.verdict().delay, 0) << op << " " << attributes;
    EXPECT_THAT(judged.verdict().windows, IsEmpty()) << op << " " << attributes;
    EXPECT_FALSE(judged.verdict().ChunkExact()) << op << " " << attributes;
  }
}

TEST(TimeLookahead, AutoPadSameLooksAheadByWhatItPutsAfterTimeAndIsCarriedWithLookahead) {
  const Judged upper(ConvGru("auto_pad = \"SAME_UPPER\""));  // kernel 5: 2 before, 2 after
  EXPECT_EQ(upper.verdict().lookahead.frames, 2);
  EXPECT_FALSE(upper.verdict().ChunkExact());
  const Judged carried(ConvGru("auto_pad = \"SAME_UPPER\""), /*lookahead=*/true);
  ASSERT_EQ(carried.verdict().windows.size(), 1u);
  EXPECT_EQ(carried.verdict().delay, 2);
  EXPECT_TRUE(carried.verdict().ChunkExact()) << carried.verdict().problem;
}

TEST(TimeLookahead, AnAveragePoolThatCountsItsZerosIsCarried) {
  const Judged judged(ConvGru("count_include_pad = 1, kernel_shape = [3], pads = [1, 1]", "AveragePool"), true);
  EXPECT_EQ(judged.verdict().delay, 1);
  EXPECT_TRUE(judged.verdict().ChunkExact()) << judged.verdict().problem;
}

TEST(TimeLookahead, APadNodeThatPadsAfterTimeLooksAheadAndIsCarriedWithLookahead) {
  const std::string model = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, 2, seq] x, float[2, 2, 4] w, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, batch, 3] Y) {
  pads = Constant <value = int64[6] {0, 0, 1, 0, 0, 2}> ()
  p = Pad (x, pads)
  c = Conv (p, w)
  s = Transpose <perm = [2, 0, 1]> (c)
  Y = GRU <hidden_size = 3> (s, W, R)
})";
  const Judged measured(model);
  EXPECT_EQ(measured.verdict().lookahead.frames, 2);
  EXPECT_EQ(measured.verdict().delay, 0);
  EXPECT_FALSE(measured.verdict().ChunkExact());
  const Judged carried(model, /*lookahead=*/true);
  ASSERT_EQ(carried.verdict().windows.size(), 1u);
  EXPECT_EQ(carried.verdict().delay, 2);
  EXPECT_EQ(carried.verdict().flush, 2);
  EXPECT_TRUE(carried.verdict().ChunkExact()) << carried.verdict().problem;
}

/// x [batch, 2, seq], ConvTranspose (stride 2 over time, attributes `up`), then `after` on u, a GRU over time.
std::string UpsampleGru(const std::string& up, const std::string& before = "", const std::string& after = "") {
  return R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, 2, seq] x, float[2, 2, 3] w3, float[2, 2, 4] w, float[1, 6, 2] W, float[1, 6, 2] R)
    => (float[seq2, 1, batch, 2] Y) {
  v = )" +
         (before.empty() ? "Identity (x)" : before) + R"(
  u = ConvTranspose <strides = [2], )" +
         up + R"(> (v, w)
  t = )" +
         (after.empty() ? "Identity (u)" : after) + R"(
  s = Transpose <perm = [2, 0, 1]> (t)
  Y = GRU <hidden_size = 2> (s, W, R)
})";
}

TEST(TimeLookahead, AnUpsamplingThatLagsIsCarriedWithLookaheadItsDelayAtItsOutputsRate) {
  const Judged measured(UpsampleGru("pads = [1, 1]"));
  EXPECT_EQ(measured.verdict().lookahead.frames, 2);
  EXPECT_EQ(measured.verdict().delay, 0);
  EXPECT_FALSE(measured.verdict().ChunkExact());
  EXPECT_THAT(measured.verdict().problem, HasSubstr("crops 1 frame before time"));
  const Judged carried(UpsampleGru("pads = [1, 1]"), /*lookahead=*/true);
  ASSERT_EQ(carried.verdict().windows.size(), 1u);
  EXPECT_EQ(carried.verdict().windows[0].frames, 2);
  EXPECT_EQ(carried.verdict().delay, 2);       // output frames
  EXPECT_EQ(carried.verdict().flush, 1);       // input frames
  EXPECT_TRUE(carried.verdict().flush_exact);  // the flush's zeros reach it as zeros
  EXPECT_TRUE(carried.verdict().ChunkExact()) << carried.verdict().problem;
}

TEST(TimeLookahead, TheFlushIsExactOnlyWhereItsZerosReachTheOneWindowAsZeros) {
  const Judged sigmoid(UpsampleGru("pads = [1, 1]", "Sigmoid (x)"), /*lookahead=*/true);
  EXPECT_TRUE(sigmoid.verdict().ChunkExact());
  EXPECT_FALSE(sigmoid.verdict().flush_exact);  // sigmoid(0) = 0.5
  const Judged relu(UpsampleGru("pads = [1, 1]", "Relu (x)"), /*lookahead=*/true);
  EXPECT_TRUE(relu.verdict().flush_exact);
  const Judged chain(kChain, /*lookahead=*/true);
  EXPECT_FALSE(chain.verdict().flush_exact);  // two windows: the second pads the end with zeros of its own
}

TEST(TimeLookahead, ALaggingUpsamplingBesideAnotherRateIsNotCarried) {
  // A "same" Conv before it: frames 1 late (input rate) would be upsampled.
  const Judged before(UpsampleGru("pads = [1, 1]", "Conv <pads = [1, 1]> (x, w3)"), /*lookahead=*/true);
  EXPECT_THAT(before.verdict().lookahead.problem, HasSubstr("at another rate"));
  EXPECT_THAT(before.verdict().windows, IsEmpty());
  EXPECT_FALSE(before.verdict().ChunkExact());
  // A strided Conv after it: its 2 frames late would be halved.
  const Judged after(UpsampleGru("pads = [1, 1]", "", "Conv <pads = [2, 0], strides = [2]> (u, w3)"), true);
  EXPECT_THAT(after.verdict().lookahead.problem, HasSubstr("at another rate"));
  EXPECT_EQ(after.verdict().delay, 0);
  EXPECT_FALSE(after.verdict().ChunkExact());
}

}  // namespace
}  // namespace rnnstate::time_lookahead_test
