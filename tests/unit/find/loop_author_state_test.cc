// The authors' state carried through a Loop (issue 32, pattern 2), as tf2onnx writes a Keras layer given an
// `initial_state` and returning its state: the loop's carried h and c start from `Squeeze(Slice(st, [0, k],
// [INT32_MAX, k + 1], [0, 1]), [1])` of the authors' input `st`, and their finals leave stacked on axis 1
// (`Concat(Unsqueeze(h_n, [1]), Unsqueeze(c_n, [1]))`) through the authors' output. Such a state is the
// authors' (recorded, nothing added), a rewrite's own check holds, a second rewrite changes no byte; an output
// that packs anything but the final value is no exposure. Models as ONNX text.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "find/analysis.h"
#include "graph/model_index.h"
#include "loop_text.h"
#include "pipeline_stages.h"
#include "test_models.h"
#include "test_names.h"
#include "views/check.h"

namespace rnnstate::loop_author_state_test {
namespace {

using namespace test_names;

/// A tf2onnx Keras-like Loop over x [B, 6, 3] (time-major by Transpose), carried counter t, h and c read
/// from the authors' `st` [B, 2, 4]; `h_out` is what st_out packs for h (the final `h_n`, or a control's).
std::string AuthorsLoop(const std::string& batch, const std::string& h_out = "h_n") {
  return R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[)" +
         batch + R"(, 6, 3] x, float[)" + batch + R"(, 2, 4] st) => (float[)" + batch + R"(, 6, 4] ys_bm, float[)" +
         batch + R"(, 2, 4] st_out)
  <int64 M = {6}, float T = {6.0}, float z = {0.0}, int32 t0 = {0}, float[3, 4] W = {1,2,3,4,5,6,7,8,9,10,11,12},
   float[4, 4] U = {1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1}, int64[2] h_starts = {0, 0}, int64[2] h_ends = {2147483647, 1},
   int64[2] c_starts = {0, 1}, int64[2] c_ends = {2147483647, 2}, int64[2] sl_axes = {0, 1}, int64[1] ax1 = {1}> {
  c0 = Less (z, T)
  cond0 = And (c0, c0)
  x_tm = Transpose <perm = [1, 0, 2]> (x)
  h_sl = Slice (st, h_starts, h_ends, sl_axes)
  h0 = Squeeze (h_sl, ax1)
  c_sl = Slice (st, c_starts, c_ends, sl_axes)
  cc0 = Squeeze (c_sl, ax1)
  t_n, h_n, c_n, ys = Loop (M, cond0, t0, h0, cc0) <body = body (int64 i, bool cond, int32 t, float[)" +
         batch + R"(, 4] h, float[)" + batch + R"(, 4] c) => (bool cond_out, int32 t_next, float[)" + batch +
         R"(, 4] h_next, float[)" + batch + R"(, 4] c_next, float[)" + batch + R"(, 4] y_t) {
)" + TanhCell().Of("x_tm").At("t").Then("c_next = Add (s, c)", "c_next").Text() +
         R"(
    one = Constant <value = int32 {1}> ()
    t_next = Add (t, one)
    i_f = Cast <to = 1> (i)
    below_i = Less (i_f, T)
    t_f = Cast <to = 1> (t_next)
    below_t = Less (t_f, T)
    cond_out = And (below_i, below_t)
    y_t = Identity (h_next)
  }>
  ys_bm = Transpose <perm = [1, 0, 2]> (ys)
  h_e = Unsqueeze ()" +
         h_out + R"(, ax1)
  c_e = Unsqueeze (c_n, ax1)
  st_out = Concat <axis = 1> (h_e, c_e)
})";
}

/// A tf2onnx Loop `outs = Loop (ins)` over a tanh cell `h_next = Tanh(x_t w + h u)`: `x_t` the body's int32
/// counter's step of `data`, the float condition on `bound`, the steps a scan output; h is float[`dims`].
std::string TanhCellLoop(const std::string& outs, const std::string& ins, const std::string& data, const std::string& w,
                         const std::string& u, const std::string& bound, const std::string& dims) {
  const std::string h = "float[" + dims + "] ";
  return "  " + outs + " = Loop (" + ins + ") <body = body_" + data + " (int64 i, bool cond, int32 t, " + h +
         "h) => (bool cond_out, int32 t_next, " + h + "h_next, " + h + "y_t) {\n" +
         TanhCell().Of(data).At("t").Weights(w, u).Text() + "    one = Constant <value = int32 {1}> ()\n" +
         "    t_next = Add (t, one)\n    i_f = Cast <to = 1> (i)\n    below_i = Less (i_f, " + bound +
         ")\n    t_f = Cast <to = 1> (t_next)\n    below_t = Less (t_f, " + bound +
         ")\n    cond_out = And (below_i, below_t)\n    y_t = Identity (h_next)\n  }>\n";
}

