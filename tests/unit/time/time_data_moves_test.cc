// The time rules of data movement (time_data_moves.cc, through time/time_rules.h's TimeThrough as the flow
// runs it): Slice, Gather, Concat, Split, Expand, Tile, Pad and ScatterND keep the frames where they leave
// time alone, make the last frame final and the first the first call's, and break (mixed or inexact, saying
// why) where each chunk would see its own part of time. Models as ONNX text, time on axis 0 of x.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "test_models.h"
#include "test_names.h"
#include "time/flow_from_x.h"

namespace rnnstate::time_data_moves_test {
namespace {

using namespace test_names;

TEST(SliceTime, KeepsAllOfTimeAndPicksTheLastOrFirstFrame) {
  const FlowFromX f(R"(g (float[seq, batch, 4] x) => (float[?, ?, ?] y) {
    zero = Constant <value = int64[1] {0}> ()
    one = Constant <value = int64[1] {1}> ()
    two = Constant <value = int64[1] {2}> ()
    five = Constant <value = int64[1] {5}> ()
    minus_one = Constant <value = int64[1] {-1}> ()
    end = Constant <value = int64[1] {9223372036854775807}> ()
    all = Slice (x, zero, end, zero)
    last = Slice (x, minus_one, end, zero)
    first = Slice (x, zero, one, zero)
    middle = Slice (x, two, five, zero)
    features = Slice (x, zero, two, two)
    y = Identity (all)
  })");
  EXPECT_EQ(f.Of("all"), "frames on axis 0");
  EXPECT_EQ(f.Of("last"), "final");
  EXPECT_EQ(f.Of("first"), "first frames");
  EXPECT_EQ(f.Of("middle"), "mixed");
  EXPECT_EQ(f.Fact("middle").broken->why, "slices frames [2:5] of time: each chunk has its own");
  EXPECT_EQ(f.Of("features"), "frames on axis 0");
}

TEST(SliceTime, MovesTheChunksLengthWithinAShapeVector) {
  const FlowFromX f(R"(g (float[seq, batch, 4] x) => (int64[?] y) {
    shape = Shape (x)
    zero = Constant <value = int64[1] {0}> ()
    one = Constant <value = int64[1] {1}> ()
    three = Constant <value = int64[1] {3}> ()
    head = Slice (shape, zero, one)
    tail = Slice (shape, one, three)
    y = Identity (head)
  })");
  EXPECT_EQ(f.Of("shape"), "length at [0]");
  EXPECT_EQ(f.Of("head"), "length at [0]");
  EXPECT_EQ(f.Of("tail"), "steady");
}

TEST(GatherTime, PicksFramesByIndexLikeSlice) {
  const FlowFromX f(R"(g (float[seq, batch, 4] x, float[10, 4] table) => (float[?, ?] y) {
    most = ReduceMax <axes = [2], keepdims = 0> (x)
    tokens = Cast <to = 7> (most)
    zero = Constant <value = int64 {0}> ()
    minus_one = Constant <value = int64 {-1}> ()
    three = Constant <value = int64 {3}> ()
    last = Gather <axis = 0> (x, minus_one)
    first = Gather <axis = 0> (x, zero)
    third = Gather <axis = 0> (x, three)
    feature = Gather <axis = 2> (x, three)
    embedded = Gather <axis = 0> (table, tokens)
    y = Identity (last)
  })");
  EXPECT_EQ(f.Of("last"), "final");
  EXPECT_EQ(f.Of("first"), "first frames");
  EXPECT_EQ(f.Of("third"), "mixed");
  EXPECT_EQ(f.Of("feature"), "frames on axis 0");
  EXPECT_EQ(f.Of("embedded"), "frames on axis 0");  // the indices' axes take the table's axis 0
}

TEST(ConcatTime, JoinsFramesBesideTimeButNotAlongIt) {
  const FlowFromX f(R"(g (float[seq, batch, 4] x, float[1, batch, 4] h) => (float[?, ?, ?] y) {
    wide = Concat <axis = 2> (x, x)
    longer = Concat <axis = 0> (x, x)
    r = Relu (x)
    minus_one = Constant <value = int64 {-1}> ()
    last = Gather <axis = 0> (r, minus_one)
    last3 = Unsqueeze <axes = [0]> (last)
    with_final = Concat <axis = 2> (last3, h)
    with_fixed = Concat <axis = 2> (x, h)
    y = Identity (wide)
  })");
  EXPECT_EQ(f.Of("wide"), "frames on axis 0");
  EXPECT_EQ(f.Of("longer"), "mixed");
  EXPECT_EQ(f.Fact("longer").broken->why, "joins values along time: each chunk holds its own");
  EXPECT_EQ(f.Of("with_final"), "final");
  EXPECT_EQ(f.Of("with_fixed"), "mixed");
}

