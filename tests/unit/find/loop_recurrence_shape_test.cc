// The type, shape and batch of a loop's states (loop_recurrence, axis_trace) and what the contract then
// says about them: integer states (an autoregressive decoder's token), a batch found although the final
// state is no graph output or the state is computed from a slice of a shape, no invented dim names in
// metadata, and states without a batch axis. Models as ONNX text.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "contract/first_feeds.h"
#include "find/analysis.h"
#include "find/analyze_text.h"
#include "graph/model_index.h"
#include "loop_text.h"
#include "pipeline_stages.h"
#include "test_models.h"
#include "test_names.h"
#include "views/check.h"

namespace rnnstate::loop_recurrence_shape_test {
namespace {

using namespace test_names;

PlanOptions Required() {
  PlanOptions options;
  options.mode = StateInputMode::kRequired;
  return options;
}

std::string MetaShape(const StatePair& pair) {
  std::string text;
  for (const MetaDim& d : pair.shape)
    text += (text.empty() ? "" : ",") + (d.value >= 0 ? std::to_string(d.value) : d.symbol);
  return "[" + text + "]";
}

/// A greedy decoder: h and the int64 token carried, the token starting at 1 for every row of the batch.
const char* kTokenDecoder = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, 4] ctx, int64 steps, float[5, 4] E, float[4, 4] U, float[4, 5] Wo) => (int64[n, batch] toks, float[batch, 4] h_n) {
  cs = Shape (ctx)
  c0 = Constant <value = int64 {0}> ()
  b = Gather <axis = 0> (cs, c0)
  axes0 = Constant <value = int64[1] {0}> ()
  b1 = Unsqueeze (b, axes0)
  hdim = Constant <value = int64[1] {4}> ()
  zs = Concat <axis = 0> (b1, hdim)
  h0 = ConstantOfShape (zs)
  tok0 = ConstantOfShape <value = int64[1] {1}> (b1)
  h_n, tok_n, toks = Loop (steps, , h0, tok0) <body = body (int64 i, bool cond, float[batch, 4] h, int64[batch] tok)
      => (bool cond_out, float[batch, 4] h_next, int64[batch] tok_next, int64[batch] tok_t) {
    emb = Gather <axis = 0> (E, tok)
    hu = MatMul (h, U)
    a = Add (emb, hu)
    a2 = Add (a, ctx)
    h_next = Tanh (a2)
    logits = MatMul (h_next, Wo)
    tok_next = ArgMax <axis = 1, keepdims = 0> (logits)
    cond_out = Identity (cond)
    tok_t = Identity (tok_next)
  }>
})";

TEST(LoopStateShape, AnIntegerTokenIsAStateOfItsOwnType) {
  // Before: rewrite exited 4 ("state element type 7 is not a float type") while --dry-run said "would
  // write", and required mode wrote "dtype": "" and a dim "unk__2", which `init` refused.
  const Analysis analysis = AnalyzeText(kTokenDecoder);
  ASSERT_EQ(analysis.states.size(), 2u);
  const RecurrentState& tok = analysis.states[1].state;
  EXPECT_EQ(tok.variable, "tok");
  EXPECT_EQ(tok.elem_type, onnx::TensorProto::INT64);
  EXPECT_EQ(ShapeText(tok.shape), "[batch]");
  EXPECT_EQ(tok.batch_axis, 0);
  EXPECT_EQ(tok.batch_source.value, "ctx");
  EXPECT_TRUE(analysis.nodes[0].streamable) << analysis.nodes[0].not_streamable_reason;

  for (const PlanOptions& options : {PlanOptions{}, Required()}) {
    onnx::ModelProto model = ParseModel(kTokenDecoder);
    const RewriteOutcome outcome = RewriteModel(model, options, /*strict=*/true);
    EXPECT_THAT(WarningTexts(outcome.warnings), Not(Contains(HasSubstr("state state"))));
    const auto pairs = RecordedPairs(model);
    ASSERT_EQ(pairs.size(), 2u);
    EXPECT_EQ(pairs[1].dtype, "int64");
    EXPECT_EQ(MetaShape(pairs[1]), "[batch]");
    EXPECT_EQ(pairs[1].init, "empty");  // ones, not zeros: the model's own default, selected by an empty feed
    const std::vector<FirstFeed> feeds = FirstFeeds(pairs, 3, {});
    EXPECT_EQ(feeds[1].dtype, "int64");
    EXPECT_EQ(feeds[1].shape, std::vector<int64_t>{0});
    ModelIndex index(model);
    EXPECT_THAT(CheckModel(index, Analyze(index)), IsEmpty());
  }
}

