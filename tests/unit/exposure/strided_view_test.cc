// StridedViewOf (strided_view.h): the view of a tensor on which a strided state is a box — the flat
// caches of speech enhancement models (UL-UNAS's inter_cache [1,1056] holds GRU states [1,33,8] at
// inter_cache[0, 16*b + h]); and the view helpers of the metadata contract (ViewSplit, RegionsOverlap
// across views).

#include "exposure/strided_view.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>

#include "rnnstate/metadata.h"
#include "test_names.h"

namespace rnnstate::strided_view_test {
namespace {

using namespace test_names;

SymDim Fixed(int64_t value) { return SymDim{value, ""}; }
MetaDim Meta(int64_t value) { return MetaDim{value, ""}; }
const SymDim kBatch{-1, "batch"};

std::vector<int64_t> Sizes(const SymShape& shape) {
  std::vector<int64_t> sizes;
  for (const SymDim& dim : shape) sizes.push_back(dim.value);
  return sizes;
}

/// Tensor axis `axis` as "offset + c0*s0 + c1*s1 ...".
std::vector<int64_t> Row(const ElementMap& map, size_t axis) {
  std::vector<int64_t> row{map.offset(axis)};
  for (size_t a = 0; a < map.state().size(); ++a) row.push_back(map.coef(axis, a));
  return row;
}

/// A GRU state [1, batch, hidden] at flat[0, offset + stride*b + h] of a tensor [1, size]: UL-UNAS's
/// Slice(cache, [block]) -> Reshape [1, batch, stride] -> Slice(last axis, [k, k + hidden]), backwards.
ElementMap FlatCacheMap(int64_t batch, int64_t hidden, int64_t stride, int64_t offset) {
  ElementMap map = ElementMap::Identity({Fixed(1), Fixed(batch), Fixed(hidden)});
  const int64_t block = offset - offset % (batch * stride), column = offset % (batch * stride);
  EXPECT_TRUE(map.Scale(2, 1, column));        // Slice of the last axis: columns [k, k + hidden)
  EXPECT_TRUE(map.Merge(1, {batch, stride}));  // the Reshape [1, batch*stride] -> [1, batch, stride]
  EXPECT_TRUE(map.Scale(1, 1, block));         // the Slice of the block
  return map;
}

TEST(StridedView, UlunasInterCacheIsABoxOfTheView1x66x16) {
  // GRU_2652 h[0, b, h] = inter_cache[0, 16*b + h]; GRU_3235 = inter_cache[0, 528 + 16*b + 8 + h].
  const SymShape cache{Fixed(1), Fixed(1056)};
  const struct {
    int64_t offset;
    std::vector<int64_t> view_offset;
  } cases[] = {{0, {0, 0, 0}}, {8, {0, 0, 8}}, {528, {0, 33, 0}}, {536, {0, 33, 8}}};
  for (const auto& c : cases) {
    const std::optional<StridedView> view = StridedViewOf(FlatCacheMap(33, 8, 16, c.offset), cache);
    ASSERT_TRUE(view.has_value()) << c.offset;
    EXPECT_THAT(Sizes(view->shape), ElementsAre(1, 66, 16)) << c.offset;
    // The offset in mixed radix (66, 16): 536 = 33*16 + 8; the batch and hidden axes with coefficient 1.
    EXPECT_THAT(Row(view->map, 1), ElementsAre(c.view_offset[1], 0, 1, 0)) << c.offset;
    EXPECT_THAT(Row(view->map, 2), ElementsAre(c.view_offset[2], 0, 0, 1)) << c.offset;
    EXPECT_EQ(view->map.offset(0), 0);
  }
}

TEST(StridedView, ThreeStridesSplitIntoThreeParts) {
  // state [2, 3, 4] at t = 24*a + 4*b + c (+ 0) of [96]: strides 24, 4, 1 -> [4, 6, 4].
  ElementMap map = ElementMap::Identity({Fixed(2), Fixed(3), Fixed(4)});
  ASSERT_TRUE(map.Merge(1, {3, 4}));   // [2, 12]: 4*b + c (columns 0:12 of 24 below)
  ASSERT_TRUE(map.Merge(0, {2, 24}));  // [48]: 24*a + 4*b + c
  const std::optional<StridedView> view = StridedViewOf(map, {Fixed(96)});
  ASSERT_TRUE(view.has_value());
  EXPECT_THAT(Sizes(view->shape), ElementsAre(4, 6, 4));
}

TEST(StridedView, OneStrideAboveOneKeepsItsLastPart) {
  // Every other element: s at t = 1 + 2*s of [8] -> view [4, 2], the state at [:, 1].
  ElementMap map = ElementMap::Identity({Fixed(4)});
  ASSERT_TRUE(map.Scale(0, 2, 1));
  const std::optional<StridedView> view = StridedViewOf(map, {Fixed(8)});
  ASSERT_TRUE(view.has_value());
  EXPECT_THAT(Sizes(view->shape), ElementsAre(4, 2));
  EXPECT_THAT(Row(view->map, 0), ElementsAre(0, 1));
  EXPECT_THAT(Row(view->map, 1), ElementsAre(1, 0));
}

TEST(StridedView, NoViewWhereTheRegionIsABoxOfTheTensor) {
  // Columns [8, 16) of [1, 32] (coefficient 1): an ordinary region, no view.
  ElementMap map = ElementMap::Identity({Fixed(1), Fixed(8)});
  ASSERT_TRUE(map.Scale(1, 1, 8));
  EXPECT_EQ(StridedViewOf(map, {Fixed(1), Fixed(32)}), std::nullopt);
}

TEST(StridedView, StridesThatDoNotDivideAreRefused) {
  // c1 = 10 does not divide the axis size 1056.
  EXPECT_EQ(StridedViewOf(FlatCacheMap(33, 8, 10, 0), {Fixed(1), Fixed(1056)}), std::nullopt);
  // 16 and 6 (state [2, 6] at t = 16*a + 6*b... with b < 2): 6 does not divide 16.
  ElementMap map = ElementMap::Identity({Fixed(2), Fixed(2)});
  ASSERT_TRUE(map.Scale(1, 6, 0));
  ASSERT_TRUE(map.Merge(0, {2, 16}));
  EXPECT_EQ(StridedViewOf(map, {Fixed(32)}), std::nullopt);
}

TEST(StridedView, AnOffsetThatWouldCarryIsRefused) {
  // Hidden 8 from column 12 of rows of 16: columns 12..19 cross into the next row.
  EXPECT_EQ(StridedViewOf(FlatCacheMap(33, 8, 16, 12), {Fixed(1), Fixed(1056)}), std::nullopt);
}

TEST(StridedView, DynamicAxesAreRefused) {
  // The split axis of unknown size.
  EXPECT_EQ(StridedViewOf(FlatCacheMap(33, 8, 16, 0), {Fixed(1), SymDim{-1, "n"}}), std::nullopt);
  // A state axis of unknown size (the batch) beside another on one axis: [batch, 4] at t = 4*b + h.
  ElementMap map = ElementMap::Identity({kBatch, Fixed(4)});
  ASSERT_TRUE(map.Merge(0, {-1, 4}));
  EXPECT_EQ(StridedViewOf(map, {SymDim{-1, "n"}}), std::nullopt);
  EXPECT_EQ(StridedViewOf(map, {Fixed(64)}), std::nullopt);
}

TEST(StridedView, ViewSplitGroupsTheViewsAxesByTheTensorsAxes) {
  EXPECT_THAT(ViewSplit({Meta(1), Meta(66), Meta(16)}, {Meta(1), Meta(1056)}), Optional(ElementsAre(0, 1, 3)));
  EXPECT_THAT(ViewSplit({MetaDim{-1, "b"}, Meta(4), Meta(2)}, {MetaDim{-1, "batch"}, Meta(8)}),
              Optional(ElementsAre(0, 1, 3)))
      << "a symbolic axis matches a symbolic axis, whatever its name";
  EXPECT_EQ(ViewSplit({Meta(1), Meta(66), Meta(15)}, {Meta(1), Meta(1056)}), std::nullopt) << "other element count";
  EXPECT_EQ(ViewSplit({Meta(2), Meta(2)}, {MetaDim{-1, "n"}}), std::nullopt) << "a symbolic axis split";
  EXPECT_EQ(ViewSplit({Meta(16), Meta(66)}, {Meta(1056), Meta(1)}), std::nullopt) << "no trailing unit axis";
}

TEST(StridedView, RegionsOnDifferentViewsOverlapWhenTheirElementsDo) {
  using K = RegionAxis::Kind;
  const std::vector<MetaDim> shape{Meta(1), Meta(1056)};
  const std::vector<MetaDim> v16{Meta(1), Meta(66), Meta(16)}, v8{Meta(1), Meta(132), Meta(8)};
  const std::vector<RegionAxis> first{{K::kIndex, 0, 0}, {K::kRange, 0, 33}, {K::kRange, 0, 8}};
  const std::vector<RegionAxis> second{{K::kIndex, 0, 0}, {K::kRange, 0, 33}, {K::kRange, 8, 16}};
  EXPECT_FALSE(RegionsOverlap(first, v16, second, v16, shape));
  EXPECT_TRUE(RegionsOverlap(first, v16, first, v16, shape));
  // Columns [8, 16) of rows of 16 are the odd rows of the view [1,132,8]: rows 1, 3, ... 65.
  const std::vector<RegionAxis> odd_row{{K::kIndex, 0, 0}, {K::kIndex, 3, 0}, {K::kWhole, 0, 0}};
  const std::vector<RegionAxis> even_row{{K::kIndex, 0, 0}, {K::kIndex, 4, 0}, {K::kWhole, 0, 0}};
  EXPECT_TRUE(RegionsOverlap(second, v16, odd_row, v8, shape));
  EXPECT_FALSE(RegionsOverlap(second, v16, even_row, v8, shape));
  EXPECT_TRUE(RegionsOverlap(first, v16, even_row, v8, shape));
  // A region of the tensor itself: columns [528, 1056) are the second block.
  const std::vector<RegionAxis> block2{{K::kIndex, 0, 0}, {K::kRange, 528, 1056}};
  EXPECT_FALSE(RegionsOverlap(first, v16, block2, {}, shape));
  EXPECT_TRUE(RegionsOverlap({{K::kIndex, 0, 0}, {K::kRange, 33, 66}, {K::kRange, 0, 8}}, v16, block2, {}, shape));
  // A view that does not split the tensor: overlapping (conservatively).
  EXPECT_TRUE(RegionsOverlap(first, {Meta(2), Meta(33), Meta(16)}, block2, {}, shape));
}

}  // namespace
}  // namespace rnnstate::strided_view_test
