// MapAxis (axis_map.h) and the table's axis readers (AxisAttribute, NamedAxes): each axis effect in both
// directions, the defaults of the model's opset, negative axes, and operators without an axis map.

#include "ops/axis_map.h"

#include <gtest/gtest.h>

#include "graph/model_index.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::axis_map_test {
namespace {

using namespace test_names;

/// One node of each axis effect over x [2, 5, 7] (opset 13).
onnx::ModelProto EffectsModel() {
  return ParseModel(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2, 5, 7] x, float[7, 3] w, float[7] v, float[5, 7] b, float[1, 5, 7] y1, float[4, 5, 3] k)
  => (float[2, 5, 7] sm, float[2, 5, 7] add, float[2, 7] red, float[2, 1, 7] redk, int64[5, 7] am,
      float[2, 2, 2, 7] ga, float[2, 10, 7] cc, float[1, 5, 7] sp0, float[1, 5, 7] sp1, float[2, 5, 3] mm,
      float[2, 5] mv, float[5, 3] gm, float[5, 7] sq, float[2, 5, 7, 1] us, float[7, 2, 5] tr, float[2, 35] fl,
      float[2, 3, 7] sl, float[2, 4, 3] cv, float[2, 5, 7] nz) {
  sm = Softmax (x)
  add = Add (x, b)
  one = Constant <value = int64[1] {1}> ()
  red = ReduceSum <keepdims = 0> (x, one)
  redk = ReduceSum (x, one)
  am = ArgMax <keepdims = 0> (x)
  idx = Constant <value = int64[2, 2] {0, 1, 2, 3}> ()
  ga = Gather <axis = -2> (x, idx)
  cc = Concat <axis = 1> (x, x)
  sp0, sp1 = Split <axis = -3> (x)
  mm = MatMul (x, w)
  mv = MatMul (x, v)
  gm = Gemm (b, w)
  zero = Constant <value = int64[1] {0}> ()
  sq = Squeeze (y1, zero)
  last = Constant <value = int64[1] {-1}> ()
  us = Unsqueeze (x, last)
  tr = Transpose <perm = [2, 0, 1]> (x)
  fl = Flatten (x)
  start = Constant <value = int64[1] {1}> ()
  end = Constant <value = int64[1] {4}> ()
  sl = Slice (x, start, end, one)
  cv = Conv (x, k)
  nz = Identity (x)
})");
}

class AxisMapTest : public ::testing::Test {
 protected:
  AxisMapTest() : model_(EffectsModel()), index_(model_) {}

  const onnx::NodeProto& Node(const std::string& output) { return *index_.Resolve({}, output).node; }

  /// Axis `axis` of input `input` (of rank `rank`) of the node making `output`, forward.
  std::optional<AxisOf> Forward(const std::string& output, int64_t axis, int rank = 3, int input = 0) {
    return MapAxis(index_, {}, Node(output), AxisOf{axis, rank}, AxisDirection::kForward, AxisPort{input, 0});
  }
  /// Axis `axis` of output `output_slot` back to input `input`.
  std::optional<int64_t> Backward(const std::string& output, int64_t axis, int input = 0, int output_slot = 0) {
    const onnx::NodeProto& node = Node(output);
    const std::optional<AxisOf> in =
        MapAxis(index_, {}, node, AxisOf{axis, RankOf(index_, {}, node.output(output_slot))}, AxisDirection::kBackward,
                AxisPort{input, output_slot});
    if (!in) return std::nullopt;
    return in->axis;
  }
  static std::optional<int64_t> Axis(const std::optional<AxisOf>& a) {
    return a ? std::optional<int64_t>(a->axis) : std::nullopt;
  }

  onnx::ModelProto model_;
  ModelIndex index_;
};

TEST_F(AxisMapTest, ElementwiseAndNormalizationsKeepEveryAxis) {
  EXPECT_EQ(Axis(Forward("nz", 1)), 1);
  EXPECT_EQ(Backward("nz", 2), 2);
  EXPECT_EQ(Axis(Forward("sm", 2)), 2);  // where Softmax mixes is the row's AxisMixing, not the map's
  EXPECT_EQ(Backward("sm", 0), 0);
}

