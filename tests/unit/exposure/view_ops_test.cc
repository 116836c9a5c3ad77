// The view operators' helpers of the exposure walks (exposure/view_ops.h), on element maps and values built
// here: which element types hold another's values exactly, unit axes inserted and removed (refused, the map
// unchanged, when an axis is out of range, listed twice or not a unit), one Slice axis resolved by ONNX's
// rules, shapes equal only when known, a ScatterND row placed against a state's region, and an Add or Sub
// of a provable zero passing its operand on.

#include "exposure/view_ops.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "test_models.h"
#include "test_names.h"

namespace rnnstate::view_ops_test {
namespace {

using namespace test_names;
using T = onnx::TensorProto;

SymDim Size(int64_t value) { return SymDim{value, ""}; }

TEST(Represents, WiderFloatsHoldNarrowerOnesExactly) {
  EXPECT_TRUE(Represents(T::FLOAT, T::FLOAT16));
  EXPECT_TRUE(Represents(T::DOUBLE, T::BFLOAT16));
  EXPECT_TRUE(Represents(T::INT64, T::INT64));
  EXPECT_TRUE(Represents(T::FLOAT, 0));  // unknown: no loss shown
  EXPECT_FALSE(Represents(T::FLOAT16, T::FLOAT));
  EXPECT_FALSE(Represents(T::FLOAT, T::INT32));
  EXPECT_FALSE(Represents(T::INT64, T::INT32));
  EXPECT_TRUE(Lossless({T::DOUBLE, T::FLOAT}, T::FLOAT));
  EXPECT_FALSE(Lossless({T::DOUBLE, T::FLOAT16, T::FLOAT}, T::FLOAT));  // the half in the middle rounds
  EXPECT_TRUE(Lossless({}, T::FLOAT));
}

TEST(UnitAxes, InsertAndRemoveAtTheNamedAxesOrLeaveTheMap) {
  ElementMap map = ElementMap::Identity({Size(2), Size(3)});
  ASSERT_TRUE(InsertUnitAxes(map, {0, -1}));  // [1, 2, 3, 1]
  EXPECT_EQ(map.rank(), 4u);
  EXPECT_TRUE(map.IsConstant(0));
  EXPECT_EQ(map.coef(1, 0), 1);
  EXPECT_TRUE(map.IsConstant(3));
  const ElementMap before = map;
  EXPECT_FALSE(InsertUnitAxes(map, {7}));
  EXPECT_FALSE(InsertUnitAxes(map, {1, 1}));
  EXPECT_FALSE(RemoveUnitAxes(map, {0, 1}));  // axis 1 is the state's axis of 2
  EXPECT_FALSE(RemoveUnitAxes(map, {-5}));
  EXPECT_TRUE(map.SamePlaces(before));
  EXPECT_EQ(map.rank(), 4u);
  ASSERT_TRUE(RemoveUnitAxes(map, {3, 0}));
  EXPECT_TRUE(map.SamePlaces(ElementMap::Identity({Size(2), Size(3)})));
}

TEST(ResolveSliceAxis, AppliesOnnxsRulesForAKnownSize) {
  const std::optional<SliceAxis> tail = ResolveSliceAxis(-2, std::numeric_limits<int64_t>::max(), 1, Size(5));
  ASSERT_TRUE(tail);
  EXPECT_EQ(tail->start, 3);
  EXPECT_EQ(tail->limit, 2);
  const std::optional<SliceAxis> reversed = ResolveSliceAxis(-1, std::numeric_limits<int64_t>::min(), -1, Size(5));
  ASSERT_TRUE(reversed);
  EXPECT_EQ(reversed->start, 4);
  EXPECT_EQ(reversed->step, -1);
  EXPECT_EQ(reversed->limit, 5);
  EXPECT_EQ(ResolveSliceAxis(0, 5, 2, Size(5))->limit, 3);
  EXPECT_EQ(ResolveSliceAxis(4, 2, 1, Size(5))->limit, 0);
  EXPECT_FALSE(ResolveSliceAxis(0, 5, 0, Size(5)));
}

TEST(ResolveSliceAxis, WithoutTheSizeKnowsOnlyForwardSlicesFromTheFront) {
  const std::optional<SliceAxis> head = ResolveSliceAxis(2, 10, 3, SymDim{-1, "seq"});
  ASSERT_TRUE(head);
  EXPECT_EQ(head->start, 2);
  EXPECT_EQ(head->limit, 3);  // an upper bound
  EXPECT_FALSE(ResolveSliceAxis(2, -1, 1, SymDim{-1, "seq"})->limit);
  EXPECT_FALSE(ResolveSliceAxis(-1, 10, 1, SymDim{-1, "seq"}));
  EXPECT_FALSE(ResolveSliceAxis(0, 10, -1, SymDim{}));
}

TEST(SameShape, OnlyWhenEveryDimensionIsKnownAndEqual) {
  EXPECT_TRUE(SameShape({Size(2), SymDim{-1, "b"}}, {Size(2), SymDim{-1, "b"}}));
  EXPECT_FALSE(SameShape({Size(2), SymDim{-1, "b"}}, {Size(2), SymDim{-1, "c"}}));
  EXPECT_FALSE(SameShape({Size(2), SymDim{}}, {Size(2), SymDim{}}));
  EXPECT_FALSE(SameShape({Size(2)}, {Size(2), Size(1)}));
}

TEST(RowOverlap, PlacesAScatterRowAgainstTheStatesRegion) {
  // The state [3] at row 1 of a tensor [2, 3]: index (1, s).
  ElementMap map = ElementMap::Identity({Size(3)});
  ASSERT_TRUE(map.InsertFixed(0, 1));
  EXPECT_EQ(RowOverlap(map, {1}), Overlap::kInside);
  EXPECT_EQ(RowOverlap(map, {0}), Overlap::kApart);
  EXPECT_EQ(RowOverlap(map, {1, 2}), Overlap::kPartly);  // one element of the state
  EXPECT_EQ(RowOverlap(map, {1, 5}), Overlap::kApart);
  EXPECT_EQ(RowOverlap(map, {1, 2, 0}), Overlap::kPartly);
  ScatterSpec spec;
  spec.rows = {{0}, {1}, {0}};
  EXPECT_TRUE(spec.Duplicated(0));
  EXPECT_FALSE(spec.Duplicated(1));
}

TEST(AddsZero, PassesOnTheOperandOfAnAddOrTheMinuendOfASub) {
  const onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[1, batch, 3] h, float[1] w) => (float[1, batch, 3] a, float[1, batch, 3] b, float[1, batch, 3] c) {
  zero = Constant <value = float[1] {0}> ()
  a = Add (zero, h)
  b = Sub (zero, h)
  c = Add (h, w)
})");
  const ModelIndex index(model);
  const auto& nodes = model.graph().node();
  EXPECT_TRUE(AddsZero(index, {}, nodes[1], 1, 3));
  EXPECT_FALSE(AddsZero(index, {}, nodes[1], 0, 3));  // zero's own other operand is no zero
  EXPECT_FALSE(AddsZero(index, {}, nodes[2], 1, 3));  // 0 - h negates
  EXPECT_FALSE(AddsZero(index, {}, nodes[3], 0, 3));  // w is fed
  EXPECT_FALSE(AddsZero(index, {}, nodes[1], 1, 0));  // would broadcast h up
}

}  // namespace
}  // namespace rnnstate::view_ops_test
