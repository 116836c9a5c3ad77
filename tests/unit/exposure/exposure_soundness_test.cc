// The audit of issues 9 and 13 on the exposure walks: every axis, index and operand a model gives is
// checked before use (a model the validation cannot judge must not crash them), and the forms the walks
// took for views but are not (a ScatterND that adds, a Slice that drops the state, a default branch that
// swaps h and c, another element type, duplicate indices, a Dropout in training mode) are not exposed,
// with the operator that broke the proof named. One small hand-written model per case.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "exposure/exposure.h"
#include "exposure_test_models.h"
#include "rnnstate/error.h"
#include "rules/model_rules.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::exposure_soundness_test {
namespace {

using namespace test_names;

std::string With(std::string text, const std::string& from, const std::string& to) {
  Replace(text, from, to);
  return text;
}

/// The message IndexValidModel (every command's validation) gives `text`, "" when it accepts it.
std::string Verdict(const std::string& text) { return testing::Verdict(testing::ParseModel(text)); }

// ---------------------------------------------------------------------------------------------------
// Axes out of range (issue 13: never a crash): refused by the validation, and safe in the walks.

struct Defect {
  const char* name;
  std::string read, write;
  const char* kind;  // the state whose proof the defect breaks
  const char* op;    // the operator the reason names
};

std::vector<Defect> AxisDefects() {
  const std::string read = kPackedRead, write = kPackedWrite;
  const std::string bad = "  bad = Constant <value = int64[1] {999}> ()\n",
                    neg = "  bad = Constant <value = int64[1] {-999}> ()\n";
  return {
      {"Unsqueeze axes -999 on the way in",
       With(read, "h0 = Unsqueeze (hs, axis0)", neg + "  h0 = Unsqueeze (hs, bad)"), write, "h", "Unsqueeze"},
      {"Squeeze axes 999 on the way in",
       With(read, "h0 = Unsqueeze (hs, axis0)",
            bad + "  hx = Unsqueeze (hs, axis0)\n  hy = Unsqueeze (hx, axis0)\n  h0 = Squeeze (hy, bad)"),
       write, "h", "Squeeze"},
      {"Transpose perm [1, 0, -5] on the way in",
       With(read, "h0 = Unsqueeze (hs, axis0)",
            "hx = Unsqueeze (hs, axis0)\n  h0 = Transpose <perm = [1, 0, -5]> (hx)"),
       write, "h", "Transpose"},
      {"Transpose perm [1] on the way in",
       With(read, "h0 = Unsqueeze (hs, axis0)", "hx = Unsqueeze (hs, axis0)\n  h0 = Transpose <perm = [1]> (hx)"),
       write, "h", "Transpose"},
      {"Slice axes 256 on the way in",
       With(read, "hs = Gather <axis = 0> (state, zero)\n  h0 = Unsqueeze (hs, axis0)",
            "z1 = Constant <value = int64[1] {0}> ()\n  o1 = Constant <value = int64[1] {1}> ()\n"
            "  a256 = Constant <value = int64[1] {256}> ()\n  h0 = Slice (state, z1, o1, a256)"),
       write, "h", "Slice"},
      {"Gather axis 99 on the way in",
       With(read, "Gather <axis = 0> (state, zero)", "Gather <axis = 99> (state, zero)"), write, "h", "Gather"},
      {"Gather index 1000000 on the way in",
       With(read, "hs = Gather <axis = 0> (state, zero)",
            "huge = Constant <value = int64 {1000000}> ()\n  hs = Gather <axis = 0> (state, huge)"),
       write, "h", "Gather"},
      {"Unsqueeze axes 999 on the way out", read,
       With(write, "hu = Unsqueeze (hq, axis0)", bad + "  hu = Unsqueeze (hq, bad)"), "h", "Unsqueeze"},
      {"Transpose perm [2] on the way out", read,
       With(write, "hq = Squeeze (Yh, axis0)", "ht = Transpose <perm = [2]> (Yh)\n  hq = Squeeze (ht, axis0)"), "h",
       "Transpose"},
      {"Concat axis 99 on the way out", read, With(write, "Concat <axis = 0>", "Concat <axis = 99>"), "h", "Concat"},
      {"Split axis 99 on the way out", read,
       With(write, "hq = Squeeze (Yh, axis0)", "hs1, hs2 = Split <axis = 99> (Yh)\n  hq = Squeeze (hs1, axis0)"), "h",
       "Split"},
      {"Slice axes -300 on the way out", read,
       With(write, "hq = Squeeze (Yh, axis0)",
            "z1 = Constant <value = int64[1] {0}> ()\n  o1 = Constant <value = int64[1] {1}> ()\n"
            "  a300 = Constant <value = int64[1] {-300}> ()\n  hl = Slice (Yh, z1, o1, a300)\n  hq = Squeeze (hl, "
            "axis0)"),
       "h", "Slice"},
      {"Gather axis -99 on the way out", read,
       With(write, "hq = Squeeze (Yh, axis0)", "hq = Gather <axis = -99> (Yh, zero)"), "h", "Gather"},
  };
}

TEST(ExposureSoundness, AxesOutOfRangeBreakTheProofWithoutACrash) {
  // Analyzed indexes the model without the validation: the walks alone must stay inside every vector.
  for (const Defect& defect : AxisDefects()) {
    Analyzed a(PackedLstm(defect.read, defect.write));
    const StateAnalysis& state = a.State(0, defect.kind);
    EXPECT_FALSE(state.exposure.has_value()) << defect.name;
    EXPECT_THAT(state.finding.why_not, HasSubstr(defect.op)) << defect.name;
    EXPECT_THAT(Kinds(a.Problems()), ::testing::Contains("not_exposed")) << defect.name;
  }
}

TEST(ExposureSoundness, EveryCommandRefusesAViewAxisOutOfRange) {
  for (const Defect& defect : AxisDefects()) {
    EXPECT_THAT(Verdict(PackedLstm(defect.read, defect.write)),
                HasSubstr("invalid model: main: " + std::string(defect.op)))
        << defect.name;
  }
  EXPECT_EQ(Verdict(PackedLstm(With(kPackedRead, "h0 = Unsqueeze (hs, axis0)",
                                    "m9 = Constant <value = int64[1] {-999}> ()\n  h0 = Unsqueeze (hs, m9)"))),
            "invalid model: main: Unsqueeze 'Unsqueeze_5': axis -999 is out of range for an output of rank 3");
  EXPECT_EQ(
      Verdict(PackedLstm(kPackedRead, With(kPackedWrite, "hq = Squeeze (Yh, axis0)",
                                           "ht = Transpose <perm = [1, 0, -5]> (Yh)\n  hq = Squeeze (ht, axis0)"))),
      "invalid model: main: Transpose 'Transpose_8': perm [1, 0, -5] is not a permutation of the input's 3 axes");
  EXPECT_EQ(Verdict(PackedLstm(With(kPackedRead, "cs = Gather <axis = 0> (state, one)",
                                    "five = Constant <value = int64 {5}> ()\n  cs = Gather <axis = 0> (state, five)"))),
            "invalid model: main: Gather 'Gather_6': index 5 is out of range for axis 0 of size 2");
  EXPECT_EQ(Verdict(PackedLstm(kPackedRead, With(kPackedWrite, "hq = Squeeze (Yh, axis0)",
                                                 "dims = Constant <value = int64[3] {-1, -1, -1}> ()\n"
                                                 "  hr = Reshape (Yh, dims)\n  hq = Squeeze (hr, axis0)"))),
            "invalid model: main: Reshape 'Reshape_9': shape [-1, -1, -1] has more than one -1");
  // The valid forms stay valid: negative axes in range, and axes the validation cannot see (computed).
  EXPECT_EQ(Verdict(PackedLstm()), "");
  EXPECT_EQ(Verdict(PackedLstm(With(kPackedRead, "Gather <axis = 0> (state, one)", "Gather <axis = -3> (state, one)"))),
            "");
}

TEST(ExposureSoundness, SliceStepsAndStartsAtTheLimitsOfInt64DoNotOverflow) {
  const std::string rows =
      "z1 = Constant <value = int64[1] {0}> ()\n  o1 = Constant <value = int64[1] {1}> ()\n  h0 = ";
  const std::pair<const char*, const char*> cases[] = {
      {"Slice (state, z1, o1, z1, minimum)", ""},         // from row 0 down to row 1: empty
      {"Slice (state, minimum, o1, z1)", "[0:1, :, :]"},  // the start clamped to row 0
      {"Slice (state, maximum, z1, z1, minimum)", ""},    // row 1 (c reads it too)
  };
  for (const auto& [slice, region] : cases) {
    Analyzed a(PackedLstm(With(kPackedRead, "hs = Gather <axis = 0> (state, zero)\n  h0 = Unsqueeze (hs, axis0)",
                               "minimum = Constant <value = int64[1] {-9223372036854775808}> ()\n"
                               "  maximum = Constant <value = int64[1] {9223372036854775807}> ()\n  " +
                                   rows + slice)));
    const StateAnalysis& h = a.State(0, "h");
    EXPECT_EQ(h.exposure ? Region(*h.exposure) : "", region) << slice << ": " << h.finding.why_not;
  }
}

// ---------------------------------------------------------------------------------------------------
// Slices with ONNX's rules for negative and out-of-range starts and ends.

TEST(ExposureSoundness, SliceWithANegativeEndThatDropsTheFinalIsNotAWrite) {
  // U = Concat(state[0:1], Y_h)[:-1] keeps state[0:1] only: stateN row 1 is the input's row 1 unchanged.
  const std::string write = R"(
  s0 = Constant <value = int64[1] {0}> ()
  s1 = Constant <value = int64[1] {1}> ()
  e2 = Constant <value = int64[1] {2}> ()
  em1 = Constant <value = int64[1] {-1}> ()
  p = Slice (state, s0, s1, s0)
  t = Concat <axis = 0> (p, Yh)
  u = Slice (t, s0, em1, s0)
  r1 = Slice (state, s1, e2, s0)
  stateN = Concat <axis = 0> (u, r1)
)";
  const std::string read = R"(
  s1r = Constant <value = int64[1] {1}> ()
  e2r = Constant <value = int64[1] {2}> ()
  s0r = Constant <value = int64[1] {0}> ()
  h0 = Slice (state, s1r, e2r, s0r)
  c0 = Sub (h0, h0)
)";
  Analyzed a(PackedLstm(read, write));
  const StateAnalysis& h = a.State(0, "h");
  EXPECT_FALSE(h.exposure.has_value());
  EXPECT_THAT(h.finding.why_not, HasSubstr("Slice 'Slice_"));
  EXPECT_THAT(h.finding.why_not, HasSubstr("drops it"));
  // Without the Slice, stateN = Concat(state[0:1], Y_h): rows [1:2] are the pair.
  Analyzed whole(PackedLstm(read, With(With(write, "u = Slice (t, s0, em1, s0)", "u = Identity (t)"),
                                       "stateN = Concat <axis = 0> (u, r1)", "stateN = Identity (u)")));
  EXPECT_EQ(Region(ExposureOf(whole.State(0, "h"))), "[1:2, :, :]");
}

