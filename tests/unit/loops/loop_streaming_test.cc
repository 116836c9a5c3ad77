// The verdict on one Loop or Scan over a hand-written cell (loop_streaming: JudgeLoop): streamable when it
// walks the time axis of a graph input (by the iteration number or a counter from 0 by 1), is
// autoregressive, or scans an input forward; else not, with the reason — a constant trip count (the
// fixed-length case `--time-axis` fixes, with what it would change), a while loop, no trip count, a counter
// that starts elsewhere or is used after the loop, the iteration number used for more than indexing,
// reverse scans, inputs that are not graph inputs, a collector that starts with items, a loop nested in
// another loop's body, and what loop_chunks finds around it. Models as ONNX text.

#include "loops/loop_streaming.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <limits>

#include "find/analysis.h"
#include "find/analyze_text.h"
#include "graph/control_flow.h"
#include "graph/model_index.h"
#include "loop_text.h"
#include "loops/carried_variables.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate {

// For gtest's messages (found by argument-dependent lookup).
static void PrintTo(const TimeRef& time, std::ostream* os) { *os << time.Text(); }

}  // namespace rnnstate

namespace rnnstate::loop_streaming_test {
namespace {

using namespace test_names;

/// Judges the Loop or Scan at `node` of the graph at `path` (the first Loop or Scan of the main graph by
/// default).
LoopVerdict Judge(const std::string& text, GraphPath path = {}, int node = -1,
                  const std::function<void(onnx::ModelProto&)>& patch = {}) {
  onnx::ModelProto model = ParseModel(text);
  if (patch) patch(model);
  ModelIndex index(model);
  for (int n = 0; node < 0 && n < model.graph().node_size(); ++n) {
    const std::string& op = model.graph().node(n).op_type();
    if (op == "Loop" || op == "Scan") node = n;
  }
  const std::optional<LoopAnatomy> loop = ReadLoop(index, path, node, {});
  if (!loop) throw std::runtime_error("not a Loop or Scan");
  return JudgeLoop(index, *loop);
}

/// A Loop over x [seq, batch, 3]: h = tanh(x[i] W + h U) with `extra` defining s from s0; `trip_def`
/// defines its trip count `trip` (absent when `trip` is ""), `read` reads x_t.
std::string Walk(const std::string& trip_def = "trip = Gather <axis = 0> (shape, zero)",
                 const std::string& trip = "trip", const std::string& extra = "s = Identity (s0)",
                 const std::string& read = "x_t = Gather <axis = 0> (x, i)") {
  return R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 3] x, float[3, 4] W, float[4, 4] U, int64 M) => (float[batch, 4] h_n, float[seq, batch, 4] ys) {
)" + LoopZerosOfTheBatch(4) +
         "  " + trip_def + R"(
  h_n, ys = Loop ()" +
         trip +
         R"(, , h0) <body = body (int64 i, bool cond, float[batch, 4] h) => (bool cond_out, float[batch, 4] h_next, float[batch, 4] y_t) {
    )" + read +
         R"(
    xw = MatMul (x_t, W)
    hu = MatMul (h, U)
    s0 = Add (xw, hu)
    )" + extra +
         R"(
    h_next = Tanh (s)
    y_t = Identity (h_next)
    cond_out = Identity (cond)
  }>
})";
}

TEST(LoopStreaming, ALoopWalkingAnInputsTimeAxisStreams) {
  const LoopVerdict verdict = Judge(Walk());
  EXPECT_TRUE(verdict.streamable) << verdict.reason;
  EXPECT_EQ(verdict.reason, "");
  EXPECT_EQ(verdict.walk, "walks x:0");
  EXPECT_FALSE(verdict.fixed.has_value());
  // The read at i and the trip count's length: both x:0.
  EXPECT_THAT(verdict.times, ElementsAre(TimeRef{"x", 0}, TimeRef{"x", 0}));
}

TEST(LoopStreaming, WhatTheLoopTakesFromOutsideMustBeTheSameInEveryChunk) {
  // The cell divides by the length of x (computed outside): every chunk has its own.
  const LoopVerdict verdict =
      Judge(Walk("trip = Gather <axis = 0> (shape, zero)\n  lf = Cast <to = 1> (trip)", "trip", "s = Div (s0, lf)"));
  EXPECT_FALSE(verdict.streamable);
  EXPECT_THAT(verdict.reason, HasSubstr("the length of 'x'"));
}

