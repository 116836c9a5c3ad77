// The frames' positions within a call (time/frame_positions.cc): a Range from 0 in steps of 1 over the
// chunk's length, and the Gather along time that picks every frame by them (nn.Unfold's export with one
// frame of kernel on time), against Ranges and Gathers that are not the identity on time. Models as ONNX
// text, in the shape PyTorch 1.13 exports nn.Unfold((1, 3), padding=(0, 1)).

#include <gtest/gtest.h>

#include "graph/model_index.h"
#include "test_models.h"
#include "time/time_flow.h"

namespace rnnstate::frame_positions_test {
namespace {

using testing::ParseModel;

/// The flow of `text` from axis 2 of input `x`.
struct PositionsFlow {
  explicit PositionsFlow(const std::string& body)
      : model(ParseModel(std::string(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, 1, seq, 4] x, float[4] table, float[2, 1, 3, 1] w) => (float[batch, 3, seq, 4] y) {
    s = Shape (x)
    two = Constant <value = int64 {2}> ()
    t = Gather <axis = 0> (s, two)
    zero = Constant <value = int64 {0}> ()
    one = Constant <value = int64 {1}> ()
    ax = Constant <value = int64[1] {0}> ()
    pads = Constant <value = int64[8] {0, 0, 0, 1, 0, 0, 0, 1}> ()
    p = Pad (x, pads)
)") + body + "}")),
        index(model),
        flow(index, {InputAxis{"x", 2}}) {}
  std::string Of(const std::string& name) const { return TimeFactText(flow.Of({}, name)); }
  const TimeFact& Fact(const std::string& name) const { return flow.Of({}, name); }
  onnx::ModelProto model;
  ModelIndex index;
  TimeFlow flow;
};

TEST(FramePositions, EveryFramePickedByItsOwnPositionIsTheFramesAgain) {
  PositionsFlow f(R"(
    t0 = Add (t, zero)
    t1 = Sub (t0, zero)
    r = Range (zero, t1, one)
    ru = Unsqueeze (r, ax)
    k = Constant <value = int64[1, 1] {0}> ()
    idx = Add (ru, k)
    g = Gather <axis = 2> (p, idx)
    fidx = Constant <value = int64[3, 4] {0, 1, 2, 3, 1, 2, 3, 4, 2, 3, 4, 5}> ()
    gf = Gather <axis = 4> (g, fidx)
    y0 = Transpose <perm = [0, 1, 2, 4, 3, 5]> (gf)
    y = Squeeze (y0, two)
    direct = Gather <axis = 2> (x, r)
  )");
  EXPECT_EQ(f.Of("t1"), "length at [0]");                        // the export's `t + 0 - 0`
  EXPECT_EQ(f.Of("r"), "frames on axis 0, positions, inexact");  // they restart in every chunk
  EXPECT_EQ(f.Of("idx"), "frames on axis 1, positions, inexact");
  EXPECT_EQ(f.Of("g"), "frames on axis 3");
  EXPECT_TRUE(f.Fact("g").exact());
  EXPECT_EQ(f.Of("gf"), "frames on axis 3");
  EXPECT_EQ(f.Of("direct"), "frames on axis 2");
  EXPECT_TRUE(f.Fact("direct").exact());
}

TEST(FramePositions, RangesThatAreNotTheFramesOwnPositionsAreNotClaimed) {
  PositionsFlow f(R"(
    three = Constant <value = int64 {3}> ()
    f3 = Gather <axis = 0> (s, three)
    m1 = Constant <value = int64 {-1}> ()
    last = Sub (t, one)
    offset = Range (one, t, one)
    step2 = Range (zero, t, two)
    reversed = Range (last, m1, m1)
    bins = Range (zero, f3, one)
    g_offset = Gather <axis = 2> (x, offset)
    g_step2 = Gather <axis = 2> (x, step2)
    g_reversed = Gather <axis = 2> (x, reversed)
    g_bins = Gather <axis = 2> (x, bins)
  )");
  EXPECT_EQ(f.Of("offset"), "mixed");
  EXPECT_EQ(f.Of("step2"), "mixed");
  EXPECT_EQ(f.Of("reversed"), "mixed");
  EXPECT_EQ(f.Of("bins"), "steady");  // the length of frequency: the same in every call
  EXPECT_EQ(f.Of("g_offset"), "mixed");
  EXPECT_EQ(f.Of("g_step2"), "mixed");
  EXPECT_EQ(f.Of("g_reversed"), "mixed");
  EXPECT_EQ(f.Of("g_bins"), "mixed");  // picks frames by fixed indices
}

TEST(FramePositions, PositionsUsedAnyOtherWayAreMixed) {
  PositionsFlow f(R"(
    r = Range (zero, t, one)
    shifted = Add (r, one)
    g_shifted = Gather <axis = 2> (x, shifted)
    doubled = Mul (r, two)
    embedded = Gather <axis = 0> (table, r)
    as_values = Cast <to = 1> (r)
    along_bins = Gather <axis = 3> (x, r)
    c = Conv (x, w)
    g_shorter = Gather <axis = 2> (c, r)
    tpads = Constant <value = int64[8] {0, 0, 2, 0, 0, 0, 0, 0}> ()
    longer = Pad (x, tpads)
    g_longer = Gather <axis = 2> (longer, r)
  )");
  EXPECT_EQ(f.Of("shifted"), "mixed");
  EXPECT_EQ(f.Of("g_shifted"), "mixed");
  EXPECT_EQ(f.Of("doubled"), "mixed");
  EXPECT_EQ(f.Of("embedded"), "mixed");  // a table of positions: each chunk starts it again
  EXPECT_EQ(f.Of("as_values"), "mixed");
  EXPECT_EQ(f.Of("along_bins"), "mixed");  // along frequency, not time
  // Frames of another length than those counted: a window without padding (2 frames fewer), a Pad of
  // 2 frames before them.
  EXPECT_EQ(f.Of("g_shorter"), "mixed");
  EXPECT_EQ(f.Of("g_longer"), "mixed");
}

/// The flow of `body` at opset `opset` over x [batch, 1, seq, 4] (time on axis 2) and y [batch, 1, seq2, 4]
/// (time too, another length: a second input's frames).
struct LengthsFlow {
  LengthsFlow(const std::string& body, int opset)
      : model(ParseModel("<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) + R"(]>
g (float[batch, 1, seq, 4] x, float[batch, 1, seq2, 4] y) => (float[batch, 1, seq, 4] out) {
    s = Shape (x)
    zero = Constant <value = int64 {0}> ()
    one = Constant <value = int64 {1}> ()
    two = Constant <value = int64 {2}> ()
    ax = Constant <value = int64[1] {0}> ()
)" + body + "\n    out = Identity (x)\n}")),
        index(model),
        flow(index, {InputAxis{"x", 2}, InputAxis{"y", 2}}) {}
  std::string Of(const std::string& name) const { return TimeFactText(flow.Of({}, name)); }
  onnx::ModelProto model;
  ModelIndex index;
  TimeFlow flow;
};

TEST(FramePositions, TheLengthIsReadWhereverTheTimeFactsFollowItFromAShape) {
  // Shape's own start and end (opset 15), a Slice of the shape vector, a Cast: each still the length of x.
  LengthsFlow f(R"(
    own = Shape <start = 2, end = 3> (x)
    t_own = Squeeze (own, ax)
    r_own = Range (zero, t_own, one)
    g_own = Gather <axis = 2> (x, r_own)
    starts = Constant <value = int64[1] {2}> ()
    ends = Constant <value = int64[1] {3}> ()
    sliced = Slice (s, starts, ends)
    t_sliced = Squeeze (sliced, ax)
    t_cast = Cast <to = 7> (t_sliced)
    r_sliced = Range (zero, t_cast, one)
    g_sliced = Gather <axis = 2> (x, r_sliced))",
                15);
  EXPECT_EQ(f.Of("t_own"), "length at [0]");
  EXPECT_EQ(f.Of("r_own"), "frames on axis 0, positions, inexact");
  EXPECT_EQ(f.Of("g_own"), "frames on axis 2");
  EXPECT_EQ(f.Of("r_sliced"), "frames on axis 0, positions, inexact");
  EXPECT_EQ(f.Of("g_sliced"), "frames on axis 2");
}

TEST(FramePositions, ALengthOfSeveralValuesOrComputedCountsNoOnesPositions) {
  // Negative controls: the lengths of x and y joined (then one picked, or one of an If's two), the length
  // times one (computed), and positions of y picking frames of x.
  LengthsFlow f(R"(
    sy = Shape (y)
    i2 = Constant <value = int64[1] {2}> ()
    tx = Gather (s, i2)
    ty = Gather (sy, i2)
    both = Concat <axis = 0> (tx, ty)
    first = Gather (both, zero)
    r_both = Range (zero, first, one)
    times_one = Mul (first, one)
    r_times = Range (zero, times_one, one)
    ty0 = Gather (sy, two)
    r_y = Range (zero, ty0, one)
    g_y = Gather <axis = 2> (x, r_y)
    gy = Gather <axis = 2> (y, r_y))",
                14);
  EXPECT_EQ(f.Of("first"), "length at [0]");
  EXPECT_NE(f.Of("r_both"), "frames on axis 0, positions, inexact");
  EXPECT_NE(f.Of("r_times"), "frames on axis 0, positions, inexact");
  EXPECT_EQ(f.Of("r_y"), "frames on axis 0, positions, inexact");
  EXPECT_EQ(f.Of("g_y"), "mixed");            // y's positions: not shown to be as many as x's frames
  EXPECT_EQ(f.Of("gy"), "frames on axis 2");  // y's own frames picked by them
}

}  // namespace
}  // namespace rnnstate::frame_positions_test
