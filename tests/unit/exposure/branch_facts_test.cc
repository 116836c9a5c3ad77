// Branch facts (branch_facts.h) and what they let the exposure walks see: PyTorch's "unbatched input" rank
// tests around an LSTM, as Silero VAD v5 exports them (an If on Not(Equal(Size(Shape(x)), 2)) picks
// Unsqueeze or Identity for X and for the states, and squeezes the finals back). The branch that would
// give the LSTM a rank-4 initial state never runs; every If on the same test then takes the other branch,
// and the state read from rows of `state` and written back to `stateN` is the authors' pair.

#include "exposure/branch_facts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "exposure/default_path.h"
#include "exposure_test_models.h"
#include "find/analysis.h"
#include "graph/model_index.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::branch_facts_test {
namespace {

using namespace test_names;

/// The rank tests of an unbatched-capable LSTM (x2 is rank 2: the then branches never run).
std::string RankTested() {
  return kHeader + std::string(R"(g (float[seq, batch, 2] X, float[2, batch, 3] state, float[1, 12, 2] W, float[1, 12, 3] R)
    => (float[1, 1, batch, 3] Y, float[2, batch, 3] stateN) {
  zero = Constant <value = int64 {0}> ()
  one = Constant <value = int64 {1}> ()
  two = Constant <value = int64 {2}> ()
  axis0 = Constant <value = int64[1] {0}> ()
  x2 = Gather <axis = 0> (X, zero)
  shape = Shape (x2)
  rank = Size (shape)
  batched = Equal (rank, two)
  unbatched = Not (batched)
  c1 = Cast <to = 9> (unbatched)
  c2 = Cast <to = 9> (unbatched)
  c3 = Cast <to = 9> (unbatched)
  hs = Gather <axis = 0> (state, zero)
  cs = Gather <axis = 0> (state, one)
  xi = If (c1) <then_branch = t1 () => (float[1, batch, 2] xo) { xo = Unsqueeze (x2, axis0) },
                else_branch = e1 () => (float[batch, 2] xe) { xe = Identity (x2) }>
  hi, ci = If (c2) <then_branch = t2 () => (float[1, batch, 3] ho, float[1, batch, 3] co) {
                      ho = Unsqueeze (hs, axis0)
                      co = Unsqueeze (cs, axis0) },
                    else_branch = e2 () => (float[batch, 3] he, float[batch, 3] ce) {
                      he = Identity (hs)
                      ce = Identity (cs) }>
  x3 = Unsqueeze (xi, axis0)
  h0 = Unsqueeze (hi, axis0)
  c0 = Unsqueeze (ci, axis0)
  Y, Yh, Yc = LSTM <hidden_size = 3> (x3, W, R, , , h0, c0)
  hq = Squeeze (Yh, axis0)
  cq = Squeeze (Yc, axis0)
  hf, cf = If (c3) <then_branch = t3 () => (float[3] hso, float[3] cso) {
                      hso = Squeeze (hq, axis0)
                      cso = Squeeze (cq, axis0) },
                    else_branch = e3 () => (float[batch, 3] hid, float[batch, 3] cid) {
                      hid = Identity (hq)
                      cid = Identity (cq) }>
  hu = Unsqueeze (hf, axis0)
  cu = Unsqueeze (cf, axis0)
  stateN = Concat <axis = 0> (hu, cu)
})");
}

TEST(BranchFacts, ARankTheRecurrentNodeCannotTakeDecidesTheTestForEveryIfOnIt) {
  const onnx::ModelProto model = testing::ParseModel(RankTested());
  const ModelIndex index(model);
  const BranchFacts facts = BranchFacts::Find(index);
  EXPECT_EQ(facts.size(), 1u) << "one test value (`unbatched`), read through three Casts";
  for (int node = 0; node < model.graph().node_size(); ++node) {
    if (model.graph().node(node).op_type() != "If") continue;
    EXPECT_TRUE(facts.Excludes(index, {}, node, "then_branch")) << node;
    EXPECT_FALSE(facts.Excludes(index, {}, node, "else_branch")) << node;
  }
}

TEST(BranchFacts, TheAuthorsRowsAreThePairThroughTheRankTests) {
  Analyzed a(RankTested());
  for (const char* kind : {"h", "c"}) {
    const StateAnalysis& state = a.State(0, kind);
    EXPECT_TRUE(state.exposed) << kind << ": " << state.finding.why_not;
    EXPECT_EQ(ExposureOf(state).input, "state");
    EXPECT_EQ(ExposureOf(state).output, "stateN");
    EXPECT_EQ(Region(ExposureOf(state)), std::string(kind) == "h" ? "[0, :, :]" : "[1, :, :]");
  }
}

TEST(BranchFacts, WithoutARankContradictionNothingIsKnownAndTheSqueezeBranchBreaksTheWrite) {
  // Both branches of the states' If give rank 2: no fact; the finals' If may squeeze the batch away.
  std::string text = RankTested();
  Replace(text, "ho = Unsqueeze (hs, axis0)", "ho = Identity (hs)");
  Replace(text, "co = Unsqueeze (cs, axis0)", "co = Identity (cs)");
  Replace(text, "=> (float[1, batch, 3] ho, float[1, batch, 3] co)", "=> (float[batch, 3] ho, float[batch, 3] co)");
  Replace(text, "xo = Unsqueeze (x2, axis0)", "xo = Identity (x2)");
  Replace(text, "=> (float[1, batch, 2] xo)", "=> (float[batch, 2] xo)");
  const onnx::ModelProto model = testing::ParseModel(text);
  const ModelIndex index(model);
  EXPECT_EQ(BranchFacts::Find(index).size(), 0u);
  Analyzed a(text);
  EXPECT_FALSE(a.State(0, "h").exposed);
}

TEST(BranchFacts, AWriteReadInsideBothBranchesAsTheSameViewLeavesThroughTheIf) {
  // The finals' If squeezes nothing in either branch: its outputs hold the state whatever it takes.
  std::string text = RankTested();
  Replace(text, "hso = Squeeze (hq, axis0)", "hso = Identity (hq)");
  Replace(text, "cso = Squeeze (cq, axis0)", "cso = Identity (cq)");
  Replace(text, "=> (float[3] hso, float[3] cso)", "=> (float[batch, 3] hso, float[batch, 3] cso)");
  Analyzed a(text);
  EXPECT_TRUE(a.State(0, "h").exposed) << a.State(0, "h").finding.why_not;
}

TEST(DefaultPath, LenOfAStackedStateTestsItsFixedFirstAxis) {
  // PyTorch's `if len(state)`: Cast(Squeeze(Gather(Shape(state), [0]))) - axis 0, declared 2.
  const onnx::ModelProto model = testing::ParseModel(kHeader + std::string(R"(g (float[2, batch, 3] state) => (float[2, batch, 3] out) {
  first = Constant <value = int64[1] {0}> ()
  shape = Shape (state)
  n = Gather <axis = 0> (shape, first)
  ns = Squeeze (n, first)
  fed = Cast <to = 9> (ns)
  out = If (fed) <then_branch = t () => (float[2, batch, 3] a) { a = Identity (state) },
                  else_branch = e () => (float[2, batch, 3] b) { b = Identity (state) }>
})"));
  const ModelIndex index(model);
  const int select = model.graph().node_size() - 1;
  EXPECT_TRUE(RunsOnlyWhenEmpty(index, {}, select, "else_branch", {{"state", 1}}));
  EXPECT_FALSE(RunsOnlyWhenEmpty(index, {}, select, "then_branch", {{"state", 1}}));
}

}  // namespace
}  // namespace rnnstate::branch_facts_test
