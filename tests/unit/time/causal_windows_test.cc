// Causal windows over time (time/causal_windows.h): which Conv and pooling nodes a context state makes
// stream — padded by their own `pads` or by a constant Pad in front with exactly their span of zeros
// before time and none after, at stride 1 — and the windows that must not be carried (lookahead, more
// padding than the span, strides, a MaxPool's own padding, an AveragePool that
// does not count its padding, a Pad read twice); a ConvTranspose at stride 1 as the window it equals; windows
// without padding ("valid").
// Models as ONNX text.

#include "time/causal_windows.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "graph/model_index.h"
#include "test_models.h"
#include "test_names.h"
#include "time/time_flow.h"
#include "values/shape_eval.h"

namespace rnnstate::causal_windows_test {
namespace {

using namespace test_names;

/// The causal windows of the model `body` (a graph at opset `opset` over x [batch, 2, seq], time on 2).
struct Windows {
  explicit Windows(const std::string& body, int opset = 14, int64_t axis = 2)
      : model(ParseModel("<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) + "]>\n" + body)),
        index(model),
        flow(index, {InputAxis{"x", axis}}),
        found(FindCausalWindows(index, flow)) {}
  /// "node:pad:value:axis:frames" for each window found.
  std::vector<std::string> Found() const {
    std::vector<std::string> texts;
    for (const CausalWindow& w : found) {
      texts.push_back(model.graph().node(w.window).output(0) + ":" +
                      (w.pad < 0 ? "-" : model.graph().node(w.pad).output(0)) + ":" + w.value + ":" +
                      std::to_string(w.axis) + ":" + std::to_string(w.frames));
    }
    return texts;
  }
  onnx::ModelProto model;
  ModelIndex index;
  TimeFlow flow;
  std::vector<CausalWindow> found;
};

const char* kConvs = R"(g (float[batch, 2, seq] x, float[4, 2, 3] w3, float[4, 2, 1] w1) => (float[batch, 4, seq] c) {
    c = Conv <pads = [2, 0]> (x, w3)
    d = Conv <pads = [4, 0], dilations = [2]> (x, w3)
    same = Conv <pads = [1, 1]> (x, w3)
    more = Conv <pads = [3, 0]> (x, w3)
    strided = Conv <pads = [2, 0], strides = [2]> (x, w3)
    one = Conv (x, w1)
    auto = Conv <auto_pad = "SAME_LOWER"> (x, w3)
  })";

TEST(CausalWindows, AConvPaddedByItsSpanInFrontIsCausal) {
  const Windows w(kConvs);
  EXPECT_THAT(w.Found(), ElementsAre("c:-:x:2:2", "d:-:x:2:4", "strided:-:x:2:2"));
  EXPECT_EQ(w.found[0].shape.kernel, 3);
  EXPECT_EQ(w.found[1].shape.dilation, 2);
  EXPECT_EQ(w.found[0].Reader(), 0);
}

TEST(CausalWindows, PadsLeftOfTimeAreRemovedAndTheOtherAxesKept) {
  const Windows w(R"(g (float[batch, 1, seq, 8] x, float[2, 1, 3, 3] w) => (float[batch, 2, seq, 8] y) {
    y = Conv <pads = [2, 1, 0, 1]> (x, w)
  })");
  ASSERT_THAT(w.Found(), ElementsAre("y:-:x:2:2"));
  EXPECT_EQ(PadsWithoutTimeBefore(w.index, w.model.graph().node(0), 2, 4), (std::vector<int64_t>{0, 1, 0, 1}));
  // Time on the frequency axis's place: the same window over axis 3 pads 1 on each side (lookahead).
  const Windows over_f(R"(g (float[batch, 1, 8, seq] x, float[2, 1, 3, 3] w) => (float[batch, 2, 8, seq] y) {
    y = Conv <pads = [2, 1, 0, 1]> (x, w)
  })",
                       14, 3);
  EXPECT_THAT(over_f.Found(), IsEmpty());
}