TEST(ExposureSoundness, ReversedSliceOnTheWayInStartsAtTheLastRow) {
  // state[INT64_MAX:0:-1] on [2, batch, 3] is row 1 alone (the start is clamped to the last row); read
  // backwards, its unit axis is an index.
  const std::string read = R"(
  big = Constant <value = int64[1] {9223372036854775807}> ()
  z1 = Constant <value = int64[1] {0}> ()
  m1 = Constant <value = int64[1] {-1}> ()
  h0 = Slice (state, big, z1, z1, m1)
  c0 = Sub (h0, h0)
)";
  const std::string write = R"(
  stateN = Concat <axis = 0> (Yc, Yh)
)";
  Analyzed a(PackedLstm(read, write));
  EXPECT_EQ(Region(ExposureOf(a.State(0, "h"))), "[1, :, :]");
}

// ---------------------------------------------------------------------------------------------------
// ScatterND: only reduction "none" is a write, and only without duplicate indices.

TEST(ExposureSoundness, ScatterNDThatAddsIsNoWrite) {
  std::string cache = Cache({0, 1}, {0, 1});
  Replace(cache, "\"\" : 14", "\"\" : 16");
  Analyzed plain(cache);
  ASSERT_TRUE(plain.State(0, "h").exposure.has_value());
  for (const char* reduction : {"add", "mul", "max", "min"}) {
    std::string text = cache;
    Replace(text, "C1 = ScatterND (C0", "C1 = ScatterND <reduction = \"" + std::string(reduction) + "\"> (C0");
    Analyzed a(text);
    const StateAnalysis& written = a.State(0, "h");
    EXPECT_FALSE(written.exposure.has_value()) << reduction;
    EXPECT_THAT(written.finding.why_not, HasSubstr("ScatterND")) << reduction;
    EXPECT_THAT(written.finding.why_not, HasSubstr("reduction '" + std::string(reduction) + "'")) << reduction;
    // GRU 1 reads row 1 back through that ScatterND, which writes row 0 only: its data passes there.
    EXPECT_TRUE(a.State(1, "h").exposure.has_value()) << reduction;
  }
  // Read back through a ScatterND that adds to the very row read: not a copy of the input.
  std::string added = Cache({0, 0}, {0, 1});
  Replace(added, "\"\" : 14", "\"\" : 16");
  Replace(added, "C1 = ScatterND (C0", "C1 = ScatterND <reduction = \"add\"> (C0");
  Analyzed a(added);
  EXPECT_FALSE(a.State(1, "h").exposure.has_value());
  EXPECT_THAT(a.State(1, "h").finding.why_not, HasSubstr("reduction 'add'"));
}