TEST(SplitTime, SplitsBesideTimeButNotAlongIt) {
  const FlowFromX f(R"(g (float[seq, batch, 4] x) => (float[?, ?, ?] y) {
    a, b = Split <axis = 2> (x)
    p, q = Split <axis = 0> (x)
    y = Identity (a)
  })");
  EXPECT_EQ(f.Of("a"), "frames on axis 0");
  EXPECT_EQ(f.Of("b"), "frames on axis 0");
  EXPECT_EQ(f.Of("p"), "mixed");
  EXPECT_EQ(f.Of("q"), "mixed");
}

TEST(ExpandTime, KeepsFramesUnlessTimeIsExpandedToAFixedLength) {
  const FlowFromX f(R"(g (float[seq, batch, 1] x, float[1, 4] row) => (float[?, ?, ?] y) {
    wide_shape = Constant <value = int64[3] {1, 1, 4}> ()
    wide = Expand (x, wide_shape)
    long_shape = Constant <value = int64[3] {20, 1, 1}> ()
    fixed = Expand (x, long_shape)
    shape = Shape (x)
    zero = Constant <value = int64[1] {0}> ()
    one = Constant <value = int64[1] {1}> ()
    t = Slice (shape, zero, one)
    four = Constant <value = int64[1] {4}> ()
    per_frame_shape = Concat <axis = 0> (t, four)
    per_frame = Expand (row, per_frame_shape)
    y = Identity (wide)
  })");
  EXPECT_EQ(f.Of("wide"), "frames on axis 0");
  EXPECT_EQ(f.Of("fixed"), "mixed");
  EXPECT_TRUE(f.Fact("fixed").broken->fixed_length);
  EXPECT_EQ(f.Of("per_frame"), "frames on axis 0");  // a steady row repeated over the chunk's frames
}

TEST(TileOrPadTime, TimeRepeatedMixesTimePaddedIsInexactWithItsFrames) {
  const FlowFromX f(R"(g (float[seq, batch, 4] x) => (float[?, ?, ?] y) {
    once = Constant <value = int64[3] {1, 2, 1}> ()
    twice = Constant <value = int64[3] {2, 1, 1}> ()
    tiled = Tile (x, once)
    repeated = Tile (x, twice)
    feature_pads = Constant <value = int64[6] {0, 0, 1, 0, 0, 1}> ()
    time_pads = Constant <value = int64[6] {2, 0, 0, 1, 0, 0}> ()
    padded = Pad (x, feature_pads)
    windowed = Pad (x, time_pads)
    y = Identity (tiled)
  })");
  EXPECT_EQ(f.Of("tiled"), "frames on axis 0");
  EXPECT_EQ(f.Of("repeated"), "mixed");
  EXPECT_EQ(f.Of("padded"), "frames on axis 0");
  EXPECT_EQ(f.Of("windowed"), "frames on axis 0, inexact");
  EXPECT_EQ(f.Fact("windowed").broken->past, 2);
  EXPECT_EQ(f.Fact("windowed").broken->future, 1);
}

TEST(ScatterOrSelectTime, WritesAFinalStateIntoACacheButNotFrames) {
  const FlowFromX f(R"(g (float[seq, batch, 4] x, float[2, batch, 4] cache) => (float[?, ?, ?] y) {
    r = Relu (x)
    minus_one = Constant <value = int64 {-1}> ()
    last = Gather <axis = 0> (r, minus_one)
    update = Unsqueeze <axes = [0]> (last)
    at = Constant <value = int64[1, 1] {0}> ()
    cache_out = ScatterND (cache, at, update)
    rows = Constant <value = int64[2, 1] {0, 1}> ()
    written = ScatterND (cache, rows, x)
    y = Identity (cache_out)
  })");
  EXPECT_EQ(f.Of("cache_out"), "final");
  EXPECT_EQ(f.Of("written"), "mixed");
}

}  // namespace
}  // namespace rnnstate::time_data_moves_test
