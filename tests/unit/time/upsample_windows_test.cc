// Strided ConvTranspose over time (time/upsample_windows.h): which upsamplings a context state makes stream
// — aligned ones, cropping nothing before time and exactly their tail after (their own pads, or a Slice
// that alone reads them) — with floor(span / stride) input frames of context and the crop the rewrite
// writes; those that stream as they are (windows apart); and the negative controls that must not be
// carried: a crop that is not the tail, a Slice cutting another amount or read twice, an output_shape.
// PyTorch's symmetric padding (a crop before time: it lags) is carried only with --lookahead, late by a whole
// number of input frames; negative controls: a crop before time beyond the span, or after time that is not
// the tail less it. Models as ONNX text.

#include "time/upsample_windows.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "graph/model_index.h"
#include "test_models.h"
#include "test_names.h"
#include "time/causal_windows.h"
#include "time/time_flow.h"

namespace rnnstate::upsample_windows_test {
namespace {

using namespace test_names;

/// The model `body` (opset 14, over x [batch, 2, seq], time on axis 2), its flow and its carried windows.
struct Upsampled {
  explicit Upsampled(const std::string& body)
      : model(ParseModel("<ir_version: 8, opset_import: [\"\" : 14]>\n" + body)),
        index(model),
        flow(index, {InputAxis{"x", 2}}),
        found(FindCausalWindows(index, flow)),
        streamed(index, {InputAxis{"x", 2}}, {}, -1, {}, StreamedNodesOf(found)) {}
  /// "node:cut:frames" for each window found.
  std::vector<std::string> Found() const {
    std::vector<std::string> texts;
    for (const CausalWindow& w : found) {
      texts.push_back(model.graph().node(w.window).output(0) + ":" +
                      (w.cut < 0 ? "-" : model.graph().node(w.cut).output(0)) + ":" + std::to_string(w.frames));
    }
    return texts;
  }
  const onnx::NodeProto& Node(int n) const { return model.graph().node(n); }
  onnx::ModelProto model;
  ModelIndex index;
  TimeFlow flow;
  std::vector<CausalWindow> found;
  TimeFlow streamed;
};

TimeWindow Transposed(int64_t kernel, int64_t stride, int64_t before, int64_t after, int64_t dilation = 1) {
  return TimeWindow{kernel, stride, dilation, before, after, /*transpose=*/true, /*flipped=*/false};
}

TEST(UpsampleWindows, TheContextIsTheInputFramesTheSpanReachesBackAndTheTailWhatTheNextCallCompletes) {
  EXPECT_EQ(UpsampleContext(Transposed(4, 2, 0, 0)), 1);  // span 3: frames 2i .. 2i + 3
  EXPECT_EQ(UpsampleTail(Transposed(4, 2, 0, 0)), 2);
  EXPECT_EQ(UpsampleContext(Transposed(8, 4, 0, 0)), 1);
  EXPECT_EQ(UpsampleContext(Transposed(3, 2, 0, 0, 3)), 3);  // span 6
  EXPECT_EQ(UpsampleTail(Transposed(3, 2, 0, 0, 3)), 5);
  EXPECT_EQ(UpsampleContext(Transposed(2, 2, 0, 0)), 0);  // windows apart
  EXPECT_EQ(UpsampleTail(Transposed(2, 2, 0, 0)), 0);
}

TEST(UpsampleWindows, OnlyAnUpsamplingThatCropsNothingBeforeTimeAndItsTailAfterIsAligned) {
  EXPECT_EQ(FitOfUpsampling(Transposed(4, 2, 0, 2), 0), UpsampleFit::kInPlace);
  EXPECT_EQ(FitOfUpsampling(Transposed(4, 2, 0, 3), 1), UpsampleFit::kInPlace);  // output_padding adds one back
  EXPECT_EQ(FitOfUpsampling(Transposed(4, 2, 0, 0), 0), UpsampleFit::kCutBySlice);
  EXPECT_EQ(FitOfUpsampling(Transposed(2, 2, 0, 0), 0), UpsampleFit::kInPlace);
  EXPECT_EQ(FitOfUpsampling(Transposed(1, 2, 0, 0), 1), UpsampleFit::kInPlace);  // 1 frame + 1 of padding
  // Negative controls: too little or too much crop after, stride 1.
  EXPECT_EQ(FitOfUpsampling(Transposed(4, 2, 0, 1), 0), UpsampleFit::kNone);
  EXPECT_EQ(FitOfUpsampling(Transposed(4, 2, 0, 3), 0), UpsampleFit::kNone);
  EXPECT_EQ(FitOfUpsampling(Transposed(1, 2, 0, 0), 0), UpsampleFit::kNone);  // 1 of 2 frames: gaps
  EXPECT_EQ(FitOfUpsampling(Transposed(3, 1, 0, 0), 0), UpsampleFit::kNone);
  TimeWindow conv = Transposed(4, 2, 0, 2);
  conv.transpose = false;
  EXPECT_EQ(FitOfUpsampling(conv, 0), UpsampleFit::kNone);
}

const char* kUpsamplings = R"(g (float[batch, 2, seq] x, float[2, 3, 4] w4, float[2, 3, 2] w2) => (float[batch, 3, seq2] y) {
    y = ConvTranspose <strides = [2], pads = [0, 2]> (x, w4)
    full = ConvTranspose <strides = [2]> (x, w4)
    starts = Constant <value = int64[1] {0}> ()
    ends = Constant <value = int64[1] {-2}> ()
    axes = Constant <value = int64[1] {2}> ()
    cut = Slice (full, starts, ends, axes)
    apart = ConvTranspose <strides = [2]> (x, w2)
    torch = ConvTranspose <strides = [2], pads = [1, 1]> (x, w4)
    less = ConvTranspose <strides = [2], pads = [0, 1]> (x, w4)
    uncut = ConvTranspose <strides = [2]> (x, w4)
    ends1 = Constant <value = int64[1] {-1}> ()
    cut1 = Slice (uncut, starts, ends1, axes)
    twice = ConvTranspose <strides = [2]> (x, w4)
    t1 = Slice (twice, starts, ends, axes)
    t2 = Relu (twice)
    fixed = ConvTranspose <strides = [2], pads = [0, 2], output_shape = [10]> (x, w4)
  })";