TEST(ExposureSoundness, ScatterNDWithDuplicateIndicesIsNoWrite) {
  // Both finals written at row 0 by one ScatterND: ONNX leaves which one lands undefined.
  const std::string text =
      kHeader + std::string(R"(g (float[seq, batch, 2] X, float[2, batch, 3] cache, float[1, 9, 2] W,
     float[1, 9, 3] R) => (float[seq, 1, batch, 3] Y, float[2, batch, 3] cache_out) {
  zero = Constant <value = int64 {0}> ()
  one = Constant <value = int64 {1}> ()
  axis0 = Constant <value = int64[1] {0}> ()
  rows = Constant <value = int64[2, 1] {0, 0}> ()
  g0 = Gather <axis = 0> (cache, zero)
  g1 = Gather <axis = 0> (cache, one)
  h0 = Unsqueeze (g0, axis0)
  h1 = Unsqueeze (g1, axis0)
  Y, Yh0 = GRU <hidden_size = 3> (X, W, R, , , h0)
  Y1, Yh1 = GRU <hidden_size = 3> (X, W, R, , , h1)
  updates = Concat <axis = 0> (Yh0, Yh1)
  cache_out = ScatterND (cache, rows, updates)
})");
  Analyzed a(text);
  for (size_t node = 0; node < 2; ++node) {
    const StateAnalysis& state = a.State(node, "h");
    EXPECT_FALSE(state.exposure.has_value()) << node;
    EXPECT_THAT(state.finding.why_not, HasSubstr("duplicate indices")) << node;
  }
  // Distinct rows [[0], [1]]: each final lands where it was read.
  Analyzed distinct(With(text, "int64[2, 1] {0, 0}", "int64[2, 1] {0, 1}"));
  EXPECT_EQ(Region(ExposureOf(distinct.State(0, "h"))), "[0, :, :]");
  EXPECT_EQ(Region(ExposureOf(distinct.State(1, "h"))), "[1, :, :]");
}

