// Issue 32, pattern 1: the authors' state read as rows of an outer-scope graph input through any number
// of If levels, whichever branch computes the default, with Gather/Slice/Split/Squeeze/Unsqueeze between;
// and the final state leaving through `stateN + Cast(sr * 0)`, which PyTorch 2.3's Silero export writes
// to keep `sr` used. Each positive model has a negative control with one defect.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "exposure/view_ops.h"
#include "exposure_test_models.h"
#include "states/state_origin.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate {
namespace {

using namespace test_names;

/// PackedLstm with an int64 input `sr` and stateN = Add(Concat(...), `addend`), `addend` computed by
/// `nodes` (which may use `sr`, `izero` = 0, `ione` = 1, `fzero` = 0.0).
std::string WithAddend(const std::string& nodes, const std::string& addend, const std::string& op = "Add") {
  std::string write = kPackedWrite;
  Replace(write, "stateN = Concat", "packed = Concat");
  write += "  izero = Constant <value = int64 {0}> ()\n  ione = Constant <value = int64 {1}> ()\n";
  write += "  fzero = Constant <value = float {0.0}> ()\n" + nodes;
  write += "  stateN = " + op + " (" + addend + ")\n";
  std::string text = PackedLstm(kPackedRead, write);
  Replace(text, "float[1, 12, 3] R)", "float[1, 12, 3] R, int64 sr, float gain)");
  return text;
}

const std::string kSrTimesZero = "  m = Mul (sr, izero)\n  z = Cast <to = 1> (m)\n";

TEST(AuthorIfState, AddOfTheSampleRateTimesZeroPassesTheFinalOn) {
  Analyzed a(WithAddend(kSrTimesZero, "packed, z"));
  for (const char* kind : {"h", "c"}) {
    const Exposure& exposure = ExposureOf(a.State(0, kind));
    EXPECT_EQ(exposure.output, "stateN");
    EXPECT_EQ(Region(exposure), kind == std::string("h") ? "[0, :, :]" : "[1, :, :]");
  }
  EXPECT_THAT(a.Problems(), IsEmpty());
  // Either operand order, and a Sub of zero.
  EXPECT_THAT(Analyzed(WithAddend(kSrTimesZero, "z, packed")).Problems(), IsEmpty());
  EXPECT_THAT(Analyzed(WithAddend(kSrTimesZero, "packed, z", "Sub")).Problems(), IsEmpty());
}

TEST(AuthorIfState, AnAddendThatIsNotProvablyZeroStopsTheProof) {
  struct Control {
    const char* what;
    std::string nodes, addend, op;
  };
  const Control controls[] = {
      {"sr * 1", "  m = Mul (sr, ione)\n  z = Cast <to = 1> (m)\n", "packed, z", "Add"},
      // gain * 0.0 is NaN for an infinite gain: a float product with zero is not provably zero.
      {"gain * 0.0", "  z = Mul (gain, fzero)\n", "packed, z", "Add"},
      {"0 - stateN", kSrTimesZero, "z, packed", "Sub"},
      {"a zero that broadcasts the state up",
       "  shape = Constant <value = int64[4] {2, 2, 1, 1}> ()\n  z = ConstantOfShape (shape)\n", "packed, z", "Add"},
  };
  for (const Control& control : controls) {
    Analyzed a(WithAddend(control.nodes, control.addend, control.op));
    EXPECT_FALSE(a.State(0, "h").exposure.has_value()) << control.what;
    EXPECT_THAT(a.State(0, "h").finding.why_not, HasSubstr("reaches no graph output")) << control.what;
    EXPECT_THAT(Kinds(a.Problems()), ::testing::Contains("not_exposed")) << control.what;
  }
}

TEST(AuthorIfState, AnIntegerProductWithAZeroFactorIsZeroAFloatOneIsNot) {
  const onnx::ModelProto model = testing::ParseModel(testing::kHeader + std::string(R"(
g (int64 sr, float gain) => (float a, float b, int64 c) {
  izero = Constant <value = int64 {0}> ()
  fzero = Constant <value = float {0.0}> ()
  m = Mul (izero, sr)
  a = Cast <to = 1> (m)
  b = Mul (gain, fzero)
  c = Mul (sr, sr)
})"));
  const ModelIndex index(model);
  EXPECT_TRUE(IsProvablyZero(index, GraphPath{}, "a"));
  EXPECT_FALSE(IsProvablyZero(index, GraphPath{}, "b"));
  EXPECT_FALSE(IsProvablyZero(index, GraphPath{}, "c"));
}

/// Three If levels around the authors' state [2, batch, 3]: If(sr == 16000) per rate; in the 16 kHz
/// branch an If on the fed state's batch being 0 whose `zeros_branch` starts the LSTM from zeros and
/// whose other branch reads h and c with Split (rows [1, batch, 3]) through a third If (on `flag`) that
/// passes them on (Identity, or Squeeze(Unsqueeze(.))); the 8 kHz branch reads Slice rows. Finals:
/// stateN = Concat(h, c) of the outer If's outputs. `empty_test`: the condition of the middle If.
std::string ThreeLevels(const std::string& zeros_branch, const std::string& empty_test = "empty") {
  const std::string zeros = R"(
        xs = Shape (X)
        xb = Gather <axis = 0> (xs, one)
        dims = Concat <axis = 0> (one1, xb, three1)
        hz0 = ConstantOfShape (dims)
        Yz, hz, cz = LSTM <hidden_size = 3> (X, W, R, , , hz0, hz0)
)";
  const std::string fed = R"(
        hs, cs = Split <axis = 0> (state)
        hp, cp = If (flag) <then_branch = pass () => (float[1, batch, 3] hp1, float[1, batch, 3] cp1) {
          hp1 = Identity (hs)
          cp1 = Identity (cs)
        }, else_branch = squeezed () => (float[1, batch, 3] hp2, float[1, batch, 3] cp2) {
          hq = Squeeze (hs, axis0)
          hp2 = Unsqueeze (hq, axis0)
          cq = Squeeze (cs, axis0)
          cp2 = Unsqueeze (cq, axis0)
        }>
        Yf, hf, cf = LSTM <hidden_size = 3> (X, W, R, , , hp, cp)
)";
  auto branch = [&](const std::string& name, bool zero) {
    const std::string p = zero ? "z" : "f";
    return name + " () => (float[seq, 1, batch, 3] Y" + p + "o, float[1, batch, 3] h" + p + "o, float[1, batch, 3] c" +
           p + "o) {" + (zero ? zeros : fed) + "        Y" + p + "o = Identity (Y" + p + ")\n        h" + p +
           "o = Identity (h" + p + ")\n        c" + p + "o = Identity (c" + p + ")\n      }";
  };
  const bool then_zero = zeros_branch == "then_branch";
  return testing::kHeader + std::string(R"(g (float[seq, batch, 2] X, float[2, batch, 3] state, int64 sr, bool flag,
     float[1, 12, 2] W, float[1, 12, 3] R) => (float[seq, 1, batch, 3] Y, float[2, batch, 3] stateN) {
  zero = Constant <value = int64 {0}> ()
  one = Constant <value = int64 {1}> ()
  axis0 = Constant <value = int64[1] {0}> ()
  one1 = Constant <value = int64[1] {1}> ()
  two1 = Constant <value = int64[1] {2}> ()
  three1 = Constant <value = int64[1] {3}> ()
  rate = Constant <value = int64 {16000}> ()
)") + kStateIsEmpty +
         R"(  fed = Not (empty)
  is16 = Equal (sr, rate)
  Y, hN, cN = If (is16) <then_branch = r16 () => (float[seq, 1, batch, 3] Y16, float[1, batch, 3] h16,
      float[1, batch, 3] c16) {
    Y16, h16, c16 = If ()" +
         empty_test + ") <then_branch = " + branch("a", then_zero) + ", else_branch = " + branch("b", !then_zero) +
         R"(>
  }, else_branch = r8 () => (float[seq, 1, batch, 3] Y8o, float[1, batch, 3] h8o, float[1, batch, 3] c8o) {
    h8 = Slice (state, axis0, one1, axis0)
    c8 = Slice (state, one1, two1, axis0)
    Y8, h8f, c8f = LSTM <hidden_size = 3> (X, W, R, , , h8, c8)
    Y8o = Identity (Y8)
    h8o = Identity (h8f)
    c8o = Identity (c8f)
  }>
  stateN = Concat <axis = 0> (hN, cN)
})";
}

