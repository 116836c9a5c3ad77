// ElementMap (the affine map from a state's indices to a tensor's that proves an exposure), on small
// hand-made shapes.

#include "values/element_map.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>

#include "test_names.h"

namespace rnnstate::element_map_test {
namespace {

using namespace test_names;

const SymDim kBatch{-1, "batch"};

SymDim Fixed(int64_t value) { return SymDim{value, ""}; }

/// An LSTM state [num_directions 1, batch, hidden_size 3].
SymShape LstmState() { return {Fixed(1), kBatch, Fixed(3)}; }

/// Tensor axis `axis` as "offset + c0*s0 + c1*s1 ...", to compare whole rows at once.
std::vector<int64_t> Row(const ElementMap& map, size_t axis) {
  std::vector<int64_t> row{map.offset(axis)};
  for (size_t a = 0; a < map.state().size(); ++a) row.push_back(map.coef(axis, a));
  return row;
}

TEST(ElementMap, IdentityPutsEveryStateAxisOnItself) {
  const ElementMap map = ElementMap::Identity(LstmState());
  ASSERT_EQ(map.rank(), 3u);
  EXPECT_THAT(Row(map, 0), ElementsAre(0, 1, 0, 0));
  EXPECT_THAT(Row(map, 1), ElementsAre(0, 0, 1, 0));
  EXPECT_THAT(Row(map, 2), ElementsAre(0, 0, 0, 1));
  EXPECT_TRUE(map.Injective());
  EXPECT_TRUE(map.SamePlaces(map));
  // Axis 0 follows a state axis of size 1: its index is always 0.
  EXPECT_TRUE(map.IsConstant(0));
  EXPECT_FALSE(map.IsConstant(1));
  EXPECT_THAT(map.Varying(2), ElementsAre(2u));
}

TEST(ElementMap, GatherBackwardsAndForwardsRoundTrip) {
  // Unsqueeze(Gather(state, 1)) read backwards: the unit axis goes, a fixed axis at index 1 comes.
  ElementMap map = ElementMap::Identity(LstmState());
  ASSERT_TRUE(map.RemoveUnit(0));
  ASSERT_TRUE(map.InsertFixed(0, 1));
  EXPECT_THAT(Row(map, 0), ElementsAre(1, 0, 0, 0));
  EXPECT_FALSE(map.RemoveFixed(0, 0)) << "the axis is always 1, not 0";
  EXPECT_EQ(map.rank(), 3u) << "a failed removal leaves the map as it was";
  EXPECT_FALSE(map.RemoveUnit(1)) << "the batch axis varies";
  EXPECT_TRUE(map.RemoveFixed(0, 1));
  ASSERT_TRUE(map.InsertUnit(0));
  EXPECT_TRUE(map.SamePlaces(ElementMap::Identity(LstmState())));
}

TEST(ElementMap, SamePlacesIgnoresOnlyTheCoefficientsOfUnitStateAxes) {
  const ElementMap identity = ElementMap::Identity(LstmState());
  ElementMap squeezed = identity;  // Unsqueeze(Squeeze(Y_h)): axis 0 no longer follows state axis 0
  ASSERT_TRUE(squeezed.RemoveUnit(0));
  ASSERT_TRUE(squeezed.InsertUnit(0));
  EXPECT_EQ(squeezed.coef(0, 0), 0);
  EXPECT_TRUE(identity.SamePlaces(squeezed));
  ElementMap row1 = squeezed;  // the same axes at another index of axis 0 (h vs c)
  ASSERT_TRUE(row1.Scale(0, 1, 1));
  EXPECT_FALSE(identity.SamePlaces(row1));
  ElementMap transposed = identity;  // batch and hidden swapped
  ASSERT_TRUE(transposed.Permute({0, 2, 1}));
  EXPECT_FALSE(identity.SamePlaces(transposed));
  EXPECT_FALSE(identity.SamePlaces(ElementMap::Identity({Fixed(1), kBatch})));
}

TEST(ElementMap, PermuteMovesRowsAsATransposeDoes) {
  ElementMap map = ElementMap::Identity(LstmState());
  ASSERT_TRUE(map.Permute({1, 2, 0}));  // [1, B, H] -> [B, H, 1]
  EXPECT_THAT(Row(map, 0), ElementsAre(0, 0, 1, 0));
  EXPECT_THAT(Row(map, 1), ElementsAre(0, 0, 0, 1));
  EXPECT_THAT(Row(map, 2), ElementsAre(0, 1, 0, 0));
}

TEST(ElementMap, ScaleAndRangeOfASlice) {
  ElementMap map = ElementMap::Identity(LstmState());
  ASSERT_TRUE(map.Scale(2, 1, 4));  // Slice [4:7] of the hidden axis, read backwards
  EXPECT_THAT(map.Range(2), Optional(Pair(4, 6)));
  EXPECT_THAT(map.Range(0), Optional(Pair(0, 0)));
  EXPECT_EQ(map.Range(1), std::nullopt) << "the batch has no fixed size";
  ASSERT_TRUE(map.Scale(2, 2, 1));  // a step of 2 starting at 1: 9, 11, 13
  EXPECT_THAT(map.Range(2), Optional(Pair(9, 13)));
}

TEST(ElementMap, MergeThenSplitIsTheIdentity) {
  const SymShape state{Fixed(2), Fixed(3)};
  ElementMap map = ElementMap::Identity(state);
  ASSERT_TRUE(map.Merge(0, {2, 3}));  // Reshape [2, 3] -> [6]: row-major, index 3*s0 + s1
  ASSERT_EQ(map.rank(), 1u);
  EXPECT_THAT(Row(map, 0), ElementsAre(0, 3, 1));
  EXPECT_TRUE(map.Injective());
  ASSERT_TRUE(map.Split(0, {2, 3}));
  EXPECT_TRUE(map.SamePlaces(ElementMap::Identity(state)));
}

TEST(ElementMap, SplitOfAFlatStateColumnRange) {
  // A hidden state of 4 at columns [12, 16) of a flat [batch, 16] tensor = [batch, 2, 2, 4] at [1, 1, :].
  ElementMap map = ElementMap::Identity({kBatch, Fixed(4)});
  ASSERT_TRUE(map.Scale(1, 1, 12));
  ASSERT_TRUE(map.Split(1, {2, 2, 4}));
  ASSERT_EQ(map.rank(), 4u);
  EXPECT_THAT(Row(map, 1), ElementsAre(1, 0, 0));
  EXPECT_THAT(Row(map, 2), ElementsAre(1, 0, 0));
  EXPECT_THAT(Row(map, 3), ElementsAre(0, 0, 1));
}

TEST(ElementMap, SplitThatWouldWrapIsRefused) {
  // Columns [2, 5) of an axis split into rows of 4 cross a row boundary: not an affine map.
  ElementMap map = ElementMap::Identity({Fixed(3)});
  ASSERT_TRUE(map.Scale(0, 1, 2));
  const ElementMap before = map;
  EXPECT_FALSE(map.Split(0, {2, 4}));
  EXPECT_TRUE(map.SamePlaces(before));
  EXPECT_EQ(map.rank(), 1u);
  // A dynamic axis can only be split off as a whole digit of unknown size.
  ElementMap batch = ElementMap::Identity({kBatch});
  EXPECT_FALSE(batch.Split(0, {2, 3}));
}

TEST(ElementMap, InjectiveFailsWhenStatesElementsCollide) {
  const SymShape state{Fixed(2), Fixed(3)};
  ElementMap interleaved = ElementMap::Identity(state);
  ASSERT_TRUE(interleaved.Merge(0, {2, 2}));  // strides 2 and 1 for an axis of 3: (0,2) and (1,0) meet
  EXPECT_FALSE(interleaved.Injective());
  ElementMap dropped = ElementMap::Identity(state);
  ASSERT_TRUE(dropped.Scale(0, 0, 0));  // every s0 lands on index 0
  EXPECT_FALSE(dropped.Injective());
  // A state axis on two tensor axes (a diagonal) is refused: each must land on exactly one.
  ElementMap diagonal = ElementMap::Identity(state);
  ASSERT_TRUE(diagonal.Permute({0, 1, 1}));
  EXPECT_FALSE(diagonal.Injective());
}

TEST(ElementMap, AxesTheMapDoesNotHaveAreRefusedAndLeaveItUnchanged) {
  // Axes come from models (Unsqueeze, Slice, Gather, Concat attributes): none may index past the map.
  ElementMap map = ElementMap::Identity(LstmState());
  const ElementMap before = map;
  EXPECT_FALSE(map.InsertFixed(4, 0)) << "positions 0..3 exist for a rank-3 map";
  EXPECT_FALSE(map.InsertUnit(static_cast<size_t>(-996)));
  EXPECT_FALSE(map.Scale(3, 1, 0));
  EXPECT_FALSE(map.RemoveFixed(9, 0));
  EXPECT_FALSE(map.Permute({1, 0, 5}));
  EXPECT_FALSE(map.Permute({1, 0, -5}));
  EXPECT_FALSE(map.Merge(2, {3, 3}));
  EXPECT_FALSE(map.Merge(0, {}));
  EXPECT_FALSE(map.Split(3, {1, 3}));
  EXPECT_EQ(map.Range(3), std::nullopt);
  EXPECT_FALSE(map.IsConstant(3));
  EXPECT_TRUE(map.Varying(7).empty());
  EXPECT_THROW(map.offset(3), std::out_of_range);
  ASSERT_EQ(map.rank(), 3u);
  for (size_t axis = 0; axis < 3; ++axis) EXPECT_EQ(Row(map, axis), Row(before, axis));
  EXPECT_TRUE(map.InsertFixed(3, 0)) << "appending after the last axis is allowed";
}

TEST(ElementMap, ArithmeticThatWouldOverflowIsRefused) {
  const SymShape state{Fixed(3), Fixed(4)};
  ElementMap map = ElementMap::Identity(state);
  EXPECT_TRUE(map.Scale(0, INT64_MIN, 0)) << "1 * INT64_MIN fits";
  EXPECT_FALSE(map.Scale(0, -1, 0)) << "-INT64_MIN does not";
  EXPECT_EQ(map.Range(0), std::nullopt) << "INT64_MIN * (3 - 1) does not fit";
  ElementMap offset = ElementMap::Identity(state);
  ASSERT_TRUE(offset.Scale(1, 1, INT64_MAX - 1));
  EXPECT_FALSE(offset.Scale(1, 2, 0));
  EXPECT_FALSE(offset.Scale(1, 1, 2)) << "INT64_MAX - 1 + 2 does not fit";
  EXPECT_EQ(offset.Range(1), std::nullopt) << "INT64_MAX - 1 + 3 does not fit";
  ElementMap wide = ElementMap::Identity(state);
  ASSERT_TRUE(wide.Scale(0, 1, 2));
  EXPECT_FALSE(wide.Merge(0, {5, INT64_MAX})) << "row 2 at a stride of INT64_MAX does not fit";
  EXPECT_FALSE(wide.Split(0, {2, INT64_MAX, 4}));
  EXPECT_FALSE(wide.Split(0, {3, 0})) << "a size 0 is no stride (it divided by zero)";
  EXPECT_FALSE(wide.Merge(0, {3, -1})) << "only the outermost size may be unknown";
}

}  // namespace
}  // namespace rnnstate::element_map_test
