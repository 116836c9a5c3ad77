// The time rules of views and shape computations (time_moves.cc, through time/time_rules.h's TimeThrough as
// the flow runs it): Squeeze, Unsqueeze, Transpose, Reshape and Flatten move the time axis or fold it with
// its neighbours; Shape reads the chunk's length where time is, ConstantOfShape makes frames of it again,
// Size counts frames (mixed); a move rnnstate cannot follow is mixed, not guessed. Time on axis 0 of x.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "test_models.h"
#include "test_names.h"
#include "time/flow_from_x.h"

namespace rnnstate::time_moves_test {
namespace {

using namespace test_names;

TEST(ViewTime, UnitAxesAndPermutationsMoveTime) {
  const FlowFromX f(R"(g (float[seq, batch, 4] x) => (float[?, ?, ?, ?] y) {
    axes0 = Constant <value = int64[1] {0}> ()
    front = Unsqueeze (x, axes0)
    axes3 = Constant <value = int64[1] {3}> ()
    back = Unsqueeze (x, axes3)
    squeezed = Squeeze (front, axes0)
    moved = Transpose <perm = [1, 2, 0]> (x)
    y = Identity (front)
  })");
  EXPECT_EQ(f.Of("front"), "frames on axis 1");
  EXPECT_EQ(f.Of("back"), "frames on axis 0");
  EXPECT_EQ(f.Of("squeezed"), "frames on axis 0");
  EXPECT_EQ(f.Of("moved"), "frames on axis 2");
}

TEST(ViewTime, AReshapeFoldsTimeWithItsNeighboursAndSplitsItAgain) {
  const FlowFromX f(R"(g (float[seq, 2, 4] x) => (float[?] y) {
    all = Constant <value = int64[1] {-1}> ()
    folded = Reshape (x, all)
    back_shape = Constant <value = int64[3] {-1, 2, 4}> ()
    unfolded = Reshape (folded, back_shape)
    inner = Constant <value = int64[2] {0, -1}> ()
    merged = Reshape (x, inner)
    y = Identity (folded)
  })");
  EXPECT_EQ(f.Of("folded"), "frames on axis 0 (time folded outermost)");
  EXPECT_EQ(f.Of("unfolded"), "frames on axis 0");
  EXPECT_EQ(f.Of("merged"), "frames on axis 0");  // [seq, 8]: the axes after time merged, time alone
}

TEST(ViewTime, AReshapeToATargetBuiltFromTheLengthPutsTimeThere) {
  const FlowFromX f(R"(g (float[seq, batch, 4] x) => (float[?, ?, ?, ?] y) {
    shape = Shape (x)
    zero = Constant <value = int64[1] {0}> ()
    one = Constant <value = int64[1] {1}> ()
    t = Slice (shape, zero, one)
    rest = Constant <value = int64[3] {-1, 2, 2}> ()
    target = Concat <axis = 0> (t, rest)
    split = Reshape (x, target)
    y = Identity (split)
  })");
  EXPECT_EQ(f.Of("target"), "length at [0]");
  EXPECT_EQ(f.Of("split"), "frames on axis 0");
}

TEST(ViewTime, FlattenFoldsTimeWhereOtherAxesJoinIt) {
  const FlowFromX f(R"(g (float[seq, batch, 4] x) => (float[?, ?] y) {
    features = Flatten <axis = 1> (x)
    everything = Flatten <axis = 3> (x)
    y = Identity (features)
  })");
  EXPECT_EQ(f.Of("features"), "frames on axis 0");
  EXPECT_EQ(f.Of("everything"), "frames on axis 0 (time folded outermost)");
}

TEST(ViewTime, AMoveItCannotFollowIsMixed) {
  const FlowFromX f(R"(g (float[seq, batch, 4] x) => (float[?, ?, ?] y) {
    swapped = Constant <value = int64[3] {4, -1, 2}> ()
    y = Reshape (x, swapped)
  })");
  EXPECT_EQ(f.Of("y"), "mixed");
}

TEST(ShapeTime, ReadsTheLengthWhereTimeIsAndMakesFramesOfIt) {
  const FlowFromX f(R"(g (float[seq, batch, 4] x) => (float[?, ?] y) {
    shape = Shape (x)
    size = Size (x)
    zero = Constant <value = int64[1] {0}> ()
    two = Constant <value = int64[1] {2}> ()
    lengths = Slice (shape, zero, two)
    zeros = ConstantOfShape (lengths)
    y = Identity (zeros)
  })");
  EXPECT_EQ(f.Of("shape"), "length at [0]");
  EXPECT_EQ(f.Of("size"), "mixed");
  EXPECT_EQ(f.Of("zeros"), "frames on axis 0");
}

TEST(ShapeTime, AShapeStartingAfterTimeIsSteady) {
  const FlowFromX f(R"(g (float[seq, batch, 4] x) => (int64[2] y) {
    y = Shape <start = 1> (x)
  })",
                    15);
  EXPECT_EQ(f.Of("y"), "steady");
}

}  // namespace
}  // namespace rnnstate::time_moves_test