// ---------------------------------------------------------------------------------------------------
// The authors' "empty means start from zeros": the default branch must stand in state for state.

TEST(ExposureSoundness, DefaultBranchThatSwapsHAndCIsNotTheDefaultPath) {
  std::string text = BranchedLstm("empty", "zeros");
  Replace(text, "float[1, batch, 3] h_then, float[1, batch, 3] c_then",
          "float[1, batch, 3] c_then, float[1, batch, 3] h_then");
  Analyzed a(text);
  const size_t zeros = a.InBranch("then_branch"), fed = a.InBranch("else_branch");
  for (const char* kind : {"h", "c"}) {
    EXPECT_TRUE(a.State(fed, kind).exposed) << kind;
    const StateAnalysis& state = a.State(zeros, kind);
    EXPECT_FALSE(state.exposure.has_value()) << kind;
    EXPECT_FALSE(state.exposed) << kind;
    EXPECT_THAT(state.finding.why_not, HasSubstr("a state of another kind")) << kind;
  }
  EXPECT_THAT(Kinds(a.Problems()), ElementsAre("not_exposed", "not_exposed"));
}

/// Two LSTMs per branch of If(empty): the fed branch's A reads rows 0 (h) and 1 (c) of state [4, batch,
/// 3], B rows 2 and 3; the zero branch's Z1 and Z2 write rows `rows` (four of h1, c1, h2, c2) to stateN.
std::string TwoLayersBranched(const std::string& rows) {
  return kHeader +
         std::string(R"(g (float[seq, batch, 2] X, float[4, batch, 3] state, float[1, 12, 2] W, float[1, 12, 3] R)
    => (float[seq, 1, batch, 3] Y, float[4, batch, 3] stateN) {
  zero = Constant <value = int64 {0}> ()
  one = Constant <value = int64 {1}> ()
  two = Constant <value = int64 {2}> ()
  three = Constant <value = int64 {3}> ()
  axis0 = Constant <value = int64[1] {0}> ()
  one1 = Constant <value = int64[1] {1}> ()
  three1 = Constant <value = int64[1] {3}> ()
)") + kStateIsEmpty +
         R"(  Y, a, b, c, d = If (empty) <then_branch = zeros () => (float[seq, 1, batch, 3] Y_z, float[1, batch, 3] a_z,
      float[1, batch, 3] b_z, float[1, batch, 3] c_z, float[1, batch, 3] d_z) {
    xs = Shape (X)
    xb = Gather <axis = 0> (xs, one1)
    dims = Concat <axis = 0> (one1, xb, three1)
    z = ConstantOfShape (dims)
    Y_z, h1, c1 = LSTM <hidden_size = 3> (X, W, R, , , z, z)
    Y2, h2, c2 = LSTM <hidden_size = 3> (X, W, R, , , z, z)
)" + rows +
         R"(
  }, else_branch = fed () => (float[seq, 1, batch, 3] Y_f, float[1, batch, 3] a_f, float[1, batch, 3] b_f,
      float[1, batch, 3] c_f, float[1, batch, 3] d_f) {
    g0 = Gather <axis = 0> (state, zero)
    g1 = Gather <axis = 0> (state, one)
    g2 = Gather <axis = 0> (state, two)
    g3 = Gather <axis = 0> (state, three)
    ha = Unsqueeze (g0, axis0)
    ca = Unsqueeze (g1, axis0)
    hb = Unsqueeze (g2, axis0)
    cb = Unsqueeze (g3, axis0)
    Y_f, fa_h, fa_c = LSTM <hidden_size = 3> (X, W, R, , , ha, ca)
    Yb, fb_h, fb_c = LSTM <hidden_size = 3> (X, W, R, , , hb, cb)
    a_f = Identity (fa_h)
    b_f = Identity (fa_c)
    c_f = Identity (fb_h)
    d_f = Identity (fb_c)
  }>
  stateN = Concat <axis = 0> (a, b, c, d)
})";
}

