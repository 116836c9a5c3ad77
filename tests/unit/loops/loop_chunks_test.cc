// Whether a loop over a hand-written cell streams (loop_streaming, loop_chunks, chunk_dependence): what it
// takes from outside must be the same in every chunk, what leaves it along time must stay time-local, and
// its collectors must only collect. Each model here is one the audit of issue 10 found called streamable
// although ONNX Runtime's chunked runs differed from one run; the controls stream. Models as ONNX text.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "find/analysis.h"
#include "graph/model_index.h"
#include "loop_text.h"
#include "test_models.h"
#include "test_names.h"
#include "views/check.h"

namespace rnnstate::loop_chunks_test {
namespace {

using namespace test_names;

/// A Loop over axis 0 of x: h = tanh(x[t] W + h U) `extra`, h0 zeros of the batch, y the per-step h.
/// `before` adds main-graph nodes, `after` computes the graph outputs y and h_n from ys and h_end.
std::string Walk(const std::string& extra, const std::string& before = "",
                 const std::string& after = "y = Identity (ys)\n  h_n = Identity (h_end)") {
  return R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 3] x, float[3, 4] W, float[4, 4] U) => (float[seq, batch, 4] y, float[batch, 4] h_n) {
)" + std::string(testing::kLoopOverAxis0Start) +
         R"(
  )" + before +
         R"(
  h_end, ys = Loop (trip, , h0) <body = body (int64 i, bool cond, float[batch, 4] h) => (bool cond_out, float[batch, 4] h_next, float[batch, 4] y_t) {
)" + TanhCell().Sum("s0").Then(extra, "s").Text() +
         R"(
    y_t = Identity (h_next)
    cond_out = Identity (cond)
  }>
  )" + after +
         R"(
})";
}

RecurrentNode OnlyNode(const std::string& text) {
  onnx::ModelProto model = ParseModel(text);
  ModelIndex index(model);
  const Analysis analysis = Analyze(index);
  if (analysis.nodes.size() != 1) throw std::runtime_error("expected one owner");
  return analysis.nodes[0];
}

/// Expects the only node of `text` not streamable and returns why.
std::string WhyNotStreamable(const std::string& text) {
  const RecurrentNode node = OnlyNode(text);
  EXPECT_FALSE(node.streamable);
  return node.not_streamable_reason;
}

/// ONNX text: the length of x's time axis as a float, `lf`, read in a loop's body (`xs`, `z` and `len` its
/// steps).
constexpr const char* kLengthOfXInTheBody = R"(xs = Shape (x)
    z = Constant <value = int64 {0}> ()
    len = Gather <axis = 0> (xs, z)
    lf = Cast <to = 1> (len))";

TEST(LoopChunks, TheControlStreams) {
  const RecurrentNode node = OnlyNode(Walk("s = Identity (s0)"));
  EXPECT_TRUE(node.streamable) << node.not_streamable_reason;
  // Reading the batch of x inside the body (zeros of its size) is the same in every chunk.
  const RecurrentNode batch = OnlyNode(Walk(R"(xs = Shape (x)
    k = Constant <value = int64[1] {1}> ()
    bb = Gather <axis = 0> (xs, k)
    f = Cast <to = 1> (bb)
    s = Add (s0, f))"));
  EXPECT_TRUE(batch.streamable) << batch.not_streamable_reason;
}

TEST(LoopChunks, TheLengthOfTheTimeInputReadInTheBodyIsNotStreamable) {
  // The cell uses 1 / len(x): each chunk sees its own length.
  EXPECT_THAT(
      WhyNotStreamable(Walk(std::string(kLengthOfXInTheBody) + "\n    inv = Reciprocal (lf)\n    s = Mul (s0, inv)")),
      HasSubstr("reads the length of 'x' along the time axis"));
}

TEST(LoopChunks, ASizeOfTheTimeInputComputedOutsideIsNotStreamable) {
  EXPECT_THAT(WhyNotStreamable(Walk("s = Div (s0, sf)", "n = Size (x)\n  sf = Cast <to = 1> (n)")),
              HasSubstr("the body reads 'sf', which depends on the length of 'x'"));
}

TEST(LoopChunks, ATimeReductionAfterTheLoopIsNotStreamable) {
  const std::string reduced =
      WhyNotStreamable(Walk("s = Identity (s0)", "", "y = ReduceMean <axes = [0]> (ys)\n  h_n = Identity (h_end)"));
  EXPECT_THAT(reduced, HasSubstr("reaches ReduceMean"));
  EXPECT_THAT(reduced, HasSubstr("reduces over the time axis"));
  // Time-local operators are fine: a projection, a Softmax over features, a Transpose.
  const RecurrentNode local = OnlyNode(Walk("s = Identity (s0)", "",
                                            R"(p = MatMul (ys, U)
  q = Softmax <axis = -1> (p)
  r = Transpose <perm = [1, 0, 2]> (q)
  y = Transpose <perm = [1, 0, 2]> (r)
  h_n = Identity (h_end))"));
  EXPECT_TRUE(local.streamable) << local.not_streamable_reason;
  // ... not mixed with the final state (the last step of each chunk).
  EXPECT_THAT(WhyNotStreamable(Walk("s = Identity (s0)", "", "y = Add (ys, h_end)\n  h_n = Identity (h_end)")),
              HasSubstr("differ per chunk"));
}

/// A Loop carrying h (a state, from `h_init`) and m (passed through, from `m_init`, subtracted from x[t]);
/// `nodes` computes the initial values in the main graph.
std::string CarriedFrom(const std::string& nodes, const std::string& h_init, const std::string& m_init) {
  return R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 3] x, float[batch, 4] hb, float[3, 4] W) => (float[batch, 4] h_n) {
  shape = Shape (x)
  zero = Constant <value = int64 {0}> ()
  trip = Gather <axis = 0> (shape, zero)
  )" + nodes +
         R"(
  h_n, m_n = Loop (trip, , )" +
         h_init + ", " + m_init + R"() <body = body (int64 i, bool cond, float[batch, 4] h, float[3] m)
      => (bool cond_out, float[batch, 4] h_next, float[3] m_out) {
    x_t = Gather <axis = 0> (x, i)
    d = Sub (x_t, m)
    dw = MatMul (d, W)
    s = Add (dw, h)
    h_next = Tanh (s)
    m_out = Identity (m)
    cond_out = Identity (cond)
  }>
})";
}

