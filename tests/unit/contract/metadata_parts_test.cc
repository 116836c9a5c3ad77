// The parts of a state pair as text and JSON (contract/metadata_parts.cc, declared in rnnstate/metadata.h):
// element type names, row ranges, regions and where a state sits in its tensor, shapes read back from JSON
// (and refused when malformed), a view that splits a tensor's axes, and whether two regions share an
// element, on one view or on two different views of one tensor.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "rnnstate/metadata.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::metadata_parts_test {
namespace {

using namespace test_names;
using Kind = RegionAxis::Kind;

RegionAxis Index(int64_t i) { return {Kind::kIndex, i, 0}; }
RegionAxis Range(int64_t begin, int64_t end) { return {Kind::kRange, begin, end}; }
RegionAxis Whole() { return {Kind::kWhole, 0, 0}; }
MetaDim Fixed(int64_t value) { return {value, ""}; }
MetaDim Named(const std::string& symbol) { return {-1, symbol}; }

TEST(ElementTypeName, NamesTheTypesAStateCanHaveAsOnnxruntimeDoes) {
  EXPECT_EQ(ElementTypeName(onnx::TensorProto::FLOAT), "float32");
  EXPECT_EQ(ElementTypeName(onnx::TensorProto::DOUBLE), "float64");
  EXPECT_EQ(ElementTypeName(onnx::TensorProto::BFLOAT16), "bfloat16");
  EXPECT_EQ(ElementTypeName(onnx::TensorProto::UINT16), "uint16");
  EXPECT_EQ(ElementTypeName(onnx::TensorProto::INT64), "int64");
  EXPECT_EQ(ElementTypeName(onnx::TensorProto::BOOL), "bool");
  EXPECT_EQ(ElementTypeName(onnx::TensorProto::STRING), "");
  EXPECT_EQ(ElementTypeName(onnx::TensorProto::COMPLEX64), "");
  EXPECT_EQ(ElementTypeName(onnx::TensorProto::UNDEFINED), "");
}

TEST(PlaceSuffix, WritesRowsARegionOrARegionOfAView) {
  EXPECT_EQ(RowRangeText(std::nullopt), "");
  EXPECT_EQ(RowRangeText(RowRange{2, 4}), "[2:4]");
  EXPECT_EQ(RowRangeJson({2, 4}).dump(), "[2,4]");
  const std::vector<RegionAxis> region{Whole(), Index(0), Range(4, 8)};
  EXPECT_EQ(RegionText(region), "[:, 0, 4:8]");
  EXPECT_EQ(RegionJson(region).dump(), "[null,0,[4,8]]");
  EXPECT_EQ(PlaceSuffix(RowRange{0, 1}, region), "[0:1]");  // rows win
  EXPECT_EQ(PlaceSuffix(std::nullopt, region), "[:, 0, 4:8]");
  EXPECT_EQ(PlaceSuffix(std::nullopt, region, {Fixed(1), Named("b"), Fixed(16)}), "[:, 0, 4:8] of view [1,b,16]");
  EXPECT_EQ(PlaceSuffix(std::nullopt, {}), "");
}

TEST(MetaShapeFromJson, ReadsWhatMetaShapeJsonWritesAndRefusesTheRest) {
  const std::vector<MetaDim> shape{Fixed(0), Named("seq"), MetaDim{}};
  EXPECT_EQ(MetaShapeJson(shape).dump(), R"([0,"seq",null])");
  EXPECT_EQ(MetaShapeFromJson(MetaShapeJson(shape), "shape"), shape);
  EXPECT_TRUE(MetaShapeFromJson(ParseJson("[]"), "shape").empty());
  for (const char* bad : {"[-1]", "[1.5]", "[true]", "[[1]]"}) {
    try {
      MetaShapeFromJson(ParseJson(bad), "view");
      ADD_FAILURE() << bad << " was read";
    } catch (const std::runtime_error& error) {
      EXPECT_THAT(error.what(), HasSubstr("'view' holds something other than sizes")) << bad;
    }
  }
  EXPECT_THROW(MetaShapeFromJson(ParseJson(R"({"a": 1})"), "shape"), std::runtime_error);
}

TEST(ViewSplit, GivesTheFirstViewAxisOfEachTensorAxis) {
  const std::vector<MetaDim> cache{Fixed(1), Fixed(1056)};
  EXPECT_EQ(ViewSplit({Fixed(1), Fixed(66), Fixed(16)}, cache), (std::vector<size_t>{0, 1, 3}));
  EXPECT_EQ(ViewSplit(cache, cache), (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(ViewSplit({Named("b"), Fixed(2), Fixed(3)}, {Named("batch"), Fixed(6)}), (std::vector<size_t>{0, 1, 3}));
  EXPECT_FALSE(ViewSplit({Fixed(1), Fixed(66), Fixed(15)}, cache));           // another element count
  EXPECT_FALSE(ViewSplit({Fixed(1), Fixed(1056), Fixed(1)}, cache));          // an axis left over
  EXPECT_FALSE(ViewSplit({Fixed(2), Fixed(3)}, {Named("batch"), Fixed(3)}));  // a symbolic axis fixed
  EXPECT_FALSE(ViewSplit({Named("a"), Named("b")}, {Named("batch"), Fixed(6)}));
  EXPECT_FALSE(ViewSplit({Fixed(1)}, cache));
}

TEST(RegionsOverlap, MeetOnlyWhenEveryAxisMeets) {
  EXPECT_TRUE(RegionsOverlap({Index(0), Whole()}, {Index(0), Range(2, 3)}));
  EXPECT_FALSE(RegionsOverlap({Index(0), Whole()}, {Index(1), Whole()}));
  EXPECT_FALSE(RegionsOverlap({Range(0, 2), Index(0)}, {Range(2, 4), Index(0)}));  // ranges end before
  EXPECT_TRUE(RegionsOverlap({Range(0, 3), Index(0)}, {Range(2, 4), Index(0)}));
  EXPECT_TRUE(RegionsOverlap({Index(0)}, {Index(1), Whole()}));  // ranks differ: assumed to meet
}

TEST(RegionsOverlap, OnTwoViewsComparesTheElementsOfEachTensorAxis) {
  const std::vector<MetaDim> shape{Fixed(1), Fixed(12)}, heads{Fixed(1), Fixed(3), Fixed(4)};
  // [0, h, 0:2] of view [1,3,4] takes elements 4h..4h+1 of the 12: on the tensor itself, [0, 4:6] meets h=1.
  EXPECT_TRUE(RegionsOverlap({Index(0), Index(1), Range(0, 2)}, heads, {Index(0), Range(4, 6)}, {}, shape));
  EXPECT_FALSE(RegionsOverlap({Index(0), Index(1), Range(0, 2)}, heads, {Index(0), Range(6, 8)}, {}, shape));
  EXPECT_FALSE(RegionsOverlap({Index(0), Index(1), Range(0, 2)}, heads, {Index(0), Range(2, 4)}, {}, shape));
  // A view that does not split the shape: assumed to meet.
  EXPECT_TRUE(RegionsOverlap({Index(0), Index(1), Range(0, 2)}, {Fixed(1), Fixed(5), Fixed(4)}, {Index(0), Range(6, 8)},
                             {}, shape));
  // The same view: the regions compared axis by axis.
  EXPECT_FALSE(RegionsOverlap({Index(0), Index(0), Whole()}, heads, {Index(0), Index(2), Whole()}, heads, shape));
}

}  // namespace
}  // namespace rnnstate::metadata_parts_test
