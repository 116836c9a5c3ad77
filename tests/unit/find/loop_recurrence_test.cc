// Loop-carried recurrences over hand-written cells (loop_recurrence, carried_variables, loop_streaming):
// which carried variables are states, which are not and why, and when chunks stream. Models as ONNX text.

#include "find/loop_recurrence.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "find/analysis.h"
#include "find/analyze_text.h"
#include "graph/model_index.h"
#include "pipeline_stages.h"
#include "test_models.h"
#include "test_names.h"
#include "views/check.h"

namespace rnnstate::loop_recurrence_test {
namespace {

using namespace test_names;

/// A tf2onnx-style Loop over axis 0 of x: carried counter t (indexes x), weight U (passed through), state h
/// (the Loop is node 9, "Loop_9"). `trip` defines the trip count, `h_next` computes h_next from `cell`.
std::string TimeLoop(const std::string& trip, const std::string& h_next = "h_next = Tanh (cell)",
                     const std::string& x_type = "float[seq, batch, 3]") {
  return R"(<ir_version: 8, opset_import: ["" : 14]>
g ()" + x_type +
         R"( x, float[3, 4] W, float[4, 4] U0) => (float[batch, 4] h_n, float[seq, batch, 4] ys) {
)" + LoopZerosOfTheBatch(4) +
         "  " + trip + R"(
  t0 = Constant <value = int64 {0}> ()
  t_n, U_n, h_n, ys = Loop (trip, , t0, U0, h0) <body = body (int64 i, bool cond, int64 t, float[4, 4] U, float[batch, 4] h)
      => (bool cond_out, int64 t_next, float[4, 4] U_out, float[batch, 4] h_next, float[batch, 4] y) {
    x_t = Gather <axis = 0> (x, t)
    xw = MatMul (x_t, W)
    hu = MatMul (h, U)
    cell = Add (xw, hu)
    )" + h_next +
         R"(
    step = Constant <value = int64 {1}> ()
    t_next = Add (t, step)
    U_out = Identity (U)
    y = Identity (h_next)
    cond_out = Identity (cond)
  }>
})";
}

std::vector<std::string> Notes(const Analysis& analysis) {
  std::vector<std::string> out;
  for (const auto& note : analysis.notes) out.push_back(note.variable + ": " + note.reason);
  return out;
}

TEST(LoopRecurrence, CarriedStateIsFoundAndCounterAndWeightsAreNot) {
  const Analysis analysis = AnalyzeText(TimeLoop(kLengthTrip));
  ASSERT_EQ(analysis.nodes.size(), 1u);
  EXPECT_EQ(analysis.nodes[0].op, "Loop");
  EXPECT_EQ(analysis.nodes[0].walk, "walks x:0");
  EXPECT_TRUE(analysis.nodes[0].streamable) << analysis.nodes[0].not_streamable_reason;
  ASSERT_EQ(analysis.states.size(), 1u);
  const RecurrentState& h = analysis.states[0].state;
  EXPECT_EQ(h.kind, StateKind::kCarried);
  EXPECT_EQ(h.variable, "h");
  EXPECT_EQ(h.initial_slot, 4);  // M, cond, t0, U0, h0
  EXPECT_EQ(h.final_slot, 2);
  EXPECT_EQ(ShapeText(h.shape), "[batch,4]");
  EXPECT_EQ(h.batch_axis, 0);
  EXPECT_EQ(h.batch_source.value, "x");
  EXPECT_EQ(h.batch_source.axis, 1);
  EXPECT_TRUE(analysis.states[0].origin.zero);
  EXPECT_THAT(Notes(analysis),
              ElementsAre("t: an iteration counter (v + constant)", "U: passed through unchanged (loop-invariant)"));
  EXPECT_FALSE(analysis.notes[0].Warns());
  EXPECT_THAT(CheckWarnings(analysis), IsEmpty());
}

