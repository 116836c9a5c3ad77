// When a Loop's condition lets chunks stream (loop_streaming, time_source): a condition that is always
// true, whether a Constant node or an initializer writes it, and one a caller can change. Models as ONNX
// text.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "find/analysis.h"
#include "find/analyze_text.h"
#include "graph/model_index.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::loop_recurrence_condition_test {
namespace {

using namespace test_names;

/// A Loop over axis 0 of x with trip count Shape(x)[0] and the initial condition `cond0`, which
/// `inputs` and `initializers` may declare; the body passes its condition through.
std::string ConditionedLoop(const std::string& inputs, const std::string& initializers, const std::string& trip) {
  return R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 3] x)" +
         inputs + R"() => (float[batch, 3] h_n) )" + initializers + R"( {
)" + LoopZerosOfTheBatch(3) +
         "  " + trip + R"(
  h_n = Loop (trip, cond0, h0) <body = body (int64 i, bool cond, float[batch, 3] h) => (bool cond_out, float[batch, 3] h_next) {
    x_t = Gather <axis = 0> (x, i)
    s = Add (h, x_t)
    h_next = Tanh (s)
    cond_out = Identity (cond)
  }>
})";
}

TEST(LoopCondition, AnInitializerTrueConditionPassedThroughStreams) {
  // Before: "condition is neither always true nor the end of its trip count" (only a Constant node was
  // read), although every call runs the whole trip count.
  const Analysis analysis = AnalyzeText(ConditionedLoop("", "<bool cond0 = {1}>", kLengthTrip));
  ASSERT_EQ(analysis.nodes.size(), 1u);
  EXPECT_TRUE(analysis.nodes[0].streamable) << analysis.nodes[0].not_streamable_reason;
}

TEST(LoopCondition, AConditionACallerCanFeedIsNotAlwaysTrue) {
  // The same initializer as the default of a graph input: a caller may feed false.
  const Analysis analysis = AnalyzeText(ConditionedLoop(", bool cond0", "<bool cond0 = {1}>", kLengthTrip));
  ASSERT_EQ(analysis.nodes.size(), 1u);
  EXPECT_FALSE(analysis.nodes[0].streamable);
  EXPECT_THAT(analysis.nodes[0].not_streamable_reason, HasSubstr("condition"));
}

TEST(LoopCondition, AWhileLoopIsNamedSoNotByItsUnboundedTripCount) {
  // TorchScript writes `while` as a Loop with trip count INT64_MAX; before, the reason said "every call
  // runs 9223372036854775807 iterations".
  const Analysis analysis = AnalyzeText(ConditionedLoop(
      "", "<bool cond0 = {1}>", "trip = Constant <value = int64 {9223372036854775807}> ()"));
  ASSERT_EQ(analysis.nodes.size(), 1u);
  EXPECT_FALSE(analysis.nodes[0].streamable);
  EXPECT_THAT(analysis.nodes[0].not_streamable_reason, HasSubstr("a while loop"));
}

}  // namespace
}  // namespace rnnstate::loop_recurrence_condition_test