TEST(UpsampleWindows, AlignedUpsamplingsAreCarriedWithTheirContext) {
  const Upsampled u(kUpsamplings);
  // apart needs no context; torch crops before time; less crops 1 of a tail of 2; cut1 cuts 1 of 2; twice is
  // read twice; fixed has a fixed output length.
  ASSERT_THAT(u.Found(), ElementsAre("y:-:1", "full:cut:1"));
  EXPECT_TRUE(u.found[0].shape.transpose);
  EXPECT_EQ(u.found[0].value, "x");
  EXPECT_EQ(PadsWithoutTimeBefore(u.index, u.Node(0), 2, 3), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(PadsWithoutTimeBefore(u.index, u.Node(1), 2, 3, /*and_after=*/true), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(SliceEndsToTheEnd(u.index, u.Node(5), 2, 3), (std::vector<int64_t>{std::numeric_limits<int64_t>::max()}));
}

TEST(UpsampleWindows, TheFlowSeesTheCarriedFramesThroughAndKeepsTheChunkMultiple) {
  const Upsampled u(kUpsamplings);
  EXPECT_EQ(TimeFactText(u.flow.Of({}, "y")), "frames on axis 2, inexact");  // not carried
  EXPECT_EQ(TimeFactText(u.streamed.Of({}, "y")), "frames on axis 2");
  EXPECT_EQ(TimeFactText(u.streamed.Of({}, "cut")), "frames on axis 2");
  EXPECT_EQ(u.streamed.chunk_multiple(), 1);
  // Windows apart stream as they are; the others stay broken and say why.
  EXPECT_EQ(TimeFactText(u.flow.Of({}, "apart")), "frames on axis 2");
  ASSERT_TRUE(u.flow.Of({}, "torch").broken.has_value());
  EXPECT_THAT(u.flow.Of({}, "torch").broken->why, HasSubstr("crops 1 frame before time, so its output lags"));
  EXPECT_THAT(u.flow.Of({}, "less").broken->why, HasSubstr("crops 1 frame after time where its tail is 2 frames"));
  EXPECT_THAT(u.flow.Of({}, "fixed").broken->why, HasSubstr("output_shape"));
  EXPECT_FALSE(u.streamed.Of({}, "cut1").exact());
}

TEST(UpsampleWindows, OverItsCarriedContextTheRewrittenUpsamplingGivesTheChunksOwnFrames) {
  // What the rewrite makes: c * s cropped before, the tail after, over a Concat holding c frames.
  const Upsampled u(R"(g (float[batch, 2, seq] x, float[2, 3, 4] w, float[2, 3, 7] w7) => (float[batch, 3, seq2] y) {
    y = ConvTranspose <strides = [2], pads = [2, 2]> (x, w)
    short = ConvTranspose <strides = [2], pads = [0, 2]> (x, w)
    wide = ConvTranspose <strides = [2], pads = [6, 5]> (x, w7)
  })");
  const TimeFlow one(u.index, {InputAxis{"x", 2}}, {}, -1, {{"x", 1}});
  EXPECT_EQ(TimeFactText(one.Of({}, "y")), "frames on axis 2");
  EXPECT_EQ(one.Of({}, "y").context, 0);
  EXPECT_EQ(TimeFactText(one.Of({}, "short")), "mixed");  // the context's own frames are not cropped
  EXPECT_EQ(TimeFactText(one.Of({}, "wide")), "mixed");   // span 6 needs 3 frames
  const TimeFlow three(u.index, {InputAxis{"x", 2}}, {}, -1, {{"x", 3}});
  EXPECT_EQ(TimeFactText(three.Of({}, "wide")), "frames on axis 2");
  EXPECT_EQ(TimeFactText(three.Of({}, "y")), "mixed");
}

TEST(UpsampleWindows, TheCropTheRewriteWritesKeepsTheOtherAxesAndTheOutputPadding) {
  const Upsampled u(R"(g (float[batch, 2, seq, 8] x, float[2, 3, 4, 3] w) => (float[batch, 3, seq2, 16] y) {
    y = ConvTranspose <strides = [2, 2], pads = [0, 1, 3, 0], output_padding = [1, 1]> (x, w)
    n = ConvTranspose <strides = [2, 2], output_padding = [0, 1]> (x, w)
  })");
  EXPECT_EQ(UpsamplePads(u.Node(0), *ReadTimeWindow(u.index, {}, u.Node(0), 2, 4), 2, 4),
            (std::vector<int64_t>{2, 1, 3, 0}));
  // No pads attribute: written in full.
  EXPECT_EQ(UpsamplePads(u.Node(1), *ReadTimeWindow(u.index, {}, u.Node(1), 2, 4), 2, 4),
            (std::vector<int64_t>{2, 0, 2, 0}));
}