TEST_F(AxisMapTest, BroadcastingRightAlignsTheOperands) {
  EXPECT_EQ(Axis(Forward("add", 1)), 1);
  const std::optional<AxisOf> from_b = Forward("add", 0, 2, /*input=*/1);  // b [5, 7]: axis 0 is the output's 1
  ASSERT_TRUE(from_b);
  EXPECT_EQ(from_b->axis, 1);
  EXPECT_EQ(from_b->rank, 3);
  EXPECT_EQ(Backward("add", 2, /*input=*/1), 1);
  EXPECT_FALSE(Backward("add", 0, /*input=*/1));  // b has no axis there: a broadcast leading axis
  // Of unknown rank: kept only when the other operands cannot add leading axes.
  EXPECT_FALSE(Forward("add", 1, -1));
}

TEST_F(AxisMapTest, ReductionsRemoveOrKeepTheirAxes) {
  const std::optional<AxisOf> after = Forward("red", 2);
  ASSERT_TRUE(after);
  EXPECT_EQ(after->axis, 1);
  EXPECT_EQ(after->rank, 2);
  EXPECT_FALSE(Forward("red", 1));  // reduced
  EXPECT_EQ(Backward("red", 1), 2);
  EXPECT_EQ(Backward("red", 0), 0);
  EXPECT_EQ(Axis(Forward("redk", 2)), 2);  // keepdims defaults to 1
  EXPECT_FALSE(Backward("redk", 1));       // the reduced axis, kept as 1
  // ArgMax names no axis: its default, 0.
  EXPECT_FALSE(Forward("am", 0));
  EXPECT_EQ(Axis(Forward("am", 2)), 1);
}

TEST_F(AxisMapTest, GatherReplacesItsAxisByTheIndicesAxes) {
  // axis -2 of rank 3 is 1; indices of rank 2: [2, 5, 7] -> [2, 2, 2, 7].
  EXPECT_EQ(Axis(Forward("ga", 0)), 0);
  EXPECT_FALSE(Forward("ga", 1));
  const std::optional<AxisOf> last = Forward("ga", 2);
  ASSERT_TRUE(last);
  EXPECT_EQ(last->axis, 3);
  EXPECT_EQ(last->rank, 4);
  EXPECT_EQ(Backward("ga", 3), 2);
  EXPECT_FALSE(Backward("ga", 1));
  EXPECT_EQ(Backward("ga", 0), 0);
  EXPECT_FALSE(Forward("ga", 0, -1));  // axis -2 of an unknown rank: nowhere known
}

TEST_F(AxisMapTest, ConcatAndSplitKeepEveryAxisButTheirs) {
  EXPECT_FALSE(Forward("cc", 1));
  EXPECT_EQ(Axis(Forward("cc", 2, 3, /*input=*/1)), 2);
  EXPECT_EQ(Backward("cc", 0, /*input=*/1), 0);
  EXPECT_FALSE(Backward("cc", 1));
  EXPECT_FALSE(Forward("sp0", 0));  // axis -3 of rank 3
  EXPECT_EQ(Axis(Forward("sp0", 1)), 1);
  EXPECT_EQ(Backward("sp0", 2, 0, /*output_slot=*/1), 2);
}

TEST_F(AxisMapTest, ContractionsKeepTheLeadingAxesOfInputZero) {
  EXPECT_EQ(Axis(Forward("mm", 1)), 1);
  EXPECT_FALSE(Forward("mm", 2));  // contracted
  const std::optional<AxisOf> by_vector = Forward("mv", 1);
  ASSERT_TRUE(by_vector);
  EXPECT_EQ(by_vector->rank, 2);
  EXPECT_EQ(Backward("mm", 0), 0);
  EXPECT_FALSE(Backward("mm", 2));  // the columns of w
  EXPECT_EQ(Axis(Forward("gm", 0, 2)), 0);
  EXPECT_FALSE(Forward("gm", 1, 2));
  EXPECT_FALSE(Forward("mm", 0, 3, /*input=*/1));  // w's axes are not mapped
}