/// A dual-path enhancer at batch 1, as tf2onnx writes two Keras GRUs: an intra-frame Loop over the 4 bins of
/// each frame (x [1, seq, 4] reshaped to [seq, 4, 1]: the frames are its batch; Keras zeros from that batch),
/// its steps reshaped back to [1, seq, 8] for an inter-frame Loop over the frames whose initial h is
/// `inter_h0` (the authors' `st[:, 0]`, or a control's zeros) and whose final leaves as `st_out`.
std::string DualPathLoops(const std::string& inter_h0) {
  std::string text = R"(<ir_version: 7, opset_import: ["" : 14]>
g (float[1, seq, 4] x, float[1, 1, 3] st) => (float[1, seq, 3] ys_bm, float[1, 1, 3] st_out)
  <float Fb = {4.0}, int64 MF = {4}, float z = {0.0}, int32 t0 = {0}, float[1, 2] Wf = {0.5, -0.3}, float[2, 2] Uf = {0.1,0.2,0.3,0.4},
   float[8, 3] W = {1,2,3,4,5,6,7,8,9,10,11,12,1,2,3,4,5,6,7,8,9,10,11,12}, float[3, 3] U = {0.1,0,0,0,0.1,0,0,0,0.1},
   int64[3] s_intra = {-1, 4, 1}, int64[3] s_inter = {1, -1, 8}, int64[2] st_starts = {0, 0}, int64[2] st_ends = {2147483647, 1},
   int64[2] sl_axes = {0, 1}, int64[1] ax1 = {1}, int64[1] b0 = {0}, int64[1] b1 = {1}, int64[1] hf = {2}> {
  xi = Reshape (x, s_intra)
  xi_fm = Transpose <perm = [1, 0, 2]> (xi)
  xi_shape = Shape (xi)
  nb = Slice (xi_shape, b0, b1)
  zdims = Concat <axis = 0> (nb, hf)
  zeros_f = ConstantOfShape (zdims)
  c0f = Less (z, Fb)
  condf = And (c0f, c0f)
)" + TanhCellLoop("tfn, hfn, ysf", "MF, condf, t0, zeros_f", "xi_fm", "Wf", "Uf", "Fb", "unk__1, 2") +
                     R"(  ysf_bm = Transpose <perm = [1, 0, 2]> (ysf)
  inter_in = Reshape (ysf_bm, s_inter)
  x_tm = Transpose <perm = [1, 0, 2]> (inter_in)
  x_tm_shape = Shape (x_tm)
  zero_i = Constant <value = int64 {0}> ()
  T_len = Gather <axis = 0> (x_tm_shape, zero_i)
  T_f = Cast <to = 1> (T_len)
  c0 = Less (z, T_f)
  cond0 = And (c0, c0)
INTER_H0
)" + TanhCellLoop("t_n, h_n, ys", "T_len, cond0, t0, h0", "x_tm", "W", "U", "T_f", "1, 3") +
                     R"(  ys_bm = Transpose <perm = [1, 0, 2]> (ys)
  h_e = Unsqueeze (h_n, ax1)
  st_out = Identity (h_e)
})";
  text.replace(text.find("INTER_H0"), 8, inter_h0);
  return text;
}

const char* kAuthorsH0 = "  h_sl = Slice (st, st_starts, st_ends, sl_axes)\n  h0 = Squeeze (h_sl, ax1)";

/// The analysis of `model` as it stands (its index lives only for the call).
Analysis AnalysisOf(const onnx::ModelProto& model) {
  const ModelIndex index(model);
  return Analyze(index);
}

/// Rewrites `model` (default mode; `strict`: every state rewritten or exposed) and returns what its own
/// `check` then says.
std::vector<std::string> RewriteAndCheck(onnx::ModelProto& model, bool strict = true) {
  RewriteModel(model, PlanOptions{}, strict);
  ModelIndex index(model);
  std::vector<std::string> problems;
  for (const CheckProblem& problem : CheckModel(index, Analyze(index))) problems.push_back(problem.message);
  return problems;
}

TEST(LoopAuthorState, ABatchOneStateIsTheAuthorsAndItsRecordSurvivesItsOwnCheck) {
  // Before: the fixed dim 1 of `st` was taken for the data's batch in the original, not once the rewrite
  // had recorded `st` as a state input: the pairs' axes changed, check refuted them ("region [:, 0, :] ...
  // are not carried 'h' ...") and a second rewrite added 2 inputs.
  onnx::ModelProto model = ParseModel(AuthorsLoop("1"));
  const Analysis analysis = AnalysisOf(model);
  ASSERT_EQ(analysis.states.size(), 2u);
  for (const StateAnalysis& state : analysis.states) {
    EXPECT_TRUE(state.exposed) << state.state.variable << ": " << state.finding.why_not;
    EXPECT_EQ(state.state.batch_axis, -1) << "a fixed dim of the authors' own input is no batch";
  }
  EXPECT_THAT(RewriteAndCheck(model), IsEmpty());
  EXPECT_THAT(InputNames(model.graph()), ElementsAre("x", "st"));
  const auto pairs = RecordedPairs(model);
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0].input, "st");
  EXPECT_EQ(pairs[0].output, "st_out");
  const std::string once = testing::Bytes(model);
  EXPECT_THAT(RewriteAndCheck(model), IsEmpty());
  EXPECT_TRUE(testing::Bytes(model) == once) << "a second rewrite changed the bytes";
}