TEST(LoopStateShape, TheBatchIsFoundWhenTheFinalStateIsNoGraphOutput) {
  // onnx's inference names the loop's values unk__N; the body declares `batch`, the initial zeros take it
  // from x. Before: "no batch axis", an input declared [unk__0,4] and `init --batch 2` refused.
  const std::string text = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 3] x, float[3, 4] W, float[4, 4] U) => (float[seq, batch, 4] y) {
)" + std::string(testing::kLoopOverAxis0Start) +
                           R"(
  h_end, y = Loop (trip, , h0) <body = body (int64 i, bool cond, float[batch, 4] h) => (bool cond_out, float[batch, 4] h_next, float[batch, 4] y_t) {
)" + TanhCell().Text() +
                           R"(
    y_t = Identity (h_next)
    cond_out = Identity (cond)
  }>
})";
  const Analysis analysis = AnalyzeText(text);
  ASSERT_EQ(analysis.states.size(), 1u);
  EXPECT_EQ(ShapeText(analysis.states[0].state.shape), "[batch,4]");
  EXPECT_EQ(analysis.states[0].state.batch_axis, 0);
  EXPECT_EQ(analysis.states[0].state.batch_source.value, "x");
  EXPECT_EQ(analysis.states[0].state.batch_source.axis, 1);
  EXPECT_EQ(analysis.nodes[0].batch.param, "batch");
  onnx::ModelProto model = ParseModel(text);
  RewriteModel(model, Required(), /*strict=*/true);
  const auto pairs = RecordedPairs(model);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(MetaShape(pairs[0]), "[batch,4]");
  EXPECT_EQ(pairs[0].batch_axis, 0);
  EXPECT_EQ(testing::DeclaredShape(model.graph(), pairs[0].input), "[batch,4]");
  EXPECT_EQ(FirstFeeds(pairs, 2, {})[0].shape, (std::vector<int64_t>{2, 4}));
}

TEST(LoopStateShape, ALoopInsideAnIfBranchFindsTheBatchOfTheMainGraphInput) {
  // The zeros are computed in the main graph from x; the loop runs in the then branch (before: unk__0).
  const Analysis analysis = AnalyzeText(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 3] x, bool use, float[3, 4] W) => (float[seq, batch, 4] y) {
)" + std::string(testing::kLoopOverAxis0Start) +
                                        R"(
  y0 = MatMul (x, W)
  y = If (use) <then_branch = then () => (float[seq, batch, 4] yt) {
    h_end, yt = Loop (trip, , h0) <body = body (int64 i, bool cond, float[batch, 4] h) => (bool cond_out, float[batch, 4] h_next, float[batch, 4] y_t) {
)" + TanhCell().Weights("W", "").Text() +
                                        R"(
      y_t = Identity (h_next)
      cond_out = Identity (cond)
    }>
  }, else_branch = else () => (float[seq, batch, 4] ye) {
    ye = Identity (y0)
  }>
})");
  ASSERT_EQ(analysis.states.size(), 1u);
  EXPECT_EQ(ShapeText(analysis.states[0].state.shape), "[batch,4]");
  EXPECT_EQ(analysis.states[0].state.batch_source.value, "x");
  EXPECT_TRUE(analysis.nodes[0].streamable) << analysis.nodes[0].not_streamable_reason;
}

TEST(LoopStateShape, AScanStateFromASliceOfAShapeHasTheDataBatch) {
  // A float64 Scan state started from ConstantOfShape(Slice(Shape(x2), 1, 3)): before, declared
  // f64[unk__0,2] with batch_axis -1, and `check` passed it.
  const Analysis analysis = AnalyzeText(R"(<ir_version: 8, opset_import: ["" : 14]>
g (double[seq, batch, 2] x2) => (double[seq, batch, 2] y2) {
  shp = Shape (x2)
  one = Constant <value = int64[1] {1}> ()
  three = Constant <value = int64[1] {3}> ()
  bs = Slice (shp, one, three)
  s0 = ConstantOfShape <value = double[1] {0}> (bs)
  s_final, y2 = Scan <num_scan_inputs = 1, body = body (double[batch, 2] s_prev, double[batch, 2] x_t) => (double[batch, 2] s_next, double[batch, 2] s_scan) {
    half = Constant <value = double {0.5}> ()
    m = Mul (s_prev, half)
    s_next = Add (m, x_t)
    s_scan = Identity (s_next)
  }> (s0, x2)
})");
  ASSERT_EQ(analysis.states.size(), 1u);
  const RecurrentState& s = analysis.states[0].state;
  EXPECT_EQ(s.elem_type, onnx::TensorProto::DOUBLE);
  EXPECT_EQ(ShapeText(s.shape), "[batch,2]");
  EXPECT_EQ(s.batch_axis, 0);
  EXPECT_EQ(s.batch_source.value, "x2");
  EXPECT_EQ(s.batch_source.axis, 1);
}