TEST(LoopStreaming, TheIterationNumberUsedForMoreThanIndexingRestartsEveryCall) {
  const LoopVerdict verdict =
      Judge(Walk("trip = Gather <axis = 0> (shape, zero)", "trip", "fi = Cast <to = 1> (i)\n    s = Add (s0, fi)"));
  EXPECT_FALSE(verdict.streamable);
  EXPECT_THAT(verdict.reason, HasSubstr("uses the iteration number for more than indexing the time input"));
}

TEST(LoopStreaming, AnAutoregressiveLoopStreamsWhenItReadsNoStep) {
  // Trip count M (a graph input), x read at a fixed frame only: the caller says how many steps.
  const LoopVerdict verdict = Judge(Walk("", "M", "s = Identity (s0)", "x_t = Gather <axis = 0> (x, zero)"));
  EXPECT_TRUE(verdict.streamable) << verdict.reason;
  EXPECT_EQ(verdict.walk, "autoregressive: trip count 'M'");
  EXPECT_THAT(verdict.times, IsEmpty());
  // Reading x at i with a trip count that is not x's length: the steps and the reads disagree.
  const LoopVerdict reads = Judge(Walk("", "M"));
  EXPECT_FALSE(reads.streamable);
  EXPECT_THAT(reads.reason, HasSubstr("reads x:0 at the iteration index, but the trip count 'M' is not its length"));
}

TEST(LoopStreaming, ConstantAbsentAndOtherTripCountsDoNotStream) {
  const LoopVerdict five = Judge(Walk("trip = Constant <value = int64 {5}> ()"));
  EXPECT_FALSE(five.streamable);
  // x's time axis is symbolic: no fixed length to replace.
  EXPECT_EQ(five.reason, "the trip count is the constant 5: every call runs 5 iterations");
  EXPECT_FALSE(five.fixed.has_value());
  const LoopVerdict forever = Judge(Walk("trip = Constant <value = int64 {9223372036854775807}> ()"));
  EXPECT_THAT(forever.reason, HasSubstr("a while loop (trip count INT64_MAX)"));
  // onnx 1.12's text syntax cannot leave the first input out: M, then removed.
  const LoopVerdict absent = Judge(Walk("", "M"), {}, -1, [](onnx::ModelProto& model) {
    testing::NodeOfType(*model.mutable_graph(), "Loop").set_input(0, "");
  });
  EXPECT_FALSE(absent.streamable);
  EXPECT_EQ(absent.reason, "no trip count: the loop runs until its condition ends it");
  const LoopVerdict other = Judge(Walk("trip = Abs (M)"));
  EXPECT_FALSE(other.streamable);
  EXPECT_EQ(other.reason, "the trip count (Abs '') is neither a graph input's length nor a graph input");
}

TEST(LoopStreaming, TheBodyMustReadAGraphInputAtTheIndex) {
  // xm = x W outside, read at i: computed from x, but not step by step in a way TraceToInput follows.
  const LoopVerdict verdict = Judge(
      Walk("trip = Gather <axis = 0> (shape, zero)\n  w3 = Constant <value = float[3, 3] {1,0,0,0,1,0,0,0,1}> ()\n"
           "  xm = MatMul (x, w3)",
           "trip", "s = Identity (s0)", "x_t = Gather <axis = 0> (xm, i)"));
  EXPECT_FALSE(verdict.streamable);
  EXPECT_THAT(verdict.reason, HasSubstr("the body reads 'xm' at the iteration index, and it is not a graph input"));
}

/// tf2onnx's Loop over axis 1 of x [batch, 6, 3]: trip count M = `trip`, counter t from `start` by 1,
/// condition t + 1 < bound (before the loop: start < bound), the bound `trip` unless given; `after` adds
/// main-graph nodes.
std::string Tf2onnx(int trip, int start = 0, const std::string& after = "", int bound = -1) {
  return R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, 6, 3] x, float[batch, 3] h0) => (float[batch, 3] h_n) {
  M = Constant <value = int64 {)" +
         std::to_string(trip) + R"(}> ()
  bound = Constant <value = int32 {)" +
         std::to_string(bound < 0 ? trip : bound) + R"(}> ()
  t0 = Constant <value = int32 {)" +
         std::to_string(start) + R"(}> ()
  cond0 = Less (t0, bound)
  t_n, h_n = Loop (M, cond0, t0, h0) <body = body (int64 i, bool c, int32 t, float[batch, 3] h) => (bool c_out, int32 t_next, float[batch, 3] h_next) {
)" + AddCellAtInt32CounterText() +
         R"(    c_out = Less (t_next, bound)
  }>
  )" + after +
         R"(
})";
}

bool Has(const std::vector<ValueRef>& values, const std::string& name) {
  for (const ValueRef& value : values) {
    if (value.name == name && value.graph.empty()) return true;
  }
  return false;
}