TEST(LoopRecurrence, IterationNumberUsedInTheCellIsNotStreamable) {
  // Negative control: the ONNX iteration number feeds the state (a chunk restarts it at 0).
  const Analysis analysis = AnalyzeText(TimeLoop(kLengthTrip, R"(f = Cast <to = 1> (i)
    drift = Add (cell, f)
    h_next = Tanh (drift))"));
  ASSERT_EQ(analysis.nodes.size(), 1u);
  EXPECT_FALSE(analysis.nodes[0].streamable);
  EXPECT_THAT(analysis.nodes[0].not_streamable_reason, HasSubstr("uses the iteration number"));
  ASSERT_EQ(analysis.states.size(), 1u);  // still a state: exposed, marked not streamable
  EXPECT_FALSE(analysis.states[0].state.streamable);
}

TEST(LoopRecurrence, CounterUsedBeyondIndexingIsAState) {
  // t feeds the cell (a position): fed back, it carries on from chunk to chunk, so it is a state.
  const Analysis analysis = AnalyzeText(TimeLoop(kLengthTrip, R"(f = Cast <to = 1> (t)
    drift = Add (cell, f)
    h_next = Tanh (drift))"));
  ASSERT_EQ(analysis.states.size(), 2u);
  EXPECT_EQ(analysis.states[0].state.variable, "t");
  EXPECT_EQ(analysis.states[1].state.variable, "h");
  // ... but as the Gather index it no longer restarts with the chunk: reading x[t] is not provable.
  EXPECT_FALSE(analysis.nodes[0].streamable);
}

TEST(LoopRecurrence, ConstantTripCountEqualToTheStaticLengthNeedsTimeAxis) {
  const Analysis analysis =
      AnalyzeText(TimeLoop("trip = Constant <value = int64 {6}> ()", "h_next = Tanh (cell)", "float[6, batch, 3]"));
  ASSERT_EQ(analysis.nodes.size(), 1u);
  EXPECT_FALSE(analysis.nodes[0].streamable);
  EXPECT_THAT(analysis.nodes[0].not_streamable_reason, HasSubstr("--time-axis x:0"));
  const Analysis other =
      AnalyzeText(TimeLoop("trip = Constant <value = int64 {5}> ()", "h_next = Tanh (cell)", "float[6, batch, 3]"));
  EXPECT_THAT(other.nodes[0].not_streamable_reason, HasSubstr("the trip count is the constant 5"));
}

TEST(LoopRecurrence, AutoregressiveLoopStreams) {
  const Analysis analysis = AnalyzeText(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, 4] context, int64 steps, float[4, 4] U) => (float[batch, 4] h_n, float[seq, batch, 4] ys) {
  h0 = Identity (context)
  h_n, ys = Loop (steps, , h0) <body = body (int64 i, bool cond, float[batch, 4] h) => (bool cond_out, float[batch, 4] h_next, float[batch, 4] y) {
    hu = MatMul (h, U)
    s = Add (hu, context)
    h_next = Tanh (s)
    y = Identity (h_next)
    cond_out = Identity (cond)
  }>
})");
  ASSERT_EQ(analysis.nodes.size(), 1u);
  EXPECT_TRUE(analysis.nodes[0].streamable) << analysis.nodes[0].not_streamable_reason;
  EXPECT_EQ(analysis.nodes[0].walk, "autoregressive: trip count 'steps'");
  EXPECT_EQ(analysis.states[0].state.batch_source.value, "context");
}

TEST(LoopRecurrence, ScanOverAnInputStreamsUnlessReversed) {
  const std::string scan = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 4] x, float[batch, 4] h0) => (float[batch, 4] h_n, float[seq, batch, 4] ys) {
  xs = Relu (x)
  h_n, ys = Scan <num_scan_inputs = 1DIRECTIONS, body = body (float[batch, 4] h, float[batch, 4] x_t) => (float[batch, 4] h_next, float[batch, 4] y) {
    s = Add (h, x_t)
    h_next = Tanh (s)
    y = Identity (h_next)
  }> (h0, xs)
})";
  auto with = [&](const std::string& directions) {
    std::string text = scan;
    text.replace(text.find("DIRECTIONS"), 10, directions);
    return AnalyzeText(text);
  };
  const Analysis forward = with("");
  ASSERT_EQ(forward.nodes.size(), 1u);
  EXPECT_TRUE(forward.nodes[0].streamable) << forward.nodes[0].not_streamable_reason;
  EXPECT_EQ(forward.nodes[0].walk, "scans x:0");
  EXPECT_TRUE(forward.states[0].exposed);  // h0 a graph input used only here, h_n a graph output
  const Analysis reverse = with(", scan_input_directions = [1]");
  EXPECT_FALSE(reverse.nodes[0].streamable);
  EXPECT_THAT(reverse.nodes[0].not_streamable_reason, HasSubstr("in reverse"));
}