TEST(LoopStateShape, ADimNoDataInputDeclaresIsAProblemNotAName) {
  // The initial value comes from an operator rnnstate cannot follow, and the body calls axis 1 `m`, which
  // no data input declares: a caller could not know what to feed, so the loop is not rewritten.
  const onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14, "com.example" : 1]>
g (float[seq, batch, 3] x) => (float[seq, batch, m] y) {
  shape = Shape (x)
  zero = Constant <value = int64 {0}> ()
  trip = Gather <axis = 0> (shape, zero)
  h0 = com.example.Opaque (x)
  h_end, y = Loop (trip, , h0) <body = body (int64 i, bool cond, float[batch, m] h) => (bool cond_out, float[batch, m] h_next, float[batch, m] y_t) {
    x_t = Gather <axis = 0> (x, i)
    s = Add (h, x_t)
    h_next = Tanh (s)
    y_t = Identity (h_next)
    cond_out = Identity (cond)
  }>
})");
  const ModelIndex index(model);
  const Analysis analysis = Analyze(index);
  ASSERT_EQ(analysis.states.size(), 1u);
  EXPECT_THAT(analysis.states[0].state.problem, HasSubstr("has a size no data input declares (m)"));
  // `check` says why rewriting will not help, instead of "run rnnstate rewrite".
  const std::vector<CheckProblem> problems = CheckModel(index, analysis);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_THAT(problems[0].message, HasSubstr("rnnstate cannot rewrite it: axis 1 of carried 'h'"));
  EXPECT_THAT(problems[0].message, Not(HasSubstr("run rnnstate rewrite")));
}

/// A Loop carrying h (batched) and acc [4] (no batch axis), acc starting at the initializer `off` or the
/// Constant `acc_init` text.
std::string Accumulator(const std::string& acc_type, const std::string& acc_init) {
  return R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 3] x, float[3, 4] W) => (float[seq, batch, 4] y, float[batch, 4] h_n) {
)" + std::string(testing::kLoopOverAxis0Start) + R"(
  )" + acc_init +
         R"(
  h_n, acc_n, y = Loop (trip, , h0, acc0) <body = body (int64 i, bool cond, float[batch, 4] h, )" +
         acc_type + R"( acc) => (bool cond_out, float[batch, 4] h_next, )" + acc_type +
         R"( acc_next, float[batch, 4] y_t) {
    x_t = Gather <axis = 0> (x, i)
    xw = MatMul (x_t, W)
    s = Add (xw, h)
    s2 = Add (s, acc)
    h_next = Tanh (s2)
    m = ReduceMean <keepdims = 0> (h_next)
    acc_next = Add (acc, m)
    y_t = Identity (h_next)
    cond_out = Identity (cond)
  }>
})";
}

TEST(LoopStateShape, AStateWithoutBatchAxisHasAConcreteShapeAndAnEmptyFirstFeedAlongAxis0) {
  const std::string text = Accumulator("float[4]", "acc0 = Constant <value = float[4] {1, 2, 3, 4}> ()");
  const Analysis analysis = AnalyzeText(text);
  ASSERT_EQ(analysis.states.size(), 2u);
  EXPECT_EQ(analysis.states[1].state.batch_axis, -1);
  // The node line takes its batch from a state that has one, not from the last state.
  EXPECT_EQ(analysis.nodes[0].batch.param, "batch");
  for (const PlanOptions& options : {PlanOptions{}, Required()}) {
    onnx::ModelProto model = ParseModel(text);
    RewriteModel(model, options, /*strict=*/true);
    const auto pairs = RecordedPairs(model);
    ASSERT_EQ(pairs.size(), 2u);
    // Before: "shape":[""], which `init` could not give a value.
    EXPECT_EQ(MetaShape(pairs[1]), "[4]");
    EXPECT_EQ(pairs[1].batch_axis, -1);
    EXPECT_EQ(pairs[1].init, "empty");
    EXPECT_EQ(FirstFeeds(pairs, 2, {})[1].shape, std::vector<int64_t>{0});  // empty along axis 0
    ModelIndex index(model);
    EXPECT_THAT(CheckModel(index, Analyze(index)), IsEmpty());
  }
  // A scalar has no axis to be empty along: its loop is not rewritten, with the reason.
  const Analysis scalar = AnalyzeText(Accumulator("float", "acc0 = Constant <value = float {1}> ()"));
  ASSERT_EQ(scalar.states.size(), 2u);
  EXPECT_THAT(scalar.states[1].state.problem, HasSubstr("is a scalar whose initial value is not zeros"));
  EXPECT_THAT(scalar.states[0].state.problem, HasSubstr("carried 'acc' cannot be exposed"));
  const Analysis zero = AnalyzeText(Accumulator("float", "acc0 = Constant <value = float {0}> ()"));
  EXPECT_TRUE(zero.states[1].state.problem.empty()) << zero.states[1].state.problem;
}