TEST(LoopStreaming, AConstantTripCountEqualToTheStaticLengthIsWhatTimeAxisFixes) {
  const LoopVerdict verdict = Judge(Tf2onnx(6));
  EXPECT_FALSE(verdict.streamable);
  EXPECT_EQ(verdict.reason,
            "fixed sequence length: the trip count is the constant 6, the static length of x:1; rewrite with "
            "--time-axis x:1 to stream chunks of any length");
  EXPECT_EQ(verdict.walk, "walks x:1 (fixed length 6)");
  ASSERT_TRUE(verdict.fixed.has_value());
  EXPECT_EQ(verdict.fixed->time, (TimeRef{"x", 1}));
  EXPECT_EQ(verdict.fixed->length, 6);
  // The trip count and the condition's bound: what --time-axis replaces by the fed length.
  EXPECT_TRUE(Has(verdict.fixed->constants, "M"));
  EXPECT_TRUE(Has(verdict.fixed->constants, "bound"));
  EXPECT_THAT(verdict.times, ElementsAre(TimeRef{"x", 1}));
}

TEST(LoopStreaming, AConstantTripCountOfAnotherLengthIsNotFixedLength) {
  // 5 steps over an axis of 6: not the input's length.
  const LoopVerdict verdict = Judge(Tf2onnx(5));
  EXPECT_FALSE(verdict.streamable);
  EXPECT_EQ(verdict.reason, "the trip count is the constant 5: every call runs 5 iterations");
  EXPECT_FALSE(verdict.fixed.has_value());
  // 6 steps, but a condition that may end the loop after 5.
  const LoopVerdict early = Judge(Tf2onnx(6, 0, "", /*bound=*/5));
  EXPECT_FALSE(early.streamable);
  EXPECT_EQ(early.reason, "the loop's condition is neither always true nor the end of its trip count");
  EXPECT_FALSE(early.fixed.has_value());
}

TEST(LoopStreaming, ACounterMustStartAtZeroAndEndWithTheLoop) {
  const LoopVerdict late = Judge(Tf2onnx(6, /*start=*/1));
  EXPECT_FALSE(late.streamable);
  EXPECT_EQ(late.reason, "counter 't' indexes 'x' but does not start at 0 stepping by 1");
  const LoopVerdict used = Judge(Tf2onnx(6, 0, "t_used = Cast <to = 1> (t_n)"));
  EXPECT_FALSE(used.streamable);
  EXPECT_EQ(used.reason, "the final value of counter 't' is used after the loop");
}

/// Makes Collecting's ys a sequence of float tensors (onnx 1.12's text syntax has no sequence types).
void MakeYsSequence(onnx::ModelProto& model) {
  onnx::GraphProto& body = *testing::NodeOfType(*model.mutable_graph(), "Loop").mutable_attribute(0)->mutable_g();
  for (auto* value : {body.mutable_input(3), body.mutable_output(2)}) {
    onnx::TypeProto type;
    type.mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    *value->mutable_type() = type;
  }
}

LoopVerdict JudgeCollecting(const std::string& text) { return Judge(text, {}, -1, MakeYsSequence); }

/// A Loop over x collecting h in a carried sequence that starts as `initial` (SequenceEmpty or not).
std::string Collecting(const std::string& initial, const std::string& read = "") {
  return R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 3] x, float[batch, 3] h0) => (float[batch, 3] h_n) {
  shape = Shape (x)
  zero = Constant <value = int64 {0}> ()
  len = Gather <axis = 0> (shape, zero)
  )" + initial +
         R"(
  h_n, ys_n = Loop (len, , h0, ys0) <body = body (int64 i, bool c, float[batch, 3] h, float[batch, 3] ys) => (bool c_out, float[batch, 3] h_next, float[batch, 3] ys_next) {
    x_t = Gather <axis = 0> (x, i)
    s = Add (h, x_t)
    h_next = Tanh (s)
    ys_next = SequenceInsert (ys, h_next)
    )" + read +
         R"(
    c_out = Identity (c)
  }>
})";
}

TEST(LoopStreaming, CollectorsMustStartEmptyAndOnlyCollect) {
  const LoopVerdict empty = JudgeCollecting(Collecting("ys0 = SequenceEmpty <dtype = 1> ()"));
  EXPECT_TRUE(empty.streamable) << empty.reason;
  const LoopVerdict seeded = JudgeCollecting(Collecting("ys0 = SequenceConstruct (h0)"));
  EXPECT_FALSE(seeded.streamable);
  EXPECT_EQ(seeded.reason,
            "collector 'ys' starts with the items of 'ys0', not SequenceEmpty: every chunk would repeat them");
  const LoopVerdict read = JudgeCollecting(Collecting("ys0 = SequenceEmpty <dtype = 1> ()", "n = SequenceLength (ys)"));
  EXPECT_FALSE(read.streamable);
  EXPECT_THAT(read.reason, HasSubstr("carried 'ys' recurs in a way rnnstate cannot classify"));
}