TEST(UpsampleWindows, ALaggingUpsamplingComesAWholeNumberOfInputFramesLate) {
  // k 4, s 2, padding 1: output frame n is final after input frame floor((n + 1) / 2): 1 frame late at
  // least, 2 (one input frame) as a static graph emits; h = 1 frame held: context floor((3 + 1) / 2).
  EXPECT_EQ(UpsampleDelay(Transposed(4, 2, 1, 1)), 2);
  EXPECT_EQ(UpsampleLag(Transposed(4, 2, 1, 1)), 1);
  EXPECT_EQ(UpsampleContext(Transposed(4, 2, 1, 1)), 2);
  EXPECT_EQ(UpsampleContext(Transposed(3, 2, 1, 1)), 1);  // k 3, padding 1 (output_padding 1)
  EXPECT_EQ(UpsampleDelay(Transposed(8, 4, 2, 2)), 4);
  EXPECT_EQ(UpsampleContext(Transposed(8, 4, 2, 2)), 2);
  EXPECT_EQ(UpsampleDelay(Transposed(6, 2, 2, 2)), 2);  // s divides p: nothing held
  EXPECT_EQ(UpsampleContext(Transposed(6, 2, 2, 2)), 2);
  EXPECT_EQ(UpsampleDelay(Transposed(4, 2, 0, 2)), 0);  // aligned
  EXPECT_EQ(UpsampleContext(Transposed(4, 2, 0, 2)), 1);
}

