// One step of the write walk (exposure/view_forward.h): StepForward moves a state's elements from a
// node's input to the output that holds them, or says why it cannot — a view that breaks the proof, a view
// of other elements (weak), or no view at all. Each test steps one node of a small main graph on h [1, 4, 3]
// (the whole state) and pair [2, 4, 3] (the state in row 1), and reads the step, the map and the shape.

#include "exposure/view_forward.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "exposure_test_models.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::view_forward_test {
namespace {

using namespace test_names;

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;

SymShape Fixed(const std::vector<int64_t>& dims) {
  SymShape shape;
  for (int64_t d : dims) shape.push_back(SymDim{d, ""});
  return shape;
}

/// The state [1, 4, 3] filling h.
Holding WholeOfH() { return Holding{ElementMap::Identity(Fixed({1, 4, 3})), {kFloat}, Fixed({1, 4, 3})}; }

/// The state [1, 4, 3] in row 1 of pair [2, 4, 3].
Holding SecondRowOfPair() {
  ElementMap map = ElementMap::Identity(Fixed({1, 4, 3}));
  EXPECT_TRUE(map.Scale(0, 1, 1));
  return Holding{map, {kFloat}, Fixed({2, 4, 3})};
}

/// A main graph on h [1, 4, 3] and pair [2, 4, 3] with `nodes` (ONNX text) and the outputs `outputs`.
struct Stepping {
  Stepping(const std::string& nodes, const std::string& outputs)
      : model(ParseModel(kHeader + std::string("g (float[1, 4, 3] h, float[2, 4, 3] pair) => (") + outputs + ") {\n" +
                         nodes + "}")),
        index(model) {}

  /// StepForward of `start` into input `slot` of the `nth` node of type `op`; `held` is where it went.
  ForwardStep Step(const std::string& op, int slot, Holding start, int nth = 0) {
    held = std::move(start);
    return StepForward(index, GraphPath{}, NodeOfType(model.graph(), op, nth), slot, held);
  }

  onnx::ModelProto model;
  ModelIndex index;
  Holding held;
};

const char* kConstants = R"(  z1 = Constant <value = int64[1] {0}> ()
  o1 = Constant <value = int64[1] {1}> ()
  t1 = Constant <value = int64[1] {2}> ()
)";

TEST(StepForward, IdentityAndCastPassItOnAndACastIsRemembered) {
  Stepping g("  a = Identity (h)\n  b = Cast <to = 11> (h)\n", "float[1, 4, 3] a, double[1, 4, 3] b");
  const ForwardStep identity = g.Step("Identity", 0, WholeOfH());
  EXPECT_EQ(identity.output, 0);
  EXPECT_TRUE(g.held.map.SamePlaces(WholeOfH().map));
  EXPECT_EQ(g.held.shape, Fixed({1, 4, 3}));
  EXPECT_EQ(g.Step("Cast", 0, WholeOfH()).output, 0);
  EXPECT_THAT(g.held.types, ElementsAre(kFloat, onnx::TensorProto::DOUBLE)) << "for the lossless check";
}

TEST(StepForward, UnsqueezeAddsAUnitAxisToTheMapAndToTheShape) {
  Stepping g(std::string(kConstants) + "  u = Unsqueeze (h, o1)\n", "float[1, 1, 4, 3] u");
  ASSERT_EQ(g.Step("Unsqueeze", 0, WholeOfH()).output, 0);
  ASSERT_EQ(g.held.map.rank(), 4u);
  EXPECT_TRUE(g.held.map.IsConstant(1));
  EXPECT_EQ(g.held.map.coef(2, 1), 1) << "the state's axis 1 moved to axis 2";
  EXPECT_EQ(g.held.shape, Fixed({1, 1, 4, 3}));
}

TEST(StepForward, SqueezeOfAnAxisTheStateSpansBreaksTheProof) {
  Stepping g(std::string(kConstants) + "  s = Squeeze (pair, o1)\n", "float[2, 4, 3] s");
  const ForwardStep step = g.Step("Squeeze", 0, SecondRowOfPair());
  EXPECT_EQ(step.output, -1);
  EXPECT_FALSE(step.weak);
  EXPECT_EQ(step.why, " removes an axis the state is not constant on, or out of range");
}

TEST(StepForward, TransposeMovesTheMapsAxesAndTheShapes) {
  Stepping g("  t = Transpose <perm = [1, 0, 2]> (pair)\n", "float[4, 2, 3] t");
  ASSERT_EQ(g.Step("Transpose", 0, SecondRowOfPair()).output, 0);
  EXPECT_EQ(g.held.map.offset(1), 1) << "row 1 of pair is now column 1";
  EXPECT_EQ(g.held.map.coef(0, 1), 1);
  EXPECT_EQ(g.held.shape, Fixed({4, 2, 3}));
}

TEST(StepForward, ConcatShiftsAnInputByTheSizesOfTheInputsBeforeIt) {
  Stepping g("  c = Concat <axis = 0> (pair, h)\n", "float[3, 4, 3] c");
  ASSERT_EQ(g.Step("Concat", 1, WholeOfH()).output, 0);
  EXPECT_EQ(g.held.map.offset(0), 2);
  EXPECT_EQ(g.held.shape, Fixed({3, 4, 3}));
  ASSERT_EQ(g.Step("Concat", 0, SecondRowOfPair()).output, 0);
  EXPECT_EQ(g.held.map.offset(0), 1) << "the first input stays where it was";
}