TEST(CausalWindows, APadNodeInFrontOfAnUnpaddedWindowIsCausalWhenItPadsTheSpanWithZeros) {
  const Windows w(R"(g (float[batch, 2, seq] x, float[4, 2, 3] w) => (float[batch, 4, seq] y) {
    pads = Constant <value = int64[6] {0, 0, 4, 0, 0, 0}> ()
    p = Pad (x, pads)
    y = Conv <dilations = [2]> (p, w)
    zero = Constant <value = float {0.0}> ()
    p0 = Pad (x, pads, zero)
    y0 = Conv <dilations = [2]> (p0, w)
  })");
  EXPECT_THAT(w.Found(), ElementsAre("y:p:x:2:4", "y0:p0:x:2:4"));
  EXPECT_EQ(w.found[0].Reader(), 1);
  EXPECT_EQ(PadsWithoutTimeBefore(w.index, w.model.graph().node(1), 2, 3), (std::vector<int64_t>{0, 0, 0, 0, 0, 0}));
}

TEST(CausalWindows, PadsThatAreNotTheSpanBeforeTimeAreNotCarried) {
  // Pads of another value or mode are carried too (tests/unit/time/pad_fill_test.cc).
  const Windows w(R"(g (float[batch, 2, seq] x, float[4, 2, 3] w) => (float[batch, 4, seq] y) {
    pads = Constant <value = int64[6] {0, 0, 2, 0, 0, 0}> ()
    ahead = Constant <value = int64[6] {0, 0, 2, 0, 0, 1}> ()
    pa = Pad (x, ahead)
    ya = Conv (pa, w)
    p2 = Pad (x, pads)
    y2 = Conv (p2, w)
    twice = Relu (p2)
  })");
  EXPECT_THAT(w.Found(), IsEmpty());
}

TEST(CausalWindows, APadNodeOfZerosThatLooksAheadIsCarriedOnlyWithLookahead) {
  const std::string body =
      R"(g (float[batch, 2, seq] x, float[4, 2, 3] w, float[4, 2, 4] w4) => (float[batch, 4, seq] y) {
    same = Constant <value = int64[6] {0, 0, 1, 0, 0, 1}> ()
    p = Pad (x, same)
    y = Conv (p, w)
    wide = Constant <value = int64[6] {0, 0, 1, 0, 0, 2}> ()
    pw = Pad (x, wide)
    yw = Conv (pw, w4)
    pe = Pad <mode = "edge"> (x, same)
    ye = Conv (pe, w)
    ps = Pad (x, same)
    ys = Conv <strides = [2]> (ps, w)
    pl = Pad (x, wide)
    yl = Conv (pl, w)
  })";
  const Windows plain(body);
  EXPECT_THAT(plain.Found(), IsEmpty());
  const Windows w(body);
  const std::vector<CausalWindow> found = FindCausalWindows(w.index, w.flow, /*lookahead=*/true);
  // Not carried: an edge Pad (the flush's zeros would not be its frames), a stride, 3 frames for a span of 2.
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(w.model.graph().node(found[0].pad).output(0), "p");
  EXPECT_EQ(found[0].lookahead, 1);
  EXPECT_EQ(found[0].Delay(), 1);
  EXPECT_EQ(found[0].frames, 2);
  EXPECT_EQ(found[0].value, "x");
  EXPECT_EQ(w.model.graph().node(found[1].pad).output(0), "pw");
  EXPECT_EQ(found[1].lookahead, 2);
  EXPECT_EQ(PadsWithoutTimeBefore(w.index, w.model.graph().node(1), 2, 3, /*and_after=*/true),
            (std::vector<int64_t>{0, 0, 0, 0, 0, 0}));
}

TEST(CausalWindows, PoolsAreCausalWhenTheirPaddingIsZerosThatCount) {
  const Windows w(R"(g (float[batch, 2, seq] x) => (float[batch, 2, seq] a) {
    a = AveragePool <kernel_shape = [3], pads = [2, 0], count_include_pad = 1> (x)
    uncounted = AveragePool <kernel_shape = [3], pads = [2, 0]> (x)
    m = MaxPool <kernel_shape = [3], pads = [2, 0]> (x)
    l = LpPool <kernel_shape = [2], pads = [1, 0]> (x)
    pads = Constant <value = int64[6] {0, 0, 2, 0, 0, 0}> ()
    p = Pad (x, pads)
    mp = MaxPool <kernel_shape = [3]> (p)
    p2 = Pad (x, pads)
    mi, indices = MaxPool <kernel_shape = [3]> (p2)
  })");
  EXPECT_THAT(w.Found(), ElementsAre("a:-:x:2:2", "l:-:x:2:1", "mp:p:x:2:2"));
}