TEST(LoopStateShape, AStateWithoutBatchAxisKeepsNoneWhenItsOwnFixedInputFeedsIt) {
  // acc zeros [4]: rewritten, the loop reads the input 'time.acc_in' [4]; its fixed dim is no batch (it
  // matched x's batch of 4 and the metadata said batch_axis 0 on the second rewrite, then -1 again).
  onnx::ModelProto model = ParseModel(Accumulator("float[4]", "acc0 = Constant <value = float[4] {0, 0, 0, 0}> ()"));
  RewriteModel(model, PlanOptions{}, /*strict=*/true);
  ASSERT_EQ(RecordedPairs(model).size(), 2u);
  EXPECT_EQ(RecordedPairs(model)[1].batch_axis, -1);
  const std::string once = testing::Bytes(model);
  RewriteModel(model, PlanOptions{}, /*strict=*/true);
  EXPECT_EQ(RecordedPairs(model)[1].batch_axis, -1);
  EXPECT_EQ(testing::Bytes(model), once);
}

TEST(LoopStateShape, AValueReshapedToItsOwnShapeIsPassedThrough) {
  // Reshape(q, Shape(q)) is q: before, a state without batch whose metadata could not be fed.
  const Analysis analysis = AnalyzeText(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 4] x, float[batch, 4] h0, float[4] off) => (float[batch, 4] h_n) {
  shape = Shape (x)
  zero = Constant <value = int64 {0}> ()
  trip = Gather <axis = 0> (shape, zero)
  h_n, q_n = Loop (trip, , h0, off) <body = body (int64 i, bool cond, float[batch, 4] h, float[4] q) => (bool cond_out, float[batch, 4] h_next, float[4] q_next) {
    x_t = Gather <axis = 0> (x, i)
    s = Add (h, x_t)
    s2 = Add (s, q)
    h_next = Tanh (s2)
    qs = Shape (q)
    q_next = Reshape (q, qs)
    cond_out = Identity (cond)
  }>
})");
  ASSERT_EQ(analysis.states.size(), 1u);
  EXPECT_EQ(analysis.states[0].state.variable, "h");
  ASSERT_EQ(analysis.notes.size(), 1u);
  EXPECT_EQ(analysis.notes[0].variable, "q");
  EXPECT_THAT(analysis.notes[0].reason, HasSubstr("passed through"));
}

/// ONNX text: how TorchScript's export of a loop over axis 0 of x starts: its trip count `trip` (Shape(x)[0])
/// and its initial state `h0`, zeros [batch, `width`] from Shape(x)[1] unsqueezed (`shape`, `zero`, `one`,
/// `b`, `axes0`, `b1`, `hdim` and `zs` its steps). Starts with two spaces, ends with a newline.
std::string TorchScriptStart(int width) {
  const std::string lines[] = {"shape = Shape (x)",
                               "zero = Constant <value = int64 {0}> ()",
                               "one = Constant <value = int64 {1}> ()",
                               "trip = Gather <axis = 0> (shape, zero)",
                               "b = Gather <axis = 0> (shape, one)",
                               "axes0 = Constant <value = int64[1] {0}> ()",
                               "b1 = Unsqueeze (b, axes0)",
                               "hdim = Constant <value = int64[1] {" + std::to_string(width) + "}> ()",
                               "zs = Concat <axis = 0> (b1, hdim)",
                               "h0 = ConstantOfShape (zs)"};
  std::string text;
  for (const std::string& line : lines) text += "  " + line + "\n";
  return text;
}