TEST(StepForward, SplitPassesItToThePieceItLiesIn) {
  Stepping g("  one, two = Split <axis = 0> (pair)\n  l, r = Split <axis = 1> (pair)\n",
             "float[1, 4, 3] one, float[1, 4, 3] two, float[2, 2, 3] l, float[2, 2, 3] r");
  EXPECT_EQ(g.Step("Split", 0, SecondRowOfPair()).output, 1);
  EXPECT_EQ(g.held.map.offset(0), 0) << "row 1 of pair is row 0 of the second piece";
  const ForwardStep halves = g.Step("Split", 0, SecondRowOfPair(), 1);
  EXPECT_EQ(halves.output, -1);
  EXPECT_EQ(halves.why, " splits it into several parts");
}

TEST(StepForward, GatherOfTheStatesRowPassesItOnAndOfAnotherIsWeak) {
  Stepping g(
      "  i1 = Constant <value = int64 {1}> ()\n  i0 = Constant <value = int64 {0}> ()\n"
      "  mine = Gather <axis = 0> (pair, i1)\n  other = Gather <axis = 0> (pair, i0)\n",
      "float[4, 3] mine, float[4, 3] other");
  ASSERT_EQ(g.Step("Gather", 0, SecondRowOfPair()).output, 0);
  EXPECT_EQ(g.held.map.rank(), 2u) << "a scalar index removes the axis";
  const ForwardStep other = g.Step("Gather", 0, SecondRowOfPair(), 1);
  EXPECT_EQ(other.output, -1);
  EXPECT_TRUE(other.weak) << "a view of other elements ends the path without breaking the proof";
  EXPECT_EQ(other.why, " takes other elements");
}

TEST(StepForward, ASliceKeepsItDropsItOrCutsIt) {
  Stepping g(std::string(kConstants) +
                 "  keep = Slice (pair, o1, t1, z1)\n  drop = Slice (pair, z1, o1, z1)\n"
                 "  two = Constant <value = int64[1] {2}> ()\n  cut = Slice (pair, z1, t1, two)\n",
             "float[1, 4, 3] keep, float[1, 4, 3] drop, float[2, 4, 2] cut");
  ASSERT_EQ(g.Step("Slice", 0, SecondRowOfPair()).output, 0);
  EXPECT_EQ(g.held.map.offset(0), 0) << "row 1 of pair is row 0 of rows [1:2]";
  const ForwardStep drop = g.Step("Slice", 0, SecondRowOfPair(), 1);
  EXPECT_EQ(drop.output, -1);
  EXPECT_TRUE(drop.weak);
  EXPECT_EQ(drop.why, " drops it (keeps other elements)");
  const ForwardStep cut = g.Step("Slice", 0, SecondRowOfPair(), 2);
  EXPECT_EQ(cut.output, -1);
  EXPECT_FALSE(cut.weak) << "keeping 2 of its 3 units breaks the proof";
  EXPECT_EQ(cut.why, " cuts part of it off");
}

TEST(StepForward, ScatterNDKeepsItInTheDataWhereNoRowWritesAndPlacesItsUpdatesAtTheRow) {
  const std::string nodes =
      "  r0 = Constant <value = int64[1, 1] {0}> ()\n  r1 = Constant <value = int64[1, 1] {1}> ()\n"
      "  apart = ScatterND (pair, r0, h)\n  over = ScatterND (pair, r1, h)\n";
  Stepping g(nodes, "float[2, 4, 3] apart, float[2, 4, 3] over");
  EXPECT_EQ(g.Step("ScatterND", 0, SecondRowOfPair()).output, 0) << "row 0 is written, the state is row 1";
  const ForwardStep over = g.Step("ScatterND", 0, SecondRowOfPair(), 1);
  EXPECT_EQ(over.output, -1);
  EXPECT_EQ(over.why, " overwrites it");
  // h as the updates of the row [1]: the state lands in row 1 of the output.
  ASSERT_EQ(g.Step("ScatterND", 2, WholeOfH(), 1).output, 0);
  ASSERT_EQ(g.held.map.rank(), 3u);
  EXPECT_TRUE(g.held.map.IsConstant(0));
  EXPECT_EQ(g.held.map.offset(0), 1);
  EXPECT_EQ(g.held.shape, Fixed({2, 4, 3})) << "the output has the data's shape";
}

TEST(StepForward, ExpandToItsOwnShapeIsAViewAndABroadcastIsNot) {
  Stepping g(
      "  same = Constant <value = int64[3] {1, 4, 3}> ()\n  wide = Constant <value = int64[3] {2, 4, 3}> ()\n"
      "  a = Expand (h, same)\n  b = Expand (h, wide)\n",
      "float[1, 4, 3] a, float[2, 4, 3] b");
  EXPECT_EQ(g.Step("Expand", 0, WholeOfH()).output, 0);
  const ForwardStep wide = g.Step("Expand", 0, WholeOfH(), 1);
  EXPECT_EQ(wide.output, -1);
  EXPECT_EQ(wide.why, " broadcasts it");
}

TEST(StepForward, ADropoutThatMayTrainAndAnOperatorThatIsNoViewStopIt) {
  Stepping g("  yes = Constant <value = bool {1}> ()\n  d = Dropout (h, , yes)\n  r = Relu (h)\n",
             "float[1, 4, 3] d, float[1, 4, 3] r");
  const ForwardStep dropout = g.Step("Dropout", 0, WholeOfH());
  EXPECT_EQ(dropout.output, -1);
  EXPECT_THAT(dropout.why, HasSubstr("may drop elements"));
  const ForwardStep relu = g.Step("Relu", 0, WholeOfH());
  EXPECT_EQ(relu.output, -1);
  EXPECT_EQ(relu.why, "") << "no view at all: nothing to say of it";
  EXPECT_FALSE(relu.weak);
}

}  // namespace
}  // namespace rnnstate::view_forward_test