TEST(ExposureSoundness, DefaultBranchMixingTwoOwnersIsNotTheDefaultPath) {
  // Each zero-branch state lands where a state of its kind reads, but Z1's h stands in for A's and its c
  // for B's: after an empty first call, A would start from Z1's h and Z2's c.
  Analyzed mixed(TwoLayersBranched(R"(
    a_z = Identity (h1)
    b_z = Identity (c2)
    c_z = Identity (h2)
    d_z = Identity (c1))"));
  Analyzed kept(TwoLayersBranched(R"(
    a_z = Identity (h1)
    b_z = Identity (c1)
    c_z = Identity (h2)
    d_z = Identity (c2))"));
  auto in_branch = [](const Analyzed& a, const std::string& branch) {
    std::vector<size_t> nodes;
    for (size_t i = 0; i < a.analysis.nodes.size(); ++i) {
      if (a.analysis.nodes[i].graph.back().attribute == branch) nodes.push_back(i);
    }
    return nodes;
  };
  const std::vector<size_t> zeros = in_branch(mixed, "then_branch"), fed = in_branch(mixed, "else_branch");
  ASSERT_EQ(zeros.size(), 2u);
  ASSERT_EQ(fed.size(), 2u);
  for (size_t k = 0; k < 2; ++k) {  // Z1 stands in for A, Z2 for B (graph order in each branch)
    for (const char* kind : {"h", "c"}) {
      EXPECT_FALSE(mixed.State(zeros[k], kind).exposure.has_value()) << k << kind;
      EXPECT_THAT(mixed.State(zeros[k], kind).finding.why_not, HasSubstr("several other owners")) << k << kind;
      EXPECT_EQ(ExposureOf(kept.State(zeros[k], kind)).default_path_of, kept.State(fed[k], kind).state.Label());
    }
  }
  EXPECT_THAT(kept.Problems(), IsEmpty());
}

// ---------------------------------------------------------------------------------------------------
// Element types, Dropout, an If in the main graph, negative indices, and the reasons given.

TEST(ExposureSoundness, InputAndOutputOfAnotherElementTypeAreNoPair) {
  // state float16, cast up for the LSTM; stateN float: feeding it back would round it to float16.
  std::string text = PackedLstm(With(With(kPackedRead, "hs = Gather <axis = 0> (state, zero)",
                                          "sf = Cast <to = 1> (state)\n  hs = Gather <axis = 0> (sf, zero)"),
                                     "Gather <axis = 0> (state, one)", "Gather <axis = 0> (sf, one)"));
  Replace(text, "float[2, batch, 3] state,", "float16[2, batch, 3] state,");
  Analyzed a(text);
  for (const char* kind : {"h", "c"}) {
    const StateAnalysis& state = a.State(0, kind);
    EXPECT_FALSE(state.exposure.has_value()) << kind;
    EXPECT_THAT(state.finding.why_not, HasSubstr("(FLOAT16)")) << kind;
    EXPECT_THAT(state.finding.why_not, HasSubstr("not the same element type")) << kind;
  }
}

TEST(ExposureSoundness, OnlyADropoutInInferenceModeIsAView) {
  const std::string constants =
      "  ratio = Constant <value = float {0.5}> ()\n  on = Constant <value = bool {1}> ()\n"
      "  off = Constant <value = bool {0}> ()\n";
  auto out = [&](const std::string& dropout) {
    return PackedLstm(kPackedRead, With(kPackedWrite, "hq = Squeeze (Yh, axis0)",
                                        constants + "  hd = " + dropout + "\n  hq = Squeeze (hd, axis0)"));
  };
  Analyzed training(out("Dropout (Yh, ratio, on)"));
  EXPECT_FALSE(training.State(0, "h").exposure.has_value());
  EXPECT_THAT(training.State(0, "h").finding.why_not, HasSubstr("Dropout"));
  EXPECT_THAT(training.State(0, "h").finding.why_not, HasSubstr("training_mode"));
  EXPECT_TRUE(training.State(0, "c").exposure.has_value());
  EXPECT_TRUE(Analyzed(out("Dropout (Yh, ratio, off)")).State(0, "h").exposure.has_value());
  EXPECT_TRUE(Analyzed(out("Dropout (Yh, ratio)")).State(0, "h").exposure.has_value());
  // On the way in, and a training_mode that is not a constant (a graph input: the caller decides).
  Analyzed in(PackedLstm(With(kPackedRead, "h0 = Unsqueeze (hs, axis0)",
                              constants + "  hd = Dropout (hs, ratio, on)\n  h0 = Unsqueeze (hd, axis0)")));
  EXPECT_FALSE(in.State(0, "h").exposure.has_value());
  EXPECT_THAT(in.State(0, "h").finding.why_not, HasSubstr("training_mode"));
  std::string fed = out("Dropout (Yh, ratio, mode)");
  Replace(fed, "float[1, 12, 3] R)", "float[1, 12, 3] R, bool mode)");
  EXPECT_FALSE(Analyzed(fed).State(0, "h").exposure.has_value());
}

/// An If in the main graph that only chooses the LSTM's initial h and c: zeros when `condition`, else
/// rows 0 and 1 of state (the authors' "empty means start from zeros" with one LSTM).
std::string InitialChosenByIf(const std::string& condition) {
  return kHeader + std::string(R"(g (float[seq, batch, 2] X, float[2, batch, 3] state, bool flag, float[1, 12, 2] W,
     float[1, 12, 3] R) => (float[seq, 1, batch, 3] Y, float[2, batch, 3] stateN) {
  zero = Constant <value = int64 {0}> ()
  one = Constant <value = int64 {1}> ()
  z1 = Constant <value = int64[1] {0}> ()
  o1 = Constant <value = int64[1] {1}> ()
  t1 = Constant <value = int64[1] {2}> ()
  three1 = Constant <value = int64[1] {3}> ()
)") + kStateIsEmpty +
         "  h0, c0 = If (" + condition +
         R"() <then_branch = zeros () => (float[1, batch, 3] hz, float[1, batch, 3] cz) {
    xs = Shape (X)
    xb = Gather <axis = 0> (xs, o1)
    dims = Concat <axis = 0> (o1, xb, three1)
    z = ConstantOfShape (dims)
    hz = Identity (z)
    cz = Identity (z)
  }, else_branch = fed () => (float[1, batch, 3] hf, float[1, batch, 3] cf) {
    hf = Slice (state, z1, o1, z1)
    cf = Slice (state, o1, t1, z1)
  }>
  Y, Yh, Yc = LSTM <hidden_size = 3> (X, W, R, , , h0, c0)
  stateN = Concat <axis = 0> (Yh, Yc)
})";
}