/// TorchScript's hand-written cell as torch.onnx.export writes it with dynamic output axes: the body
/// declares its carried h [seq, batch] (stale: h is [batch, 5]) and the loop's output [batch,
/// Looph_n_dim_1]; the zeros are computed from x's batch and the constant 5. The gates are split by
/// sizes computed from a shape (torch's `chunk`), so onnx's inference cannot tell the body's h size.
const std::string kStaleBodyDeclarations = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 3] x, float[3, 10] W, float[5, 10] U) => (float[batch, Looph_n_dim_1] h_n) {
)" + TorchScriptStart(5) + R"(
  h_n = Loop (trip, , h0) <body = body (int64 i, bool cond, float[seq, batch] h) => (bool cond_out, float[batch, Looph_n_dim_1] h_next) {
    x_t = Gather <axis = 0> (x, i)
    xw = MatMul (x_t, W)
    hu = MatMul (h, U)
    a = Add (xw, hu)
    a_shape = Shape (a)
    last = Constant <value = int64[1] {1}> ()
    width = Gather <axis = 0> (a_shape, last)
    two = Constant <value = int64[1] {2}> ()
    half = Div (width, two)
    sizes = Concat <axis = 0> (half, half)
    gate, cand = Split <axis = 1> (a, sizes)
    s = Sigmoid (gate)
    c = Tanh (cand)
    h_next = Mul (s, c)
    cond_out = Identity (cond)
  }>
})";

TEST(LoopStateShape, ComputedZerosGiveTheShapeWhereTheBodysDeclarationsAreStale) {
  // Before: [batch,batch] (the body's stale 'batch' taken for axis 1), declared so on the new input; ONNX
  // Runtime then failed the unfed rewrite in its Expand.
  const Analysis analysis = AnalyzeText(kStaleBodyDeclarations);
  ASSERT_EQ(analysis.states.size(), 1u);
  EXPECT_EQ(ShapeText(analysis.states[0].state.shape), "[batch,5]");
  EXPECT_EQ(analysis.states[0].state.batch_axis, 0);
  EXPECT_EQ(analysis.states[0].state.problem, "");
}

TEST(LoopStateShape, BothRoutesToRequiredModeKeepTheShapeAndBatchOfALoopState) {
  // The defaults-mode model broadcasts its input's default with Expand: its shape is read through it, and
  // the input's own fixed dim (5) is never taken for the batch. Before, the second rewrite said "axis 0
  // ... has a size no data input declares" and left the model unchanged, or moved batch_axis to 1.
  onnx::ModelProto direct = ParseModel(kStaleBodyDeclarations);
  RewriteModel(direct, Required(), /*strict=*/true);
  onnx::ModelProto routed = ParseModel(kStaleBodyDeclarations);
  RewriteModel(routed, PlanOptions{}, /*strict=*/true);
  RewriteModel(routed, Required(), /*strict=*/true);
  for (const onnx::ModelProto* model : {&direct, &routed}) {
    const std::vector<StatePair> pairs = RecordedPairs(*model);
    ASSERT_EQ(pairs.size(), 1u);
    EXPECT_EQ(MetaShape(pairs[0]), "[batch,5]");
    EXPECT_EQ(pairs[0].batch_axis, 0);
    EXPECT_FALSE(pairs[0].optional);
  }
  const std::string once = testing::Bytes(routed);
  RewriteModel(routed, Required(), /*strict=*/true);
  EXPECT_EQ(testing::Bytes(routed), once);
}

TEST(LoopStateShape, AScalarCounterWhoseDefaultIsZerosTakesRequiredModeOnTheSecondRoute) {
  // k counts steps and feeds the cell (so nothing streams), starting at 0. Rewritten in defaults mode its
  // input has the default 0; before, the required-mode rewrite of that model called it "a scalar whose
  // initial value is not zeros" and changed nothing.
  const std::string text = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 4] x) => (float[batch, 4] h_n, int64 k_n) {
)" + TorchScriptStart(4) + R"(
  k0 = Constant <value = int64 {0}> ()
  h_n, k_n = Loop (trip, , h0, k0) <body = body (int64 i, bool cond, float[batch, 4] h, int64 k) => (bool cond_out, float[batch, 4] h_next, int64 k_next) {
    x_t = Gather <axis = 0> (x, i)
    kf = Cast <to = 1> (k)
    a = Add (h, x_t)
    a2 = Add (a, kf)
    h_next = Tanh (a2)
    step = Constant <value = int64 {1}> ()
    k_next = Add (k, step)
    cond_out = Identity (cond)
  }>
})";
  onnx::ModelProto model = ParseModel(text);
  RewriteModel(model, PlanOptions{}, /*strict=*/true);
  ASSERT_EQ(RecordedPairs(model).size(), 2u);
  RewriteModel(model, Required(), /*strict=*/true);
  for (const StatePair& pair : RecordedPairs(model)) {
    EXPECT_FALSE(pair.optional) << pair.input;
    EXPECT_EQ(pair.init, kInitZeros) << pair.input;
  }
}

}  // namespace
}  // namespace rnnstate::loop_recurrence_shape_test
