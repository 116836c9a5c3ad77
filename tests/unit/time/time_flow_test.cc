// The time flow (time/time_flow.h): what every value is along the time axis of a streamed run, operator by
// operator — per frame (elementwise, MatMul over features, kernel-1 convolutions), windowed (convolutions
// and padding over time: inexact, with the frames they need), whole-sequence (reductions, normalization or
// attention over time), final states and what is computed from them, the first frames, the chunk's length
// and what shape computations build from it, time folded with the batch and unfolded again, recurrent
// operators over time and within each frame, If branches. Models as ONNX text.

#include "time/time_flow.h"

#include <gtest/gtest.h>

#include "graph/model_index.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::time_flow_test {
namespace {

using namespace test_names;

/// The flow of `text` from axis `axis` of input `input`.
struct Flow {
  Flow(const std::string& text, const std::string& input, int64_t axis)
      : model(ParseModel(text)), index(model), flow(index, {InputAxis{input, axis}}) {}
  std::string Of(const std::string& name) const { return TimeFactText(flow.Of({}, name)); }
  const TimeFact& Fact(const std::string& name) const { return flow.Of({}, name); }
  onnx::ModelProto model;
  ModelIndex index;
  TimeFlow flow;
};

const char* kHeader = R"(<ir_version: 8, opset_import: ["" : 14]>
)";

TEST(TimeFlow, PerFrameOperatorsKeepTheFrames) {
  Flow f(std::string(kHeader) + R"(g (float[seq, batch, 3] x, float[3, 4] w, float[4] b) => (float[seq, batch, 4] y) {
    m = MatMul (x, w)
    a = Add (m, b)
    r = Relu (a)
    t = Transpose <perm = [1, 0, 2]> (r)
    y = Transpose <perm = [1, 0, 2]> (t)
  })",
         "x", 0);
  EXPECT_EQ(f.Of("m"), "frames on axis 0");
  EXPECT_EQ(f.Of("r"), "frames on axis 0");
  EXPECT_EQ(f.Of("t"), "frames on axis 1");
  EXPECT_EQ(f.Of("y"), "frames on axis 0");
  EXPECT_EQ(f.Of("w"), "steady");
}

TEST(TimeFlow, ReductionsOverTimeNeedTheWholeSequence) {
  Flow f(std::string(kHeader) + R"(g (float[seq, batch, 3] x) => (float[batch, 3] m, float[seq, batch] s) {
    m = ReduceMean <axes = [0], keepdims = 0> (x)
    s = ReduceSum <axes = [2], keepdims = 0> (x)
    n = Softmax <axis = 0> (x)
    k = Softmax <axis = 2> (x)
  })",
         "x", 0);
  EXPECT_EQ(f.Of("m"), "mixed");
  EXPECT_TRUE(f.Fact("m").broken->whole);
  EXPECT_EQ(f.Of("s"), "frames on axis 0");  // over features: each frame its own
  EXPECT_EQ(f.Of("n"), "frames on axis 0, inexact");
  EXPECT_EQ(f.Of("k"), "frames on axis 0");
}

TEST(TimeFlow, AConvolutionOverTimeIsExactOnlyWithAKernelOfOneFrame) {
  Flow f(std::string(kHeader) +
             R"(g (float[batch, 2, seq] x, float[4, 2, 1] w1, float[4, 2, 3] w3) => (float[batch, 4, seq] y) {
    y = Conv (x, w1)
    c = Conv <pads = [2, 0]> (x, w3)
    s = Conv <pads = [1, 1]> (x, w3)
  })",
         "x", 2);
  EXPECT_EQ(f.Of("y"), "frames on axis 2");
  EXPECT_EQ(f.Of("c"), "frames on axis 2, inexact");
  EXPECT_EQ(f.Fact("c").broken->past, 2);  // causal: two frames of context, no lookahead
  EXPECT_EQ(f.Fact("c").broken->future, 0);
  EXPECT_EQ(f.Fact("s").broken->future, 1);  // "same": one frame of lookahead
  EXPECT_NE(f.Fact("c").broken->why.find("window of 3 frames"), std::string::npos);
}