TEST(CausalWindows, WindowsTimeDoesNotReachOrThatReadItsBatchAreNotWindowsOverTime) {
  const Windows w(R"(g (float[batch, 2, seq] x, float[4, 2, 3] w, float[seq, 2, 5] z) => (float[batch, 4, seq] y) {
    y = Conv <pads = [2, 0]> (z, w)
  })");
  EXPECT_THAT(w.Found(), IsEmpty());
  const Windows batch(R"(g (float[seq, 2, 5] x, float[4, 2, 3] w) => (float[seq, 4, 5] y) {
    y = Conv <pads = [2, 0]> (x, w)
  })",
                      14, 0);
  EXPECT_THAT(batch.Found(), IsEmpty());  // each frame on its own: nothing to carry
}

TEST(CausalWindows, TheFlowWithTheWindowsStreamedSeesTheFramesThrough) {
  const Windows w(R"(g (float[batch, 2, seq] x, float[4, 2, 3] w) => (float[batch, 4, seq] y) {
    pads = Constant <value = int64[6] {0, 0, 2, 0, 0, 0}> ()
    p = Pad (x, pads)
    y = Conv (p, w)
  })");
  EXPECT_EQ(TimeFactText(w.flow.Of({}, "y")), "frames on axis 2, inexact");
  const TimeFlow streamed(w.index, {InputAxis{"x", 2}}, {}, -1, {}, StreamedNodesOf(w.found));
  EXPECT_EQ(TimeFactText(streamed.Of({}, "p")), "frames on axis 2");
  EXPECT_EQ(TimeFactText(streamed.Of({}, "y")), "frames on axis 2");
}

TEST(CausalWindows, AConvPaddedOnBothSidesWhoseTailASliceCutsIsCausal) {
  const Windows w(R"(g (float[batch, 2, seq] x, float[4, 2, 3] w) => (float[batch, 4, seq] y) {
    c = Conv <pads = [4, 4], dilations = [2]> (x, w)
    starts = Constant <value = int64[1] {0}> ()
    ends = Constant <value = int64[1] {-4}> ()
    axes = Constant <value = int64[1] {2}> ()
    y = Slice (c, starts, ends, axes)
    short = Conv <pads = [4, 4], dilations = [2]> (x, w)
    ends3 = Constant <value = int64[1] {-3}> ()
    s3 = Slice (short, starts, ends3, axes)
    twice = Conv <pads = [4, 4], dilations = [2]> (x, w)
    st = Slice (twice, starts, ends, axes)
    r = Relu (twice)
  })");
  ASSERT_THAT(w.Found(), ElementsAre("c:-:x:2:4"));  // short: cuts 3 of 4; twice: read by two nodes
  EXPECT_EQ(w.found[0].cut, 4);
  EXPECT_EQ(PadsWithoutTimeBefore(w.index, w.model.graph().node(0), 2, 3, /*and_after=*/true),
            (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(SliceEndsToTheEnd(w.index, w.model.graph().node(4), 2, 3),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::max()}));
  const TimeFlow streamed(w.index, {InputAxis{"x", 2}}, {}, -1, {}, StreamedNodesOf(w.found));
  EXPECT_EQ(TimeFactText(streamed.Of({}, "y")), "frames on axis 2");
}

TEST(CausalWindows, AConvTransposeAtStrideOneIsTheWindowItEquals) {
  // ConvTranspose at stride 1 is a Conv with its kernel reversed, padded span - pads (its pads crop).
  const Windows w(R"(g (float[batch, 2, seq] x, float[2, 4, 3] w) => (float[batch, 4, seq] y) {
    pads = Constant <value = int64[6] {0, 0, 4, 0, 0, 0}> ()
    p = Pad (x, pads)
    y = ConvTranspose <pads = [4, 4], dilations = [2]> (p, w)
    c = ConvTranspose <dilations = [2]> (x, w)
    starts = Constant <value = int64[1] {0}> ()
    ends = Constant <value = int64[1] {-4}> ()
    axes = Constant <value = int64[1] {2}> ()
    cut = Slice (c, starts, ends, axes)
    strided = ConvTranspose <strides = [2], pads = [1, 1]> (x, w)
    cropped = ConvTranspose <pads = [5, 5], dilations = [2]> (x, w)
    ahead = ConvTranspose <pads = [4, 2], dilations = [2]> (x, w)
  })");
  ASSERT_THAT(w.Found(), ElementsAre("y:p:x:2:4", "c:-:x:2:4"));
  EXPECT_EQ(w.found[1].cut, 7);
  EXPECT_TRUE(w.found[0].shape.flipped);
  // Without padding the ConvTranspose crops its whole span: the attribute is written where it was left out.
  EXPECT_EQ(PadsWithoutTimeBefore(w.index, w.model.graph().node(3), 2, 3, /*and_after=*/true),
            (std::vector<int64_t>{4, 4}));
  const TimeFlow streamed(w.index, {InputAxis{"x", 2}}, {}, -1, {}, StreamedNodesOf(w.found));
  EXPECT_EQ(TimeFactText(streamed.Of({}, "y")), "frames on axis 2");
  EXPECT_EQ(TimeFactText(streamed.Of({}, "cut")), "frames on axis 2");
}