TEST(LoopChunks, InitialValuesFromTheWholeInputAreNotStreamable) {
  // A pass-through initialised from a mean over time (TF's while_v2 carries captured tensors this way):
  // read on every call, it differs per chunk.
  EXPECT_THAT(WhyNotStreamable(CarriedFrom("m0 = ReduceMean <axes = [0, 1], keepdims = 0> (x)", "hb", "m0")),
              HasSubstr("the initial value of carried 'm' depends on 'x'"));
  // Even from the first frame: a pass-through is read on every call, where x[0] is the chunk's.
  WhyNotStreamable(
      CarriedFrom("x0 = Gather <axis = 0> (x, zero)\n  m0 = ReduceMean <axes = [0], keepdims = 0> (x0)", "hb", "m0"));
  // A state's initial value is read on the first call only, whose first frame is the run's own.
  const RecurrentNode state = OnlyNode(CarriedFrom(
      "x0 = Gather <axis = 0> (x, zero)\n  h1 = MatMul (x0, W)\n  m0 = Gather <axis = 1> (W, zero)", "h1", "m0"));
  EXPECT_TRUE(state.streamable) << state.not_streamable_reason;
  // ... but not a mean over time.
  EXPECT_THAT(
      WhyNotStreamable(CarriedFrom(
          "xm = ReduceMean <axes = [0], keepdims = 0> (x)\n  h1 = MatMul (xm, W)\n  m0 = Gather <axis = 1> (W, zero)",
          "h1", "m0")),
      HasSubstr("the initial value of carried 'h' depends on 'x'"));
}

TEST(LoopChunks, AnInitialStateSelectedByAnIfIsFollowedIntoItsBranches) {
  // What a packed or required rewrite feeds a loop: If(fed empty, zeros of x's batch, the fed state). The
  // branch reads x's batch only: the same in every chunk (before following the branches, any If reading x
  // counted as a whole read, and a packed model's check failed "streamable is true but the node is not").
  const std::string select = R"(n = Size (hb)
  z0 = Constant <value = int64 {0}> ()
  empty = Equal (n, z0)
  h1 = If (empty) <then_branch = then () => (float[batch, 4] zt) {
)" + BatchZerosText("x", 1, 4, {"s", "one", "b", "four", "d", "zt"}) +
                             R"(
  }, else_branch = else () => (float[batch, 4] ze) {
    ze = Identity (hb)
  }>
  m0 = Gather <axis = 1> (W, zero))";
  const RecurrentNode node = OnlyNode(CarriedFrom(select, "h1", "m0"));
  EXPECT_TRUE(node.streamable) << node.not_streamable_reason;
  // A branch taken by the length of x is not.
  std::string by_length = select;
  by_length.replace(by_length.find("n = Size (hb)"), 13, "n = Size (x)");
  EXPECT_THAT(WhyNotStreamable(CarriedFrom(by_length, "h1", "m0")),
              HasSubstr("the initial value of carried 'h' depends on the length of 'x'"));
}

