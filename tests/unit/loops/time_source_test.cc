// What decides how many steps a Loop runs and which input axis it walks (time_source: ReadTrip,
// CondEndsWithTrip, TraceToInput, StaticLength): an input's length through casts and Transposes, a
// constant, a graph input, something else; a condition that ends the loop with its trip count or earlier;
// an axis followed back through step-keeping operators and not through the others. Models as ONNX text.

#include "loops/time_source.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph/model_index.h"
#include "loop_text.h"
#include "loops/carried_variables.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::time_source_test {
namespace {

using namespace test_names;

/// Main-graph values of every kind of trip count and of traces from x [seq, batch, 3] and xt [batch, 5, 3].
const char* kValues = R"(<ir_version: 8, opset_import: ["" : 15]>
g (float[seq, batch, 3] x, float[batch, 5, 3] xt, int64 M, float[seq, batch, 3] other) => (float[seq, batch, 3] out) {
  shape = Shape (x)
  zero = Constant <value = int64 {0}> ()
  one = Constant <value = int64 {1}> ()
  len = Gather <axis = 0> (shape, zero)
  len32 = Cast <to = 6> (len)
  len64 = Cast <to = 7> (len32)
  batch = Gather <axis = 0> (shape, one)
  tx = Transpose <perm = [1, 0, 2]> (xt)
  tshape = Shape (tx)
  tlen = Gather <axis = 0> (tshape, zero)
  tail = Shape <start = 1> (x)
  tail0 = Gather <axis = 0> (tail, zero)
  six = Constant <value = int64 {6}> ()
  one_vec = Constant <value = int64[1] {1}> ()
  six_scalar = Reshape (six, one_vec)
  maxed = Max (len, M)
  two = Constant <value = float {2.0}> ()
  scaled = Mul (x, two)
  wide = Constant <value = float[1, 1, 1, 1] {3.0}> ()
  widened = Mul (wide, x)
  negated = Neg (x)
  idx = Identity (negated)
  moved = Transpose <perm = [1, 0, 2]> (idx)
  mixed = Add (x, other)
  w = Constant <value = float[3, 3] {1, 0, 0, 0, 1, 0, 0, 0, 1}> ()
  sq = MatMul (x, w)
  out = Identity (x)
})";

struct Fixture {
  onnx::ModelProto model = ParseModel(kValues);
  ModelIndex index{model};
};

TEST(TimeSource, ReadTripNamesTheLengthOfAnInputAxis) {
  Fixture f;
  for (const char* name : {"len", "len32", "len64"}) {
    const Trip trip = ReadTrip(f.index, {}, name);
    EXPECT_EQ(trip.kind, Trip::Kind::kLength) << name;
    EXPECT_EQ(trip.time.Text(), "x:0") << name;
  }
  EXPECT_EQ(ReadTrip(f.index, {}, "batch").time.Text(), "x:1");
  // Through a Transpose, back to the input's own axis.
  const Trip transposed = ReadTrip(f.index, {}, "tlen");
  EXPECT_EQ(transposed.kind, Trip::Kind::kLength);
  EXPECT_EQ(transposed.time.Text(), "xt:1");
  // Shape's start shifts the element: element 0 of Shape(x)[1:] is axis 1.
  EXPECT_EQ(ReadTrip(f.index, {}, "tail0").time.Text(), "x:1");
}

TEST(TimeSource, ReadTripTellsConstantsInputsAndTheRest) {
  Fixture f;
  EXPECT_EQ(ReadTrip(f.index, {}, "").kind, Trip::Kind::kAbsent);
  const Trip constant = ReadTrip(f.index, {}, "six_scalar");  // through the Reshape to where it is defined
  EXPECT_EQ(constant.kind, Trip::Kind::kConstant);
  EXPECT_EQ(constant.constant, 6);
  EXPECT_EQ(constant.defined.name, "six");
  const Trip input = ReadTrip(f.index, {}, "M");
  EXPECT_EQ(input.kind, Trip::Kind::kInput);
  EXPECT_EQ(input.defined.name, "M");
  const Trip other = ReadTrip(f.index, {}, "maxed");
  EXPECT_EQ(other.kind, Trip::Kind::kOther);
  EXPECT_THAT(other.producer, HasSubstr("Max"));
}

TEST(TimeSource, TraceToInputFollowsStepKeepingOperators) {
  Fixture f;
  EXPECT_EQ(TraceToInput(f.index, {}, "x", 0)->Text(), "x:0");
  EXPECT_EQ(TraceToInput(f.index, {}, "x", -3)->Text(), "x:0");  // negative axes count from the rank
  EXPECT_EQ(TraceToInput(f.index, {}, "idx", 1)->Text(), "x:1");
  // The Transpose moves the axis: axis 0 of moved is axis 1 of x.
  EXPECT_EQ(TraceToInput(f.index, {}, "moved", 0)->Text(), "x:1");
  EXPECT_EQ(TraceToInput(f.index, {}, "moved", 1)->Text(), "x:0");
  // Arithmetic with a one-element constant keeps every step; a [1,1,1,1] constant adds a leading axis.
  EXPECT_EQ(TraceToInput(f.index, {}, "scaled", 0)->Text(), "x:0");
  EXPECT_EQ(TraceToInput(f.index, {}, "widened", 1)->Text(), "x:0");
  EXPECT_FALSE(TraceToInput(f.index, {}, "widened", 0).has_value());  // the constant's axis
}

TEST(TimeSource, TraceToInputStopsWhereStepsMix) {
  Fixture f;
  EXPECT_FALSE(TraceToInput(f.index, {}, "mixed", 0).has_value());  // two data operands
  EXPECT_FALSE(TraceToInput(f.index, {}, "sq", 0).has_value());     // MatMul
  EXPECT_FALSE(TraceToInput(f.index, {}, "six", 0).has_value());    // a constant
  EXPECT_FALSE(TraceToInput(f.index, {}, "nothing", 0).has_value());
}

