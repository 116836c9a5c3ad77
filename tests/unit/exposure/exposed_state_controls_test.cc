// States the authors expose, continued: a cache updated in place (form 4), pairs that are not one-to-one
// (form 5), and the negative controls, each one small model with a single defect that must not be
// recognized. The models follow exposed_state_test.cc's.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "exposure/exposed_state.h"
#include "exposure/exposure.h"
#include "exposure_test_models.h"
#include "find/analysis.h"
#include "test_models.h"
#include "test_names.h"
#include "views/check.h"

namespace rnnstate::exposed_state_controls_test {
namespace {

using namespace test_names;

// ---------------------------------------------------------------------------------------------------
// Form 4: a cache updated in place with ScatterND.

TEST(ExposedState, CacheUpdatedInPlaceByScatterND) {
  Analyzed a(Cache({0, 1, 2}, {0, 1, 2}));
  ASSERT_EQ(a.analysis.nodes.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const StateAnalysis& state = a.State(i, "h");
    const Exposure& exposure = ExposureOf(state);
    EXPECT_EQ(exposure.input, "cache");
    EXPECT_EQ(exposure.output, "cache_out");
    EXPECT_EQ(Region(exposure), "[" + std::to_string(i) + ", :, :]");
    EXPECT_THAT(exposure.axes, ElementsAre("batch", "hidden_size"));
  }
  // GRU 2 reads the cache after GRU 0 and 1 updated other rows: the read goes back through both ScatterNDs.
  const ReadTrace read = TraceRead(*a.index, a.State(2, "h").state);
  ASSERT_TRUE(read.place.has_value()) << read.broken;
  EXPECT_EQ(read.place->tensor, "cache");
  EXPECT_THAT(a.Problems(), IsEmpty());
}

TEST(ExposedState, CacheWrittenAtAnotherIndexIsNotExposed) {
  Analyzed a(Cache({0, 1}, {0, 2}));
  EXPECT_EQ(Region(ExposureOf(a.State(0, "h"))), "[0, :, :]");
  const StateAnalysis& wrong = a.State(1, "h");
  EXPECT_FALSE(wrong.exposed);
  EXPECT_EQ(wrong.finding.read, "input 'cache' [1, :, :]");
  EXPECT_EQ(wrong.finding.written, "output 'cache_out' [2, :, :]");
  EXPECT_THAT(wrong.finding.why_not, HasSubstr("not the same elements"));
  const std::vector<CheckProblem> problems = a.Problems();
  ASSERT_THAT(Kinds(problems), ElementsAre("not_exposed"));
  EXPECT_THAT(problems[0].message, HasSubstr("read from input 'cache' [1, :, :] but written to output 'cache_out' "
                                             "[2, :, :]: not the same elements"));
}

TEST(ExposedState, CacheRowOverwrittenByALaterUpdateIsNotWritten) {
  // Both GRUs write row 0: GRU 0's final is overwritten by GRU 1's.
  Analyzed a(Cache({0, 1}, {0, 0}));
  const StateAnalysis& overwritten = a.State(0, "h");
  EXPECT_FALSE(overwritten.exposed);
  EXPECT_THAT(overwritten.finding.why_not, HasSubstr("its final value reaches no graph output"));
  EXPECT_THAT(overwritten.finding.why_not, HasSubstr("overwrites it"));
}

// ---------------------------------------------------------------------------------------------------
// Form 5: not one-to-one.

TEST(ExposedState, DirectInputsWithAPackedOutputAreNotOneToOne) {
  Analyzed a(kHeader + std::string(R"(g (float[seq, batch, 2] X, float[1, batch, 3] h_in, float[1, batch, 3] c_in,
     float[1, 12, 2] W, float[1, 12, 3] R) => (float[seq, 1, batch, 3] Y, float[2, batch, 3] state_out) {
  Y, Yh, Yc = LSTM <hidden_size = 3> (X, W, R, , , h_in, c_in)
  state_out = Concat <axis = 0> (Yh, Yc)
})"));
  const StateAnalysis& h = a.State(0, "h");
  EXPECT_FALSE(h.exposed);
  EXPECT_FALSE(h.exposure.has_value());
  EXPECT_THAT(h.finding.why_not, HasSubstr("fed whole by input 'h_in' but written to output 'state_out' [0:1, :, :]: "
                                           "not one-to-one"));
  EXPECT_THAT(a.State(0, "c").finding.why_not, HasSubstr("[1:2, :, :]: not one-to-one"));
}

TEST(ExposedState, PackedInputWithDirectOutputsIsNotOneToOne) {
  Analyzed a(kHeader + std::string(R"(g (float[seq, batch, 2] X, float[2, batch, 3] state_in, float[1, 12, 2] W,
     float[1, 12, 3] R) => (float[seq, 1, batch, 3] Y, float[1, batch, 3] h_out, float[1, batch, 3] c_out) {
  zero = Constant <value = int64[1] {0}> ()
  one = Constant <value = int64[1] {1}> ()
  two = Constant <value = int64[1] {2}> ()
  h0 = Slice (state_in, zero, one, zero)
  c0 = Slice (state_in, one, two, zero)
  Y, h_out, c_out = LSTM <hidden_size = 3> (X, W, R, , , h0, c0)
})"));
  for (const char* kind : {"h", "c"}) {
    const StateAnalysis& state = a.State(0, kind);
    EXPECT_FALSE(state.exposed) << kind;
    EXPECT_THAT(state.finding.why_not, HasSubstr("written whole to output '" + std::string(kind) + "_out'"));
    EXPECT_THAT(state.finding.why_not, HasSubstr("not one-to-one"));
  }
  EXPECT_THAT(a.State(0, "h").finding.why_not, HasSubstr("read from input 'state_in' [0:1, :, :]"));
}

// ---------------------------------------------------------------------------------------------------
// Negative controls: one defect each.

TEST(ExposedState, RowsReadByTwoStatesAreNotExposed) {
  // Both layers read h0[0:1]; layer 0 ends in h_n[0:1], layer 1 in h_n[1:2]. Fed back h_n, layer 1 would
  // start from layer 0's final state.
  Analyzed a(StackedGrus("zero, one"));
  const StateAnalysis& first = a.State(0, "h");
  EXPECT_FALSE(first.exposed);
  EXPECT_EQ(first.finding.why_not,
            "rows [0:1] of input 'h0', axis 0 -> rows [0:1] of output 'h_n', but another state claims the same "
            "elements");
  const StateAnalysis& second = a.State(1, "h");
  EXPECT_FALSE(second.exposed);
  EXPECT_THAT(second.finding.why_not,
              HasSubstr("read from input 'h0' [0:1, :, :] but written to output 'h_n' [1:2, :, :]"));
}

TEST(ExposedState, FinalWrittenToOtherRowsThanReadIsNotExposed) {
  // The final state lands one row further than it was read (a shift).
  Analyzed a(kHeader + std::string(R"(g (float[seq, batch, 2] X, float[2, batch, 3] state, float[1, 9, 2] W,
     float[1, 9, 3] R) => (float[seq, 1, batch, 3] Y, float[2, batch, 3] stateN) {
  zero = Constant <value = int64[1] {0}> ()
  one = Constant <value = int64[1] {1}> ()
  two = Constant <value = int64[1] {2}> ()
  h0 = Slice (state, zero, one, zero)
  Y, Yh = GRU <hidden_size = 3> (X, W, R, , , h0)
  kept = Slice (state, one, two, zero)
  stateN = Concat <axis = 0> (kept, Yh)
})"));
  const StateAnalysis& h = a.State(0, "h");
  EXPECT_FALSE(h.exposed);
  EXPECT_EQ(h.finding.why_not,
            "read from input 'state' [0:1, :, :] but written to output 'stateN' [1:2, :, :]: not the same elements");
}

TEST(ExposedState, HAndCSwappedAreNotExposed) {
  std::string write = kPackedWrite;
  Replace(write, "Concat <axis = 0> (hu, cu)", "Concat <axis = 0> (cu, hu)");
  Analyzed a(PackedLstm(kPackedRead, write));
  for (const char* kind : {"h", "c"}) {
    EXPECT_FALSE(a.State(0, kind).exposed) << kind;
    EXPECT_THAT(a.State(0, kind).finding.why_not, HasSubstr("not the same elements")) << kind;
  }
  EXPECT_THAT(a.State(0, "h").finding.why_not, HasSubstr("read from input 'state' [0, :, :]"));
  EXPECT_EQ(a.State(0, "h").finding.written, "output 'stateN' [1, :, :]");
  // check says why, in the not_exposed message.
  const std::vector<CheckProblem> problems = a.Problems();
  ASSERT_THAT(Kinds(problems), ElementsAre("not_exposed", "not_exposed"));
  EXPECT_THAT(problems[0].message, HasSubstr("state h is not exposed (read from input 'state' [0, :, :] but written "
                                             "to output 'stateN' [1, :, :]: not the same elements; no state pair"));
}

TEST(ExposedState, OutputThatIsTheInputUnchangedIsNotExposed) {
  // stateN = state: the finals are dropped, so feeding stateN back restarts every call from the same state.
  Analyzed a(PackedLstm(kPackedRead, "  stateN = Identity (state)\n"));
  for (const char* kind : {"h", "c"}) {
    const StateAnalysis& state = a.State(0, kind);
    EXPECT_FALSE(state.exposed) << kind;
    EXPECT_THAT(state.finding.why_not, HasSubstr("its final value reaches no graph output")) << kind;
  }
  EXPECT_THAT(a.State(0, "c").finding.why_not, HasSubstr("read from input 'state' [1, :, :]"));
}

TEST(ExposedState, LossyCastOnTheWayOutIsNotExposed) {
  // float -> float16 -> float rounds the final state: stateN holds a rounded copy, not the final.
  std::string write = kPackedWrite;
  Replace(write, "stateN = Concat <axis = 0> (hu, cu)", R"(packed = Concat <axis = 0> (hu, cu)
  narrow = Cast <to = 10> (packed)
  stateN = Cast <to = 1> (narrow))");
  Analyzed a(PackedLstm(kPackedRead, write));
  for (const char* kind : {"h", "c"}) {
    EXPECT_FALSE(a.State(0, kind).exposed) << kind;
    EXPECT_THAT(a.State(0, kind).finding.why_not, HasSubstr("through a Cast that loses precision")) << kind;
  }
  // The same Casts through double lose nothing.
  Replace(write, "Cast <to = 10> (packed)", "Cast <to = 11> (packed)");
  Analyzed lossless(PackedLstm(kPackedRead, write));
  EXPECT_TRUE(lossless.State(0, "h").exposed) << lossless.State(0, "h").finding.why_not;
}

TEST(ExposedState, LossyCastOnTheWayInIsNotExposed) {
  std::string read = kPackedRead;
  Replace(read, "hs = Gather <axis = 0> (state, zero)", R"(hw = Gather <axis = 0> (state, zero)
  hn = Cast <to = 10> (hw)
  hs = Cast <to = 1> (hn))");
  Analyzed a(PackedLstm(read));
  EXPECT_FALSE(a.State(0, "h").exposed);
  EXPECT_EQ(a.State(0, "h").finding.why_not,
            "its initial value is not a view of a graph input: a Cast on the way loses precision");
  EXPECT_TRUE(a.State(0, "c").exposed) << "c is read without the Casts";
}

TEST(ExposedState, ClaimsConflictOnSharedTensors) {
  const std::string state = "state", other = "other", out = "out", out2 = "out2";
  const std::vector<RegionAxis> row0{{RegionAxis::Kind::kIndex, 0, 0}, {}, {}};
  const std::vector<RegionAxis> row1{{RegionAxis::Kind::kIndex, 1, 0}, {}, {}};
  const std::vector<RegionAxis> rows01{{RegionAxis::Kind::kRange, 0, 2}, {}, {}};
  // Disjoint regions of one input and one output: the packed form.
  EXPECT_EQ(ClaimsConflict({state, out, row0}, {state, out, row1}), ClaimConflict::kNone);
  EXPECT_EQ(ClaimsConflict({state, out, row0}, {other, out2, row0}), ClaimConflict::kNone);
  // Overlapping regions: two states, one value.
  EXPECT_EQ(ClaimsConflict({state, out, row0}, {state, out, rows01}), ClaimConflict::kOverlapping);
  EXPECT_EQ(ClaimsConflict({state, out, row1}, {state, out2, row1}), ClaimConflict::kOverlapping);
  // One input paired with two outputs: a runner would have two tensors to feed it from.
  EXPECT_EQ(ClaimsConflict({state, out, row0}, {state, out2, row1}), ClaimConflict::kCrossed);
  EXPECT_EQ(ClaimsConflict({state, out, row0}, {other, out, row1}), ClaimConflict::kCrossed);
}

}  // namespace
}  // namespace rnnstate::exposed_state_controls_test