TEST(LoopRecurrence, ScanBodyReadingTheWholeInputIsNotStreamable) {
  const Analysis analysis = AnalyzeText(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 4] x, float[batch, 4] h0) => (float[batch, 4] h_n, float[seq, batch, 4] ys) {
  first = Constant <value = int64 {0}> ()
  x0 = Gather <axis = 0> (x, first)
  h_n, ys = Scan <num_scan_inputs = 1, body = body (float[batch, 4] h, float[batch, 4] x_t) => (float[batch, 4] h_next, float[batch, 4] y) {
    s = Add (h, x_t)
    d = Sub (s, x0)
    h_next = Tanh (d)
    y = Identity (h_next)
  }> (h0, x)
})");
  ASSERT_EQ(analysis.nodes.size(), 1u);
  EXPECT_FALSE(analysis.nodes[0].streamable);
  EXPECT_THAT(analysis.nodes[0].not_streamable_reason, HasSubstr("'x0'"));
}

TEST(LoopRecurrence, LoopCarryingAGruStateLeavesItToTheGru) {
  const Analysis analysis = AnalyzeText(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, 2] context, int64 steps, float[1, 9, 2] W, float[1, 9, 3] R, float[1, batch, 3] h0) => (float[1, batch, 3] h_n) {
  zero = Constant <value = int64[1] {0}> ()
  h_n = Loop (steps, , h0) <body = body (int64 i, bool cond, float[1, batch, 3] h_prev) => (bool cond_out, float[1, batch, 3] h_next) {
    xs = Unsqueeze (context, zero)
    Y, h_next = GRU <hidden_size = 3> (xs, W, R, , , h_prev)
    cond_out = Identity (cond)
  }>
})");
  ASSERT_EQ(analysis.nodes.size(), 1u);
  EXPECT_EQ(analysis.nodes[0].op, "GRU");
  EXPECT_THAT(analysis.notes, IsEmpty());
}

TEST(LoopRecurrence, SequenceCollectorIsNotAStateAndAGrowingTensorIsWarnedAbout) {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 4] x) => (float[batch, 4] acc_n, float[unk, batch, 4] grown) {
  shape = Shape (x)
  zero = Constant <value = int64 {0}> ()
  trip = Gather <axis = 0> (shape, zero)
  acc0 = Gather <axis = 0> (x, zero)
  empty = SequenceEmpty ()
  zero1 = Constant <value = int64[1] {0}> ()
  g0 = Unsqueeze (acc0, zero1)
  acc_n, seq_n, grown = Loop (trip, , acc0, empty, g0) <body = body (int64 i, bool cond, float[batch, 4] acc, float[batch, 4] s, float[unk, batch, 4] g)
      => (bool cond_out, float[batch, 4] acc_next, float[batch, 4] s_next, float[unk, batch, 4] g_next) {
    x_t = Gather <axis = 0> (x, i)
    acc_next = Add (acc, x_t)
    s_next = SequenceInsert (s, x_t)
    x_u = Unsqueeze (x_t, zero1)
    g_next = Concat <axis = 0> (g, x_u)
    cond_out = Identity (cond)
  }>
})");
  // The text syntax of onnx 1.12 has no sequence types: s and s_next become seq(float) here.
  onnx::GraphProto& body = *testing::NodeOfType(*model.mutable_graph(), "Loop").mutable_attribute(0)->mutable_g();
  for (auto* value : {body.mutable_input(3), body.mutable_output(2)}) {
    onnx::TypeProto type;
    type.mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    *value->mutable_type() = type;
  }
  ModelIndex index(model);
  const Analysis analysis = Analyze(index);
  ASSERT_EQ(analysis.states.size(), 1u);
  EXPECT_EQ(analysis.states[0].state.variable, "acc");
  EXPECT_THAT(Notes(analysis), ElementsAre("s: a sequence collecting per-step values",
                                           "g: grows every iteration (Concat with its previous value)"));
  EXPECT_EQ(analysis.notes[1].kind, StateNote::Kind::kUnclassified);
  EXPECT_THAT(CheckWarnings(analysis), ElementsAre(HasSubstr("Loop 'Loop_7' carried 'g': recurs, but not classified")));
}