TEST(TimeSource, StaticLengthIsAFixedDimOnly) {
  Fixture f;
  EXPECT_EQ(StaticLength(f.index, TimeRef{"xt", 1}), 5);
  EXPECT_EQ(StaticLength(f.index, TimeRef{"xt", 2}), 3);
  EXPECT_EQ(StaticLength(f.index, TimeRef{"x", 0}), -1);  // symbolic
  EXPECT_EQ(StaticLength(f.index, TimeRef{"x", 7}), -1);  // no such axis
  EXPECT_EQ(StaticLength(f.index, TimeRef{"nope", 0}), -1);
}

/// A Loop over x [batch, T, 3] along axis 1 with counter t; `trip`, `cond` (the initial condition) and
/// `cond_out` (the body's) are given.
std::string CondLoop(const std::string& trip, const std::string& cond, const std::string& cond_out) {
  return R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, T, 3] x, float[batch, 3] h0) => (float[batch, 3] h_n) {
  shape = Shape (x)
  one = Constant <value = int64 {1}> ()
  len = Gather <axis = 0> (shape, one)
  M = Constant <value = int64 {6}> ()
  bound = Constant <value = int32 {6}> ()
  other_bound = Constant <value = int32 {5}> ()
  t0 = Constant <value = int32 {0}> ()
  )" + cond +
         R"(
  t_n, h_n = Loop ()" +
         trip +
         R"(, cond0, t0, h0) <body = body (int64 i, bool c, int32 t, float[batch, 3] h) => (bool c_out, int32 t_next, float[batch, 3] h_next) {
)" + AddCellAtInt32CounterText() +
         "    " + cond_out +
         R"(
  }>
})";
}

struct CondResult {
  bool ends = false;
  std::vector<ValueRef> constants;
};

CondResult Cond(const std::string& text, const std::string& trip_name) {
  const onnx::ModelProto model = ParseModel(text);
  ModelIndex index(model);
  int node = 0;
  while (model.graph().node(node).op_type() != "Loop") ++node;
  const std::optional<LoopAnatomy> loop = ReadLoop(index, {}, node, {});
  if (!loop) throw std::runtime_error("not a Loop");
  CondResult result;
  result.ends = CondEndsWithTrip(index, *loop, ReadTrip(index, {}, trip_name), &result.constants);
  return result;
}

const char* kTrue = "cond0 = Constant <value = bool {1}> ()";
const char* kStartBelow = "cond0 = Less (t0, bound)";

TEST(TimeSource, AnAlwaysTrueConditionEndsWithTheTripCount) {
  const CondResult result = Cond(CondLoop("len", kTrue, "c_out = Identity (c)"), "len");
  EXPECT_TRUE(result.ends);
  EXPECT_TRUE(result.constants.empty());
  const CondResult constant = Cond(CondLoop("len", kTrue, "c_out = Constant <value = bool {1}> ()"), "len");
  EXPECT_TRUE(constant.ends);
}

TEST(TimeSource, Tf2onnxsCounterBoundEndsWithAConstantTripCount) {
  // tf2onnx: trip count M = 6, condition t + 1 < 6 in the body and 0 < 6 before the loop.
  const CondResult result = Cond(CondLoop("M", kStartBelow, "c_out = Less (t_next, bound)"), "M");
  EXPECT_TRUE(result.ends);
  ASSERT_EQ(result.constants.size(), 2u);  // the bound in the body and before the loop
  EXPECT_EQ(result.constants[0].name, "bound");
  // A bound other than the trip count ends the loop earlier.
  EXPECT_FALSE(Cond(CondLoop("M", kStartBelow, "c_out = Less (t_next, other_bound)"), "M").ends);
  EXPECT_FALSE(Cond(CondLoop("M", "cond0 = Less (t0, other_bound)", "c_out = Less (t_next, bound)"), "M").ends);
  // Greater(bound, t + 1) is the same comparison.
  EXPECT_TRUE(Cond(CondLoop("M", kStartBelow, "c_out = Greater (bound, t_next)"), "M").ends);
  // The counter before its step too (tf2onnx's Keras loops compare it): t < M holds on every iteration
  // the trip count allows. Another comparison is not followed.
  EXPECT_TRUE(Cond(CondLoop("M", kStartBelow, "c_out = Less (t, bound)"), "M").ends);
  EXPECT_FALSE(Cond(CondLoop("M", kStartBelow, "c_out = LessOrEqual (t_next, bound)"), "M").ends);
}

TEST(TimeSource, ACounterBoundOfTheInputsLengthEndsWithALengthTripCount) {
  const std::string body = "len32 = Cast <to = 6> (len)\n    c_out = Less (t_next, len32)";
  EXPECT_TRUE(Cond(CondLoop("len", kTrue, body), "len").ends);
  // The bound is the input's length, the trip count a constant: not the same end.
  EXPECT_FALSE(Cond(CondLoop("M", kTrue, body), "M").ends);
}

TEST(TimeSource, AConditionComputedOtherwiseMayEndTheLoopEarly) {
  const std::string data_dependent = R"(r = ReduceMax <keepdims = 0> (h_next)
    zero_f = Constant <value = float {0.0}> ()
    c_out = Greater (r, zero_f))";
  EXPECT_FALSE(Cond(CondLoop("len", kTrue, data_dependent), "len").ends);
  // An initial condition that is false, or computed, too.
  EXPECT_FALSE(Cond(CondLoop("len", "cond0 = Constant <value = bool {0}> ()", "c_out = Identity (c)"), "len").ends);
}

}  // namespace
}  // namespace rnnstate::time_source_test