void ExpectEveryStateTheAuthors(const Analyzed& a, const std::string& zeros_branch) {
  ASSERT_EQ(a.analysis.nodes.size(), 3u);
  for (size_t node = 0; node < 3; ++node) {
    const bool zeros =
        a.analysis.nodes[node].graph.size() == 2 && a.analysis.nodes[node].graph[1].attribute == zeros_branch;
    for (const char* kind : {"h", "c"}) {
      const StateAnalysis& state = a.State(node, kind);
      const Exposure& exposure = ExposureOf(state);
      EXPECT_EQ(exposure.input, "state") << state.state.Label();
      EXPECT_EQ(exposure.output, "stateN") << state.state.Label();
      // Gather and Split name the row by its index, Slice by a range of one (it keeps the axis).
      const std::string row = kind == std::string("h") ? "0" : "1";
      EXPECT_THAT(Region(exposure), ::testing::AnyOf("[" + row + ", :, :]",
                                                     "[" + row + ":" + std::to_string(std::stoi(row) + 1) + ", :, :]"))
          << state.state.Label();
      EXPECT_EQ(exposure.default_path_of.empty(), !zeros) << state.state.Label();
    }
  }
  EXPECT_THAT(a.Problems(), IsEmpty());
  // The rewrite adds nothing and records a pair per state.
  const Plan plan = a.PlanWith();
  EXPECT_EQ(plan.pairs.size(), 6u);
  for (const StatePair& pair : plan.pairs) {
    EXPECT_EQ(pair.input, "state");
    EXPECT_EQ(pair.output, "stateN");
  }
}

TEST(AuthorIfState, RowsThroughThreeIfLevelsWithTheDefaultInTheThenBranch) {
  ExpectEveryStateTheAuthors(Analyzed(ThreeLevels("then_branch")), "then_branch");
}

TEST(AuthorIfState, RowsThroughThreeIfLevelsWithTheDefaultInTheElseBranch) {
  ExpectEveryStateTheAuthors(Analyzed(ThreeLevels("else_branch", "fed")), "else_branch");
}

TEST(AuthorIfState, AZeroBranchChosenByAnotherConditionIsNoDefaultPath) {
  // The middle If tests `flag`, not the fed state: its zeros branch restarts whatever is fed.
  Analyzed a(ThreeLevels("then_branch", "flag"));
  size_t zeros = a.analysis.nodes.size();
  for (size_t node = 0; node < a.analysis.nodes.size(); ++node) {
    const GraphPath& graph = a.analysis.nodes[node].graph;
    if (graph.size() == 2 && graph[1].attribute == "then_branch") zeros = node;
  }
  ASSERT_LT(zeros, a.analysis.nodes.size());
  EXPECT_FALSE(a.State(zeros, "h").exposed);
  EXPECT_THAT(Kinds(a.Problems()), ::testing::ElementsAre("not_exposed", "not_exposed"));
}

}  // namespace
}  // namespace rnnstate