TEST(TimeFlow, TheLastFrameIsFinalTheFirstOnlyTheFirstCallHas) {
  Flow f(std::string(kHeader) + R"(g (float[batch, seq, 3] x) => (float[batch, 3] last) {
    minus1 = Constant <value = int64 {-1}> ()
    zero = Constant <value = int64 {0}> ()
    two = Constant <value = int64 {2}> ()
    last = Gather <axis = 1> (x, minus1)
    first = Gather <axis = 1> (x, zero)
    third = Gather <axis = 1> (x, two)
    mixed = Add (last, x)
  })",
         "x", 1);
  EXPECT_EQ(f.Of("last"), "final");
  EXPECT_EQ(f.Of("first"), "first frames");
  EXPECT_EQ(f.Of("third"), "mixed");
  EXPECT_EQ(f.Of("mixed"), "mixed");  // a final value broadcast over the frames
}

const char* kChained = R"(g (float[seq, batch, 2] x, float[1, 12, 2] w1, float[1, 12, 3] r1, float[1, 12, 3] w2,
                          float[1, 12, 3] r2) => (float[seq, 1, batch, 3] y2) {
    y1, h1, c1 = LSTM <hidden_size = 3> (x, w1, r1)
    one = Constant <value = int64[1] {1}> ()
    s1 = Squeeze (y1, one)
    y2, h2, c2 = LSTM <hidden_size = 3> (s1, w2, r2, , , h1, c1)
  })";

TEST(TimeFlow, ALayerStartedFromAnotherLayersFinalStateDiffers) {
  Flow f(std::string(kHeader) + kChained, "x", 0);
  EXPECT_EQ(f.Of("y1"), "frames on axis 0");
  EXPECT_EQ(f.Of("h1"), "final");
  EXPECT_EQ(f.Of("y2"), "frames on axis 0, inexact");
  EXPECT_NE(f.Fact("y2").broken->why.find("the final state of LSTM (output 'y1')"), std::string::npos);
  ASSERT_EQ(f.flow.recurrences().size(), 2u);
  EXPECT_EQ(f.flow.recurrences()[0].way, RecurrenceTime::Way::kOverTime);
}

TEST(TimeFlow, AStateNotCarriedRestartsEveryCall) {
  const onnx::ModelProto model = ParseModel(std::string(kHeader) + kChained);
  const ModelIndex index(model);
  const TimeFlow flow(index, {InputAxis{"x", 0}},
                      [](const GraphPath&, int node) { return std::optional<OwnerTime>(OwnerTime{node != 0}); });
  EXPECT_EQ(TimeFactText(flow.Of({}, "y1")), "frames on axis 0, inexact");
  EXPECT_NE(flow.Of({}, "y1").broken->why.find("not carried"), std::string::npos);
}

TEST(TimeFlow, ShapesOfTheChunkBuildFramesRangesDoNot) {
  Flow f(std::string(kHeader) + R"(g (float[seq, batch, 3] x) => (float[seq, batch, 3] z) {
    s = Shape (x)
    zero = Constant <value = int64[1] {0}> ()
    one = Constant <value = int64[1] {1}> ()
    len = Gather <axis = 0> (s, zero)
    bat = Gather <axis = 0> (s, one)
    z = ConstantOfShape (s)
    start = Constant <value = int64 {0}> ()
    step = Constant <value = int64 {1}> ()
    lens = Squeeze (len, zero)
    pos = Range (start, lens, step)
    n = Size (x)
  })",
         "x", 0);
  EXPECT_EQ(f.Of("s"), "length at [0]");
  EXPECT_EQ(f.Of("len"), "length at [0]");
  EXPECT_EQ(f.Of("bat"), "steady");  // the batch's size: the same in every call
  EXPECT_EQ(f.Of("z"), "frames on axis 0");
  // The frames' positions: they restart in every chunk (what may read them: frame_positions_test.cc).
  EXPECT_EQ(f.Of("pos"), "frames on axis 0, positions, inexact");
  EXPECT_EQ(f.Of("n"), "mixed");
}