TEST(LoopRecurrence, RewriteExposesTheStateWithKindStateAndItsVariable) {
  onnx::ModelProto model = ParseModel(TimeLoop(kLengthTrip));
  {
    ModelIndex index(model);
    const auto problems = CheckModel(index, Analyze(index));
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(problems[0].kind, CheckProblem::Kind::kNotExposed);
    EXPECT_THAT(problems[0].message, HasSubstr("carried variable 'h' is not exposed"));
  }
  RewriteModel(model, PlanOptions{}, /*strict=*/true);
  const auto pairs = RecordedPairs(model);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].kind, "state");
  EXPECT_EQ(pairs[0].variable, "h");
  EXPECT_EQ(pairs[0].node, "Loop_9");
  EXPECT_EQ(pairs[0].input, "Loop_9.h_in");
  EXPECT_EQ(pairs[0].output, "h_n");
  EXPECT_TRUE(pairs[0].streamable);
  EXPECT_EQ(testing::DeclaredShape(model.graph(), "Loop_9.h_in"), "[batch,4]");
  // The Loop reads the new input (zeros [1,4] broadcast to the batch of x when not fed).
  const onnx::NodeProto& loop = testing::NodeOfType(model.graph(), "Loop");
  EXPECT_EQ(loop.input(4), "Loop_9.h_in.expanded");
  ModelIndex index(model);
  EXPECT_THAT(CheckModel(index, Analyze(index)), IsEmpty());
  // A second rewrite changes nothing.
  const std::string once = testing::Bytes(model);
  RewriteModel(model, PlanOptions{}, /*strict=*/true);
  EXPECT_EQ(testing::Bytes(model), once);
}

TEST(LoopRecurrence, ALoopInsideALoopBodyLeavesTheStateToTheOuterLoop) {
  // The inner loop refines h twice per time step: it restarts from the outer h every step, so the state is
  // the outer loop's h (computed through the inner loop), and the inner variable is noted, not exposed.
  const Analysis analysis = AnalyzeText(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 4] x, float[4, 4] U) => (float[batch, 4] h_n) {
  shape = Shape (x)
  zero = Constant <value = int64 {0}> ()
  trip = Gather <axis = 0> (shape, zero)
  h0 = Gather <axis = 0> (x, zero)
  two = Constant <value = int64 {2}> ()
  h_n = Loop (trip, , h0) <body = outer (int64 i, bool c, float[batch, 4] h) => (bool c_out, float[batch, 4] h_next) {
    x_t = Gather <axis = 0> (x, i)
    h_in = Add (h, x_t)
    h_next = Loop (two, , h_in) <body = inner (int64 j, bool d, float[batch, 4] g) => (bool d_out, float[batch, 4] g_next) {
      gu = MatMul (g, U)
      g_next = Tanh (gu)
      d_out = Identity (d)
    }>
    c_out = Identity (c)
  }>
})");
  ASSERT_EQ(analysis.nodes.size(), 1u);
  EXPECT_EQ(analysis.nodes[0].name, "Loop_5");
  EXPECT_TRUE(analysis.nodes[0].streamable) << analysis.nodes[0].not_streamable_reason;
  ASSERT_EQ(analysis.states.size(), 1u);
  EXPECT_EQ(analysis.states[0].state.variable, "h");
  EXPECT_THAT(Notes(analysis), ElementsAre("g: recurs within one iteration of Loop 'Loop_5', which restarts it; that "
                                           "loop carries what persists"));
}

/// A Loop over axis 0 of x carrying `carried` (body inputs after i and cond) with the body `nodes`; h0 zeros
/// [batch, 4] and prev0 zeros [batch, 3] from the batch of x; outputs h_n (when carried) and y.
std::string DelayLoop(const std::string& carried_in, const std::string& carried_out, const std::string& inits,
                      const std::string& finals, const std::string& nodes) {
  return R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 3] x, float[3, 4] W, float[4, 4] U, float[3, 4] V) => (float[seq, batch, 4] y) {
  shape = Shape (x)
  zero = Constant <value = int64 {0}> ()
  one = Constant <value = int64[1] {1}> ()
  trip = Gather <axis = 0> (shape, zero)
  b = Gather <axis = 0> (shape, one)
  four = Constant <value = int64[1] {4}> ()
  three = Constant <value = int64[1] {3}> ()
  hdims = Concat <axis = 0> (b, four)
  pdims = Concat <axis = 0> (b, three)
  h0 = ConstantOfShape (hdims)
  prev0 = ConstantOfShape (pdims)
  )" + finals +
         R"(, y = Loop (trip, , )" + inits + R"() <body = body (int64 i, bool cond, )" + carried_in +
         R"() => (bool cond_out, )" + carried_out + R"(, float[batch, 4] y_t) {
    x_t = Gather <axis = 0> (x, i)
    )" + nodes +
         R"(
    cond_out = Identity (cond)
  }>
})";
}

