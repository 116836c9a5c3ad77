// ReshapeGroups (how a Reshape relates its input's axes to its output's, the groups an ElementMap is
// split and merged by), on small hand-made shapes.

#include "values/reshape_groups.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>

#include "test_names.h"

namespace rnnstate::reshape_groups_test {
namespace {

using namespace test_names;

const SymDim kBatch{-1, "batch"};

SymDim Fixed(int64_t value) { return SymDim{value, ""}; }

TEST(ReshapeGroups, SplitOfAFlatStateKeepsTheBatch) {
  SymShape resolved;
  auto groups = ReshapeGroups({kBatch, Fixed(16)}, {Fixed(-1), Fixed(2), Fixed(2), Fixed(4)}, false, &resolved);
  ASSERT_TRUE(groups.has_value());
  ASSERT_EQ(groups->size(), 2u);
  EXPECT_THAT((*groups)[0].in, ElementsAre(0u));
  EXPECT_THAT((*groups)[0].out, ElementsAre(0u));
  EXPECT_THAT((*groups)[1].in, ElementsAre(1u));
  EXPECT_THAT((*groups)[1].out, ElementsAre(1u, 2u, 3u));
  EXPECT_EQ(resolved, (SymShape{kBatch, Fixed(2), Fixed(2), Fixed(4)}));
}

TEST(ReshapeGroups, UnitAxesAreAddedAndRemoved) {
  auto groups = ReshapeGroups({kBatch, Fixed(3)}, {Fixed(1), kBatch, Fixed(3)}, false);
  ASSERT_TRUE(groups.has_value());
  ASSERT_EQ(groups->size(), 3u);
  EXPECT_TRUE((*groups)[0].in.empty());
  EXPECT_THAT((*groups)[0].out, ElementsAre(0u));
}

TEST(ReshapeGroups, AnUnknownInputSizeIsWhatAFixedTargetLeavesForIt) {
  // tf2onnx reshapes a Loop's scan output [?, 1, 128] (inference knows no trip count) to [60, 1, 128]:
  // the Reshape runs only with ? = 60, so the axes stay apart.
  auto groups = ReshapeGroups({SymDim{}, Fixed(1), Fixed(128)}, {Fixed(60), Fixed(1), Fixed(128)}, false);
  ASSERT_TRUE(groups.has_value());
  ASSERT_EQ(groups->size(), 4u);  // [?] -> [60], the unit axis removed and added, [128] -> [128]
  EXPECT_THAT((*groups)[0].in, ElementsAre(0u));
  EXPECT_THAT((*groups)[0].out, ElementsAre(0u));
  // Rewritten with -1 there, the unknown dim is what -1 takes: the same axis.
  groups = ReshapeGroups({SymDim{}, Fixed(1), Fixed(128)}, {Fixed(-1), Fixed(1), Fixed(128)}, false);
  ASSERT_TRUE(groups.has_value());
  EXPECT_THAT((*groups)[0].in, ElementsAre(0u));
  EXPECT_THAT((*groups)[0].out, ElementsAre(0u));
  // A named dim is not resolved (its name says what it is), nor are two unknown ones.
  EXPECT_EQ(ReshapeGroups({kBatch, Fixed(1), Fixed(128)}, {Fixed(60), Fixed(1), Fixed(128)}, false), std::nullopt);
  EXPECT_EQ(ReshapeGroups({SymDim{}, SymDim{}, Fixed(128)}, {Fixed(60), Fixed(1), Fixed(128)}, false), std::nullopt);
}

TEST(ReshapeGroups, MinusOneIsTheSymbolicDimNoOtherTargetDimNames) {
  // keras2onnx: [batch, seq, 1, 4] -> [-1, seq, 4]: -1 is batch, whichever symbolic dim comes last.
  const SymDim seq{-1, "seq"};
  SymShape resolved;
  auto groups = ReshapeGroups({kBatch, seq, Fixed(1), Fixed(4)}, {Fixed(-1), seq, Fixed(4)}, false, &resolved);
  ASSERT_TRUE(groups.has_value());
  EXPECT_EQ(resolved, (SymShape{kBatch, seq, Fixed(4)}));
  EXPECT_THAT((*groups)[0].in, ElementsAre(0u));
  EXPECT_THAT((*groups)[0].out, ElementsAre(0u));
  // Two symbolic dims no target dim names: which one -1 is cannot be told.
  EXPECT_EQ(ReshapeGroups({kBatch, seq, Fixed(4)}, {Fixed(-1), SymDim{-1, "other"}, Fixed(4)}, false), std::nullopt);
}

TEST(ReshapeGroups, MixingTheBatchWithAnotherAxisIsNotProvable) {
  // [6, batch] -> [2, batch, 3] interleaves batch rows: no group holds 6 against 2 across the batch.
  EXPECT_EQ(ReshapeGroups({Fixed(6), kBatch}, {Fixed(2), kBatch, Fixed(3)}, false), std::nullopt);
  // [2, batch, 3] -> [-1, 3]: the batch would be merged with a fixed axis.
  EXPECT_EQ(ReshapeGroups({Fixed(2), kBatch, Fixed(3)}, {Fixed(-1), Fixed(3)}, false), std::nullopt);
  // A regrouping ([2, 3] -> [3, 2]) is neither a split nor a merge.
  EXPECT_EQ(ReshapeGroups({Fixed(2), Fixed(3)}, {Fixed(3), Fixed(2)}, false), std::nullopt);
}

TEST(ReshapeGroups, ALastMinusOneTakesEveryAxisTheFirstOnesLeave) {
  // nn.Unfold's export: [batch, 3, 1, 3, T, F] (T and F of sizes inference lost) -> [batch, 9, -1].
  SymShape resolved;
  auto groups = ReshapeGroups({kBatch, Fixed(3), Fixed(1), Fixed(3), SymDim{}, SymDim{}}, {kBatch, Fixed(9), Fixed(-1)},
                              false, &resolved);
  ASSERT_TRUE(groups.has_value());
  ASSERT_EQ(groups->size(), 3u);
  EXPECT_THAT((*groups)[1].in, ElementsAre(1u, 2u, 3u));
  EXPECT_THAT((*groups)[1].out, ElementsAre(1u));
  EXPECT_THAT((*groups)[2].in, ElementsAre(4u, 5u));
  EXPECT_THAT((*groups)[2].out, ElementsAre(2u));
  EXPECT_EQ(resolved.size(), 3u);
  EXPECT_FALSE(resolved[2].known());
  // The first axes must be of known sizes: an unknown one could hold any part of the head.
  EXPECT_EQ(ReshapeGroups({SymDim{}, SymDim{}, SymDim{}}, {Fixed(6), Fixed(-1)}, false), std::nullopt);
  EXPECT_EQ(ReshapeGroups({kBatch, SymDim{}, Fixed(3), SymDim{}}, {kBatch, Fixed(3), Fixed(-1)}, false), std::nullopt);
  // ... and fill the head exactly: 4 elements are no 3.
  EXPECT_EQ(ReshapeGroups({kBatch, Fixed(4), SymDim{}}, {kBatch, Fixed(3), Fixed(-1)}, false), std::nullopt);
  // A -1 elsewhere than last is not taken this way.
  EXPECT_EQ(ReshapeGroups({kBatch, Fixed(3), SymDim{}, SymDim{}}, {Fixed(-1), Fixed(3), kBatch}, false), std::nullopt);
}

}  // namespace
}  // namespace rnnstate::reshape_groups_test