TEST(LoopAuthorState, ASymbolicBatchIsTheDatasAndStaysSoOnceRecorded) {
  onnx::ModelProto model = ParseModel(AuthorsLoop("batch"));
  const Analysis analysis = AnalysisOf(model);
  ASSERT_EQ(analysis.states.size(), 2u);
  for (const StateAnalysis& state : analysis.states) {
    EXPECT_TRUE(state.exposed) << state.finding.why_not;
    EXPECT_EQ(state.state.batch_axis, 0);
    // Read from the data, not from the authors' state input.
    EXPECT_EQ(state.state.batch_source.value, "x");
  }
  EXPECT_THAT(RewriteAndCheck(model), IsEmpty());
  EXPECT_THAT(InputNames(model.graph()), ElementsAre("x", "st"));
  const std::string once = testing::Bytes(model);
  RewriteModel(model, PlanOptions{}, /*strict=*/true);
  EXPECT_TRUE(testing::Bytes(model) == once) << "a second rewrite changed the bytes";
}

TEST(LoopAuthorState, AnOutputThatPacksTheInitialValueIsNoExposure) {
  // The carried h is read from `st`, but what leaves at its place is h0 (the value fed), not the final h.
  for (const char* batch : {"1", "batch"}) {
    onnx::ModelProto model = ParseModel(AuthorsLoop(batch, "h0"));
    const Analysis analysis = AnalysisOf(model);
    ASSERT_EQ(analysis.states.size(), 2u);
    EXPECT_FALSE(analysis.states[0].exposed) << batch;
    EXPECT_TRUE(analysis.states[1].exposed) << batch << ": " << analysis.states[1].finding.why_not;
    EXPECT_THAT(RewriteAndCheck(model), IsEmpty());
    EXPECT_EQ(InputNames(model.graph()).size(), 3u) << "h is promoted, c is the authors'";
    const std::string once = testing::Bytes(model);
    RewriteModel(model, PlanOptions{}, /*strict=*/true);
    EXPECT_TRUE(testing::Bytes(model) == once) << batch << ": a second rewrite changed the bytes";
  }
}

TEST(LoopAuthorState, AFinalThroughAnElementwiseOpIsNoExposure) {
  // Tanh(h_n) lands where h was read: not the state, so not the authors' pair.
  std::string text = AuthorsLoop("batch", "h_act");
  text.replace(text.find("  h_e = "), 0, "  h_act = Tanh (h_n)\n");
  onnx::ModelProto model = ParseModel(text);
  const Analysis analysis = AnalysisOf(model);
  ASSERT_EQ(analysis.states.size(), 2u);
  EXPECT_FALSE(analysis.states[0].exposed);
  EXPECT_TRUE(analysis.states[1].exposed);
}

TEST(LoopAuthorState, AnIntraFrameLoopBesideTheAuthorsStateRunsWithinOneCall) {
  // Before: the authors' inter-frame loop, which rnnstate cannot prove streams through the intra-frame
  // loop's steps, was no carrier of theirs, so the intra-frame state was promoted: an input to feed back
  // that would carry one frame's state over the bins into the next call.
  onnx::ModelProto model = ParseModel(DualPathLoops(kAuthorsH0));
  const Analysis analysis = AnalysisOf(model);
  ASSERT_EQ(analysis.states.size(), 2u);
  EXPECT_FALSE(analysis.states[0].exposed);
  EXPECT_THAT(analysis.states[0].within_call, HasSubstr("runs within one call"));
  EXPECT_TRUE(analysis.states[1].exposed) << analysis.states[1].finding.why_not;
  // Not strict: the state left within the call is skipped on purpose.
  EXPECT_THAT(RewriteAndCheck(model, /*strict=*/false), IsEmpty());
  EXPECT_THAT(InputNames(model.graph()), ElementsAre("x", "st"));
  ASSERT_EQ(RecordedPairs(model).size(), 1u);
  EXPECT_EQ(RecordedPairs(model)[0].input, "st");
}

TEST(LoopAuthorState, WithoutTheAuthorsStateAnIntraFrameLoopIsPromoted) {
  // The inter-frame loop starts from zeros: nobody carries a state between calls, both are promoted.
  onnx::ModelProto model = ParseModel(DualPathLoops("  h0 = Constant <value = float[1, 3] {0, 0, 0}> ()"));
  const Analysis analysis = AnalysisOf(model);
  ASSERT_EQ(analysis.states.size(), 2u);
  for (const StateAnalysis& state : analysis.states) {
    EXPECT_FALSE(state.exposed);
    EXPECT_THAT(state.within_call, IsEmpty());
  }
  EXPECT_THAT(RewriteAndCheck(model), IsEmpty());
  EXPECT_EQ(RecordedPairs(model).size(), 2u);
}

}  // namespace
}  // namespace rnnstate::loop_author_state_test