TEST(LoopRecurrence, ADelayLineReadByTheCellIsAState) {
  // prev' = x[t] does not depend on prev, but the cell reads prev: its value crosses from one step to the
  // next (fed back, chunks stream). Before, "not a state": chunked y differed from one run.
  const Analysis analysis = AnalyzeText(DelayLoop("float[batch, 4] h, float[batch, 3] prev",
                                                  "float[batch, 4] h_next, float[batch, 3] prev_next", "h0, prev0",
                                                  "h_n, prev_n", R"(xw = MatMul (x_t, W)
    hu = MatMul (h, U)
    pv = MatMul (prev, V)
    s0 = Add (xw, hu)
    s = Add (s0, pv)
    h_next = Tanh (s)
    prev_next = Identity (x_t)
    y_t = Identity (h_next))"));
  ASSERT_EQ(analysis.states.size(), 2u);
  EXPECT_EQ(analysis.states[1].state.variable, "prev");
  EXPECT_EQ(ShapeText(analysis.states[1].state.shape), "[batch,3]");
  EXPECT_TRUE(analysis.nodes[0].streamable) << analysis.nodes[0].not_streamable_reason;
  EXPECT_THAT(analysis.notes, IsEmpty());
}

TEST(LoopRecurrence, ADelayLineAloneMakesTheLoopAnOwner) {
  // y_t = x[t] - prev, prev' = x[t]: no other recurrence. Before: "0 recurrent nodes, nothing to do", check
  // passed.
  const Analysis analysis = AnalyzeText(
      DelayLoop("float[batch, 3] prev", "float[batch, 3] prev_next", "prev0", "prev_n", R"(d = Sub (x_t, prev)
    y_t = MatMul (d, W)
    prev_next = Identity (x_t))"));
  ASSERT_EQ(analysis.nodes.size(), 1u);
  ASSERT_EQ(analysis.states.size(), 1u);
  EXPECT_EQ(analysis.states[0].state.variable, "prev");
  EXPECT_TRUE(analysis.nodes[0].streamable) << analysis.nodes[0].not_streamable_reason;
  // ... while a value recomputed every step and never read stays no state.
  const Analysis last = AnalyzeText(DelayLoop("float[batch, 3] prev", "float[batch, 3] prev_next", "prev0", "prev_n",
                                              R"(y_t = MatMul (x_t, W)
    prev_next = Identity (x_t))"));
  EXPECT_TRUE(last.states.empty());
  EXPECT_THAT(Notes(last), ElementsAre("prev: its next value does not depend on its previous one"));
}

TEST(LoopRecurrence, AScanDelayLineIsAState) {
  const Analysis analysis = AnalyzeText(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 3] x, float[batch, 4] h0, float[batch, 3] p0, float[3, 4] W) => (float[seq, batch, 4] ys) {
  h_n, p_n, ys = Scan <num_scan_inputs = 1, body = body (float[batch, 4] h, float[batch, 3] prev, float[batch, 3] x_t)
      => (float[batch, 4] h_next, float[batch, 3] prev_next, float[batch, 4] y) {
    pw = MatMul (prev, W)
    s = Add (h, pw)
    h_next = Tanh (s)
    prev_next = Identity (x_t)
    y = Identity (h_next)
  }> (h0, p0, x)
})");
  ASSERT_EQ(analysis.states.size(), 2u);
  EXPECT_EQ(analysis.states[1].state.variable, "prev");
  EXPECT_TRUE(analysis.nodes[0].streamable) << analysis.nodes[0].not_streamable_reason;
}

TEST(LoopRecurrence, Scan8StatesAreNotedAsUnclassified) {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 8]>
g (int64[1] lens, float[1, 2] initial, float[1, 3, 2] x) => (float[1, 2] y, float[1, 3, 2] z) {
  y, z = Scan <num_scan_inputs = 1, body = body (float[2] sum_in, float[2] next) => (float[2] sum_out, float[2] scan_out) {
    sum_out = Add (sum_in, next)
    scan_out = Identity (sum_out)
  }> (lens, initial, x)
})");
  testing::NodeOfType(*model.mutable_graph(), "Scan").set_input(0, "");  // no sequence_lens, as in ONNX's test
  ModelIndex index(model);
  const Analysis analysis = Analyze(index);
  EXPECT_THAT(analysis.nodes, IsEmpty());
  ASSERT_EQ(analysis.notes.size(), 1u);
  EXPECT_EQ(analysis.notes[0].variable, "sum_in");
  EXPECT_TRUE(analysis.notes[0].Warns());
}

}  // namespace
}  // namespace rnnstate::loop_recurrence_test