TEST(ExposureSoundness, MainGraphIfChoosingZerosWhenTheStateIsEmptyReadsTheState) {
  Analyzed a(InitialChosenByIf("empty"));
  EXPECT_EQ(Region(ExposureOf(a.State(0, "h"))), "[0:1, :, :]");
  EXPECT_EQ(Region(ExposureOf(a.State(0, "c"))), "[1:2, :, :]");
  EXPECT_THAT(a.Problems(), IsEmpty());
  // Zeros on another condition: feeding stateN back does not stream when `flag` is set.
  Analyzed flagged(InitialChosenByIf("flag"));
  EXPECT_FALSE(flagged.State(0, "h").exposure.has_value());
  EXPECT_THAT(flagged.State(0, "h").finding.why_not, HasSubstr("not exactly when 'state' is empty"));
}

TEST(ExposureSoundness, NegativeGatherIndexOnTheWayOutIsCountedFromTheEnd) {
  Analyzed a(PackedLstm(kPackedRead, With(kPackedWrite, "hq = Squeeze (Yh, axis0)",
                                          "m2 = Constant <value = int64 {-2}> ()\n  cat = Concat <axis = 0> (Yh, Yc)\n"
                                          "  hq = Gather <axis = 0> (cat, m2)")));
  EXPECT_EQ(Region(ExposureOf(a.State(0, "h"))), "[0, :, :]");
}