TEST(LoopStreaming, ALoopInsideAnotherLoopsBodyRestartsEveryIteration) {
  const std::string text = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, 3] h0, int64 M) => (float[batch, 3] h_n) {
  h_n = Loop (M, , h0) <body = outer (int64 j, bool c, float[batch, 3] g) => (bool c_out, float[batch, 3] g_next) {
    three = Constant <value = int64 {3}> ()
    g_next = Loop (three, , g) <body = inner (int64 k, bool d, float[batch, 3] h) => (bool d_out, float[batch, 3] h_next) {
      h_next = Tanh (h)
      d_out = Identity (d)
    }>
    c_out = Identity (c)
  }>
})";
  const LoopVerdict inner = Judge(text, GraphPath{GraphStep{0, kBody, -1}}, 1);
  EXPECT_FALSE(inner.streamable);
  EXPECT_THAT(inner.reason, HasSubstr("it runs inside the body of"));
  EXPECT_THAT(inner.reason, HasSubstr("which restarts it on every iteration"));
  const LoopVerdict outer = Judge(text);
  EXPECT_TRUE(outer.streamable) << outer.reason;
  EXPECT_EQ(outer.walk, "autoregressive: trip count 'M'");
}

/// A Scan-9+ over `scanned` (x or a value of the main graph) with the given attributes.
std::string Scanning(const std::string& attributes = "", const std::string& scanned = "x",
                     const std::string& before = "") {
  return R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 3] x, float[batch, 3] h0) => (float[batch, 3] h_n, float[seq, batch, 3] ys) {
  )" + before +
         R"(
  h_n, ys = Scan <num_scan_inputs = 1, )" +
         attributes +
         R"(body = body (float[batch, 3] h, float[batch, 3] x_t) => (float[batch, 3] h_next, float[batch, 3] y) {
    s = Add (h, x_t)
    h_next = Tanh (s)
    y = Identity (h_next)
  }> (h0, )" +
         scanned + R"()
})";
}

TEST(LoopStreaming, AScanForwardOverAnInputStreams) {
  const LoopVerdict verdict = Judge(Scanning());
  EXPECT_TRUE(verdict.streamable) << verdict.reason;
  EXPECT_EQ(verdict.walk, "scans x:0");
  EXPECT_THAT(verdict.times, ElementsAre(TimeRef{"x", 0}));
  // Computed from x step by step (a Transpose moving the axis) still scans x.
  const LoopVerdict moved = Judge(Scanning("", "xt", "xt = Transpose <perm = [1, 0, 2]> (x)"));
  EXPECT_TRUE(moved.streamable) << moved.reason;
  EXPECT_EQ(moved.walk, "scans x:1");
}

TEST(LoopStreaming, ReverseScansAndScansOfComputedValuesDoNot) {
  const LoopVerdict reverse = Judge(Scanning("scan_input_directions = [1], "));
  EXPECT_FALSE(reverse.streamable);
  EXPECT_EQ(reverse.reason, "it scans 'x' in reverse");
  const LoopVerdict backwards = Judge(Scanning("scan_output_directions = [1], "));
  EXPECT_FALSE(backwards.streamable);
  EXPECT_EQ(backwards.reason, "it writes scan output 0 in reverse");
  const LoopVerdict computed =
      Judge(Scanning("", "xm", "w3 = Constant <value = float[3, 3] {1,0,0,0,1,0,0,0,1}> ()\n  xm = MatMul (x, w3)"));
  EXPECT_FALSE(computed.streamable);
  EXPECT_EQ(computed.reason, "scan input 'xm' is not a graph input (nor computed from one step by step)");
  EXPECT_THAT(computed.times, IsEmpty());
}

// When a Loop's condition lets chunks stream: a condition that is always true, whether a Constant node or an
// initializer writes it, and one a caller can change; judged through the whole analysis.

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
  const Analysis analysis = AnalyzeText(
      ConditionedLoop("", "<bool cond0 = {1}>", "trip = Constant <value = int64 {9223372036854775807}> ()"));
  ASSERT_EQ(analysis.nodes.size(), 1u);
  EXPECT_FALSE(analysis.nodes[0].streamable);
  EXPECT_THAT(analysis.nodes[0].not_streamable_reason, HasSubstr("a while loop"));
}

}  // namespace
}  // namespace rnnstate::loop_streaming_test