TEST(UpsampleWindows, OnlyACropBeforeWithinTheSpanAndTheTailLessItAfterLags) {
  EXPECT_EQ(FitOfUpsampling(Transposed(4, 2, 1, 1), 0), UpsampleFit::kLags);  // ConvTranspose1d(4, 2, padding 1)
  EXPECT_EQ(FitOfUpsampling(Transposed(3, 2, 1, 1), 1), UpsampleFit::kLags);  // k 3, padding 1, output_padding 1
  EXPECT_EQ(FitOfUpsampling(Transposed(8, 4, 2, 2), 0), UpsampleFit::kLags);
  EXPECT_EQ(FitOfUpsampling(Transposed(4, 2, 3, 0), 1), UpsampleFit::kLags);  // 3 before: the whole span
  // Negative controls: not s frames per input frame (crops after other than the tail less p), beyond the span.
  EXPECT_EQ(FitOfUpsampling(Transposed(4, 2, 1, 0), 0), UpsampleFit::kNone);
  EXPECT_EQ(FitOfUpsampling(Transposed(4, 2, 1, 2), 0), UpsampleFit::kNone);
  EXPECT_EQ(FitOfUpsampling(Transposed(3, 2, 1, 1), 0), UpsampleFit::kNone);  // 2 * T - 1 frames
  EXPECT_EQ(FitOfUpsampling(Transposed(4, 2, 4, 0), 2), UpsampleFit::kNone);  // crops more than the span
  EXPECT_EQ(FitOfUpsampling(Transposed(3, 1, 1, 1), 0), UpsampleFit::kNone);  // stride 1: a window
}

const char* kLagging =
    R"(g (float[batch, 2, seq] x, float[2, 3, 4] w4, float[2, 3, 3] w3) => (float[batch, 3, seq2] y) {
    y = ConvTranspose <strides = [2], pads = [1, 1]> (x, w4)
    odd = ConvTranspose <strides = [2], pads = [1, 1], output_padding = [1]> (x, w3)
    short = ConvTranspose <strides = [2], pads = [1, 1]> (x, w3)
  })";

TEST(UpsampleWindows, ALaggingUpsamplingIsFoundOnlyWithLookaheadWithItsContextAndCrop) {
  const Upsampled u(kLagging);
  EXPECT_THAT(u.Found(), IsEmpty());
  EXPECT_THAT(u.flow.Of({}, "y").broken->why,
              HasSubstr("rewrite --lookahead carries it, its output then 2 frames late"));
  EXPECT_THAT(u.flow.Of({}, "short").broken->why, HasSubstr("only when it crops at most its span"));
  const std::vector<CausalWindow> found = FindCausalWindows(u.index, u.flow, /*lookahead=*/true);
  ASSERT_EQ(found.size(), 2u);  // short gives 2 T - 1 frames: not carried
  EXPECT_EQ(found[0].frames, 2);
  EXPECT_EQ(found[0].lookahead, 1);
  EXPECT_EQ(found[0].Delay(), 2);
  EXPECT_EQ(found[1].frames, 1);
  EXPECT_EQ(found[1].Delay(), 2);
  // c * s - h before, the tail + h (+ output_padding) after.
  EXPECT_EQ(PadsWithoutTimeBefore(u.index, u.Node(0), 2, 3, /*and_after=*/true), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(PadsWithoutTimeBefore(u.index, u.Node(1), 2, 3, /*and_after=*/true), (std::vector<int64_t>{1, 3}));
}

TEST(UpsampleWindows, OverItsCarriedContextTheRewrittenLaggingUpsamplingGivesTheChunksFrames) {
  const Upsampled u(R"(g (float[batch, 2, seq] x, float[2, 3, 4] w4, float[2, 3, 3] w3) => (float[batch, 3, seq2] y) {
    y = ConvTranspose <strides = [2], pads = [3, 3]> (x, w4)
    odd = ConvTranspose <strides = [2], pads = [1, 3], output_padding = [1]> (x, w3)
    off = ConvTranspose <strides = [2], pads = [3, 2]> (x, w4)
  })");
  const TimeFlow two(u.index, {InputAxis{"x", 2}}, {}, -1, {{"x", 2}});
  EXPECT_EQ(TimeFactText(two.Of({}, "y")), "frames on axis 2");
  EXPECT_EQ(TimeFactText(two.Of({}, "off")), "mixed");  // the crop after leaves a frame not final
  const TimeFlow one(u.index, {InputAxis{"x", 2}}, {}, -1, {{"x", 1}});
  EXPECT_EQ(TimeFactText(one.Of({}, "odd")), "frames on axis 2");
  EXPECT_EQ(TimeFactText(one.Of({}, "y")), "mixed");  // its span needs 2 frames
}

}  // namespace
}  // namespace rnnstate::upsample_windows_test