TEST(TimeFlow, TimeFoldedIntoTheBatchAndBack) {
  // DPRNN: x [b, t, f] -> [b * t, f] (a per-frame operator's rows) -> [b, t, f].
  Flow f(std::string(kHeader) + R"(g (float[batch, seq, 4] x) => (float[batch, seq, 4] y) {
    s = Shape (x)
    i0 = Constant <value = int64 {0}> ()
    i1 = Constant <value = int64 {1}> ()
    b = Gather <axis = 0> (s, i0)
    t = Gather <axis = 0> (s, i1)
    bt = Mul (b, t)
    ax = Constant <value = int64[1] {0}> ()
    bt1 = Unsqueeze (bt, ax)
    b1 = Unsqueeze (b, ax)
    t1 = Unsqueeze (t, ax)
    four = Constant <value = int64[1] {4}> ()
    flat_shape = Concat <axis = 0> (bt1, four)
    back_shape = Concat <axis = 0> (b1, t1, four)
    flat = Reshape (x, flat_shape)
    r = Relu (flat)
    y = Reshape (r, back_shape)
  })",
         "x", 1);
  EXPECT_EQ(f.Of("bt"), "length at [], folded at [0]");
  EXPECT_EQ(f.Of("flat"), "frames on axis 0 (time folded with other axes)");
  EXPECT_EQ(f.Of("y"), "frames on axis 1");
}

TEST(TimeFlow, AShapeTimesZeroWhereItHoldsTheLengthIsSteady) {
  // A context's default: Expand(zeros, Shape(x) * [1, 0, 1] + [0, 3, 0]), the shape of x with 3 frames.
  Flow f(std::string(kHeader) + R"(g (float[batch, seq, 4] x, float[1, 3, 1] c) => (float[batch, 3, 4] z) {
    s = Shape (x)
    keep = Constant <value = int64[3] {1, 0, 1}> ()
    kept = Mul (s, keep)
    unit = Constant <value = int64[3] {0, 3, 0}> ()
    target = Add (kept, unit)
    z = Expand (c, target)
    other = Constant <value = int64[3] {1, 2, 1}> ()
    doubled = Mul (s, other)
    wrong = Add (doubled, unit)
  })",
         "x", 1);
  EXPECT_EQ(f.Of("s"), "length at [1]");
  EXPECT_EQ(f.Of("kept"), "steady");
  EXPECT_EQ(f.Of("z"), "steady");
  EXPECT_EQ(f.Of("doubled"), "length at [], folded at [1]");
  EXPECT_EQ(f.Of("wrong"), "mixed");
}

TEST(TimeFlow, ARecurrenceWhoseBatchHoldsTimeRunsPerFrame) {
  // An RNN over x's axis 0 (frequency) whose batch is the time axis: it restarts in every frame.
  Flow f(
      std::string(kHeader) + R"(g (float[8, seq, 2] x, float[2, 9, 2] w, float[2, 9, 3] r) => (float[8, 2, seq, 3] y) {
    y, h = GRU <hidden_size = 3, direction = "bidirectional"> (x, w, r)
  })",
      "x", 1);
  EXPECT_EQ(f.Of("y"), "frames on axis 2");
  EXPECT_EQ(f.Of("h"), "frames on axis 1");
  ASSERT_EQ(f.flow.recurrences().size(), 1u);
  EXPECT_EQ(f.flow.recurrences()[0].way, RecurrenceTime::Way::kPerFrame);
}