TEST(ExposureSoundness, NotWrittenOutSaysWhichOperatorOrValueStopped) {
  // The output is the input unchanged: the final value itself is used by nothing.
  Analyzed unchanged(PackedLstm(kPackedRead, "  stateN = Identity (state)\n"));
  EXPECT_THAT(unchanged.State(0, "h").finding.why_not,
              HasSubstr("its final value reaches no graph output (the final value 'Yh' is used by nothing)"));
  // Used only by an operator that is no view.
  Analyzed computed(PackedLstm(
      kPackedRead, With(kPackedWrite, "hq = Squeeze (Yh, axis0)", "hd = Add (Yh, Yh)\n  hq = Squeeze (hd, axis0)")));
  EXPECT_THAT(computed.State(0, "h").finding.why_not, HasSubstr("'Yh' goes into Add 'Add_"));
  EXPECT_THAT(computed.State(0, "h").finding.why_not, HasSubstr("which is not a view"));
  // A view that breaks the proof is named before any use that is no view.
  Analyzed gathered(PackedLstm(kPackedRead, With(kPackedWrite, "hq = Squeeze (Yh, axis0)",
                                                 "hd = Add (Yh, Yh)\n  k = Shape (Yh)\n  hq = Gather (hd, k)\n"
                                                 "  hk = Gather <axis = 0> (Yh, k)")));
  EXPECT_THAT(gathered.State(0, "h").finding.why_not, HasSubstr("takes indices that are not constants"));
}

}  // namespace
}  // namespace rnnstate::exposure_soundness_test