TEST(CausalWindows, PadsThatLeaveTimeAloneBetweenTheCausalPadAndThePoolArePassedOver) {
  // PyTorch's AvgPool1d writes a Pad of its own (all zeros) after the model's F.pad.
  const Windows w(R"(g (float[batch, 2, seq] x) => (float[batch, 2, seq] y) {
    pads = Constant <value = int64[6] {0, 0, 2, 0, 0, 0}> ()
    none = Constant <value = int64[6] {0, 0, 0, 0, 0, 0}> ()
    p = Pad (x, pads)
    q = Pad (p, none)
    y = AveragePool <kernel_shape = [3]> (q)
  })");
  EXPECT_THAT(w.Found(), ElementsAre("y:p:x:2:2"));
}

TEST(CausalWindows, TheShapeOfAValueAComputedPadLostIsCompleted) {
  // The Pad's amounts are computed (as PyTorch's F.pad computes them): onnx's inference gives no shape.
  const Windows w(R"(g (float[batch, 1, seq, 8] x, float[4, 1, 2, 3] w) => (float[batch, 4, seq, 4] y) {
    half = Constant <value = int64[8] {0, 0, 1, 1, 0, 0, 0, 1}> ()
    two = Constant <value = int64[8] {1, 1, 1, 1, 1, 1, 1, 1}> ()
    pads = Mul (half, two)
    p = Pad (x, pads)
    c = Conv <strides = [1, 2]> (p, w)
    y = Elu (c)
  })");
  ASSERT_THAT(w.Found(), ElementsAre("c:p:x:2:1"));
  const std::optional<SymShape> inferred = ShapeOf(w.index, {}, "c");
  EXPECT_FALSE(inferred && (*inferred)[3].fixed());  // what onnx's inference leaves
  const std::optional<SymShape> shape = CompletedShape(w.index, "c");
  ASSERT_TRUE(shape.has_value());
  ASSERT_EQ(shape->size(), 4u);
  EXPECT_EQ((*shape)[0].name, "batch");
  EXPECT_EQ((*shape)[1].value, 4);
  EXPECT_EQ((*shape)[3].value, 4);  // (8 + 1 + 1 - 2 - 1) / 2 + 1
}

TEST(CausalWindows, StridesOverTimeAskChunksOfTheirProduct) {
  const Windows w(R"(g (float[batch, 2, seq] x, float[2, 2, 3] w) => (float[batch, 2, seq] y) {
    a = Conv <pads = [2, 0], strides = [2]> (x, w)
    y = Conv <pads = [2, 0], strides = [3]> (a, w)
  })");
  ASSERT_THAT(w.Found(), ElementsAre("a:-:x:2:2", "y:-:a:2:2"));
  EXPECT_EQ(w.found[1].shape.stride, 3);
  const TimeFlow streamed(w.index, {InputAxis{"x", 2}}, {}, -1, {}, StreamedNodesOf(w.found));
  EXPECT_EQ(TimeFactText(streamed.Of({}, "y")), "frames on axis 2");
  EXPECT_EQ(streamed.Of({}, "y").multiple, 6);
  EXPECT_EQ(streamed.chunk_multiple(), 6);
  EXPECT_EQ(w.flow.chunk_multiple(), 1);  // not streamed: broken, and no multiple asked
}