TEST(TimeFlow, AFixedLengthConstantBroadcastOverTimeDiffers) {
  Flow f(std::string(kHeader) + R"(g (float[1, 5, 4] x, float[5, 4] pos, float[1, 4] bias) => (float[1, 5, 4] y) {
    y = Add (x, pos)
    z = Add (x, bias)
  })",
         "x", 1);
  EXPECT_EQ(f.Of("y"), "frames on axis 1, inexact");
  EXPECT_TRUE(f.Fact("y").broken->whole);
  EXPECT_EQ(f.Of("z"), "frames on axis 1");
}

TEST(TimeFlow, FramesTimesFramesAcrossTimeIsAttention) {
  Flow f(std::string(kHeader) + R"(g (float[batch, seq, 4] q) => (float[batch, seq, seq] a) {
    k = Transpose <perm = [0, 2, 1]> (q)
    a = MatMul (q, k)
  })",
         "q", 1);
  EXPECT_EQ(f.Of("k"), "frames on axis 2");
  EXPECT_EQ(f.Of("a"), "mixed");
}

TEST(TimeFlow, AnIfOfAKnownConditionTakesItsBranch) {
  // PyTorch's "squeeze a batch of one": the condition is known from the fixed batch.
  Flow f(std::string(kHeader) + R"(g (float[1, seq, 3] x) => (float[seq, 3] y) {
    s = Shape (x)
    i0 = Constant <value = int64 {0}> ()
    d0 = Gather <axis = 0> (s, i0)
    c1 = Constant <value = int64 {1}> ()
    sq = Equal (d0, c1)
    y = If (sq) <then_branch = t () => (float[seq, 3] yt) { ax = Constant <value = int64[1] {0}> () yt = Squeeze (x, ax) },
                 else_branch = e () => (float[1, seq, 3] ye) { ye = Identity (x) }>
  })",
         "x", 1);
  EXPECT_EQ(f.Of("y"), "frames on axis 0");
}

TEST(TimeFlow, AnIfChosenByTimeMixes) {
  Flow f(std::string(kHeader) + R"(g (float[seq, 3] x) => (float[seq, 3] y) {
    m = ReduceMax <keepdims = 0> (x)
    zero = Constant <value = float {0}> ()
    c = Greater (m, zero)
    y = If (c) <then_branch = t () => (float[seq, 3] yt) { yt = Identity (x) },
                else_branch = e () => (float[seq, 3] ye) { ye = Neg (x) }>
  })",
         "x", 0);
  EXPECT_EQ(f.Of("y"), "mixed");
}

TEST(TimeFlow, UnknownOperatorsAreNotClaimed) {
  Flow f(std::string(R"(<ir_version: 8, opset_import: ["" : 14, "com.example" : 1]>
)") + R"(g (float[seq, 3] x) => (float[seq, 3] y) {
    y = com.example.Mystery (x)
  })",
         "x", 0);
  EXPECT_EQ(f.Of("y"), "mixed");
  EXPECT_NE(f.Fact("y").broken->why.find("com.example:Mystery"), std::string::npos);
}

TEST(TimeFlow, WhereTimeWasLostIsNamedNotWhereItsShapeIsReadAgain) {
  // A value that lost time (a mean over it) whose shape builds a Reshape's target, and which a Reshape to
  // the chunk's length reads: the verdict names the mean, where time was lost.
  Flow f(std::string(kHeader) + R"(g (float[batch, seq, 4] x) => (float[batch, seq, 4] y) {
    m = ReduceMean <axes = [1], keepdims = 1> (x)
    sm = Shape (m)
    by_its_shape = Reshape (x, sm)
    sx = Shape (x)
    to_length = Reshape (m, sx)
    y = Add (x, to_length)
  })",
         "x", 1);
  EXPECT_EQ(f.Of("sm"), "mixed");
  EXPECT_EQ(f.Fact("sm").broken->op, "ReduceMean");
  EXPECT_EQ(f.Fact("by_its_shape").broken->op, "ReduceMean");
  EXPECT_EQ(f.Fact("to_length").broken->op, "ReduceMean");
  EXPECT_EQ(f.Fact("y").broken->op, "ReduceMean");
}

}  // namespace
}  // namespace rnnstate::time_flow_test