TEST(LoopChunks, ScanBodyReadingTheLengthOfTheScannedInputIsNotStreamable) {
  const std::string scan = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 4] x, float[batch, 4] h0) => (float[batch, 4] h_n, float[seq, batch, 4] ys) {
  h_n, ys = Scan <num_scan_inputs = 1, body = body (float[batch, 4] h, float[batch, 4] x_t) => (float[batch, 4] h_next, float[batch, 4] y) {
    )" + std::string(kLengthOfXInTheBody) +
                           R"(
    s0 = Add (h, x_t)
    s = Div (s0, lf)
    h_next = Tanh (s)
    y = Identity (h_next)
  }> (h0, x)
})";
  EXPECT_THAT(WhyNotStreamable(scan), HasSubstr("reads the length of 'x' along the time axis"));
}

TEST(LoopChunks, AScanOfAHigherRankConstantProductWalksTheRightAxis) {
  // Mul(x, k[1,1,1,1]) is [1, seq, batch, 3]: the Scan's axis 1 is x's axis 0 (before, "scans x:1").
  const RecurrentNode node = OnlyNode(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 3] x, float[batch, 3] h0) => (float[batch, 3] h_n) {
  k = Constant <value = float[1, 1, 1, 1] {2}> ()
  x4 = Mul (x, k)
  h_n = Scan <num_scan_inputs = 1, scan_input_axes = [1], body = body (float[batch, 3] h, float[1, batch, 3] x_t) => (float[batch, 3] h_next) {
    z = Constant <value = int64[1] {0}> ()
    xq = Squeeze (x_t, z)
    s = Add (h, xq)
    h_next = Tanh (s)
  }> (h0, x4)
})");
  EXPECT_EQ(node.walk, "scans x:0");
  EXPECT_TRUE(node.streamable) << node.not_streamable_reason;
}

/// Makes the body input and output `names` of the first Loop sequences of float tensors (onnx 1.12's text
/// syntax has no sequence types).
void MakeSequences(onnx::ModelProto& model, int body_input, int body_output) {
  onnx::GraphProto& body = *testing::NodeOfType(*model.mutable_graph(), "Loop").mutable_attribute(0)->mutable_g();
  for (auto* value : {body.mutable_input(body_input), body.mutable_output(body_output)}) {
    onnx::TypeProto type;
    type.mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    *value->mutable_type() = type;
  }
}

/// TorchScript's form: per-step h collected in a carried sequence from `start`, concatenated after the loop;
/// `read` adds body nodes.
Analysis Collector(const std::string& start, const std::string& read, const std::string& h_next) {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 4] x, float[batch, 4] h0) => (float[seq, batch, 4] y, float[batch, 4] h_n) {
  shape = Shape (x)
  zero = Constant <value = int64 {0}> ()
  trip = Gather <axis = 0> (shape, zero)
  )" + start + R"(
  h_n, seq_n = Loop (trip, , h0, seq0) <body = body (int64 i, bool cond, float[batch, 4] h, float[batch, 4] seq)
      => (bool cond_out, float[batch, 4] h_next, float[batch, 4] seq_next) {
    x_t = Gather <axis = 0> (x, i)
    s = Add (h, x_t)
    )" + read + R"(
    )" + h_next + R"(
    seq_next = SequenceInsert (seq, h_next)
    cond_out = Identity (cond)
  }>
  y = ConcatFromSequence <axis = 0, new_axis = 1> (seq_n)
})");
  MakeSequences(model, 3, 2);
  ModelIndex index(model);
  return Analyze(index);
}

TEST(LoopChunks, ACollectorOnlyCollects) {
  const Analysis control = Collector("seq0 = SequenceEmpty ()", "", "h_next = Tanh (s)");
  ASSERT_EQ(control.nodes.size(), 1u);
  EXPECT_TRUE(control.nodes[0].streamable) << control.nodes[0].not_streamable_reason;
  // Read by the body (its length feeds the cell): unclassified, check warns, not streamable.
  const Analysis read = Collector("seq0 = SequenceEmpty ()", R"(n = SequenceLength (seq)
    f = Cast <to = 1> (n)
    s2 = Add (s, f))",
                                  "h_next = Tanh (s2)");
  ASSERT_EQ(read.nodes.size(), 1u);
  EXPECT_FALSE(read.nodes[0].streamable);
  EXPECT_THAT(read.nodes[0].not_streamable_reason, HasSubstr("carried 'seq' recurs in a way rnnstate cannot classify"));
  EXPECT_THAT(CheckWarnings(read), ElementsAre(HasSubstr("the body reads it (SequenceLength")));
  // Starting with an item: every chunk would repeat it.
  const Analysis full = Collector("seq0 = SequenceConstruct (h0)", "", "h_next = Tanh (s)");
  EXPECT_FALSE(full.nodes[0].streamable);
  EXPECT_THAT(full.nodes[0].not_streamable_reason, HasSubstr("starts with the items of 'seq0', not SequenceEmpty"));
}

}  // namespace
}  // namespace rnnstate::loop_chunks_test