TEST_F(AxisMapTest, ViewsMoveAxesBothWays) {
  EXPECT_EQ(Axis(Forward("sq", 1)), 0);
  EXPECT_FALSE(Forward("sq", 0));  // squeezed
  EXPECT_EQ(Backward("sq", 0), 1);
  const std::optional<AxisOf> unsqueezed = Forward("us", 2);  // axes [-1] of the output's rank 4
  ASSERT_TRUE(unsqueezed);
  EXPECT_EQ(unsqueezed->axis, 2);
  EXPECT_EQ(unsqueezed->rank, 4);
  EXPECT_FALSE(Backward("us", 3));  // the inserted unit axis
  EXPECT_EQ(Axis(Forward("tr", 2)), 0);
  EXPECT_EQ(Backward("tr", 0), 2);
  EXPECT_FALSE(Forward("fl", 0));  // Flatten merges: not mapped
  EXPECT_FALSE(Backward("fl", 0));
}

TEST_F(AxisMapTest, SlicesKeepAxesInPlaceAndWindowsTheBatch) {
  EXPECT_EQ(Axis(Forward("sl", 1)), 1);  // cut, still axis 1: whether it is cut is the caller's question
  EXPECT_EQ(Backward("sl", 1), 1);
  EXPECT_EQ(Axis(Forward("cv", 0)), 0);
  EXPECT_FALSE(Forward("cv", 1));
  EXPECT_EQ(Backward("cv", 0), 0);
  EXPECT_FALSE(Backward("cv", 2));
}

TEST_F(AxisMapTest, NegativeAxesAndOperatorsWithoutAMapGiveNothing) {
  EXPECT_FALSE(Forward("nz", -1));
  onnx::NodeProto custom = Node("nz");
  custom.set_domain("com.example");
  EXPECT_FALSE(MapAxis(index_, {}, custom, AxisOf{0, 3}, AxisDirection::kForward));
  onnx::NodeProto shape = Node("nz");
  shape.set_op_type("Shape");
  EXPECT_FALSE(MapAxis(index_, {}, shape, AxisOf{0, 3}, AxisDirection::kForward));
}

TEST_F(AxisMapTest, TheNamedAxisHasTheDefaultOfTheOpset) {
  const onnx::NodeProto& softmax = Node("sm");
  EXPECT_EQ(AxisAttribute(softmax, 13), -1);
  EXPECT_EQ(AxisAttribute(softmax, 11), 1);  // Softmax flattened at axis 1 before opset 13
  EXPECT_EQ(AxisAttribute(Node("fl"), 13), 1);
  EXPECT_EQ(AxisAttribute(Node("ga"), 13), -2);  // written: not normalized here
  onnx::NodeProto concat = Node("cc");
  concat.clear_attribute();
  EXPECT_EQ(AxisAttribute(concat, 3), 1);  // Concat's default before opset 4 made it required
  EXPECT_EQ(AxisAttribute(Node("nz"), 13), 0);
}

TEST_F(AxisMapTest, NamedAxesAreTheOperandElseTheDefault) {
  EXPECT_EQ(NamedAxes(index_, {}, Node("red")), (std::vector<int64_t>{1}));
  EXPECT_EQ(NamedAxes(index_, {}, Node("am")), (std::vector<int64_t>{0}));
  EXPECT_EQ(NamedAxes(index_, {}, Node("sm")), (std::vector<int64_t>{-1}));
  onnx::NodeProto all = Node("red");
  all.mutable_input()->RemoveLast();  // no axes: a reduction over every axis
  EXPECT_EQ(NamedAxes(index_, {}, all), (std::vector<int64_t>{}));
  EXPECT_FALSE(NamedAxes(index_, {}, Node("nz")));  // Identity names no axis, has no default
}

}  // namespace
}  // namespace rnnstate::axis_map_test