TEST(CausalWindows, WindowsInsideTheirOwnStrideStreamAsTheyAreInChunksOfTheStride) {
  const Windows w(R"(g (float[batch, 2, seq] x, float[2, 2, 2] w) => (float[batch, 2, seq] y) {
    m = MaxPool <kernel_shape = [2], strides = [2]> (x)
    y = Conv <strides = [2]> (m, w)
    o = MaxPool <kernel_shape = [3], strides = [2]> (x)
  })");
  EXPECT_THAT(w.Found(), IsEmpty());  // nothing to carry
  EXPECT_EQ(TimeFactText(w.flow.Of({}, "m")), "frames on axis 2");
  EXPECT_EQ(TimeFactText(w.flow.Of({}, "y")), "frames on axis 2");
  EXPECT_EQ(w.flow.Of({}, "y").multiple, 4);
  EXPECT_EQ(TimeFactText(w.flow.Of({}, "o")), "frames on axis 2, inexact");  // windows overlap
}

TEST(CausalWindows, AStridedWindowOverACarriedContextStreamsWhenItSpansExactlyTheContext) {
  const Windows w(R"(g (float[batch, 2, seq] x, float[2, 2, 3] w) => (float[batch, 2, seq] y) {
    y = Conv <strides = [2]> (x, w)
  })");
  const TimeFlow exact(w.index, {InputAxis{"x", 2}}, {}, -1, {{"x", 2}});
  EXPECT_EQ(TimeFactText(exact.Of({}, "y")), "frames on axis 2");
  EXPECT_EQ(exact.chunk_multiple(), 2);
  const TimeFlow more(w.index, {InputAxis{"x", 2}}, {}, -1, {{"x", 3}});
  EXPECT_EQ(TimeFactText(more.Of({}, "y")), "mixed");
}

// Windows without padding over time ("valid"): a Conv or pool at stride 1 with no padding and no Pad in
// front is carried with a context whose first call holds no frames; the negative controls must not be: a
// strided overlapping window (its phase would not line up), a Pad on time in front that is not its span of
// zeros, auto_pad SAME, a window over frames chunks do not reproduce.

/// The windows `FindCausalWindows` carries in `body` (opset 14, x [batch, 2, seq], time on 2): "node:valid".
std::vector<std::string> Carried(const std::string& body) {
  const onnx::ModelProto model = ParseModel("<ir_version: 8, opset_import: [\"\" : 14]>\n" + body);
  const ModelIndex index(model);
  const TimeFlow flow(index, {InputAxis{"x", 2}});
  std::vector<std::string> texts;
  for (const CausalWindow& w : FindCausalWindows(index, flow)) {
    texts.push_back(model.graph().node(w.window).output(0) + ":" + (w.valid ? "valid" : "padded") + ":" +
                    std::to_string(w.frames));
  }
  return texts;
}

TEST(ValidWindows, AWindowWithoutPaddingAtStrideOneIsCarriedWithItsSpan) {
  EXPECT_THAT(Carried(R"(g (float[batch, 2, seq] x, float[4, 2, 3] w) => (float[batch, 4, seq2] c) {
    c = Conv (x, w)
    d = Conv <dilations = [2]> (x, w)
    m = MaxPool <kernel_shape = [3]> (x)
    a = AveragePool <kernel_shape = [2]> (x)
    v = Conv <auto_pad = "VALID"> (x, w)
    causal = Conv <pads = [2, 0]> (x, w)
  })"),
              ElementsAre("c:valid:2", "d:valid:4", "m:valid:2", "a:valid:1", "v:valid:2", "causal:padded:2"));
}

TEST(ValidWindows, StridesPadsOnTimeAndBrokenFramesAreNotCarried) {
  EXPECT_THAT(Carried(R"(g (float[batch, 2, seq] x, float[4, 2, 3] w) => (float[batch, 4, seq2] s) {
    s = Conv <strides = [2]> (x, w)
    same = Conv <auto_pad = "SAME_UPPER"> (x, w)
    pads = Constant <value = int64[6] {0, 0, 1, 0, 0, 0}> ()
    p = Pad (x, pads)
    after_pad = Conv (p, w)
    r = ReduceMean <axes = [2], keepdims = 1> (x)
    mixed = Add (x, r)
    over_mixed = Conv (mixed, w)
    apart = MaxPool <kernel_shape = [2], strides = [2]> (x)
  })"),
              ElementsAre());
}

}  // namespace
}  // namespace rnnstate::causal_windows_test
