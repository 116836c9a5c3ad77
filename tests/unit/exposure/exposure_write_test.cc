// The write side of the exposure walks (exposure_write.cc, declared in exposure/exposure.h): TraceWrite from
// a state's final slot, and TraceValueWrite from any main-graph value, forward to every main-graph output
// that holds all of it. Each test reads the trace itself — the outputs and their element maps, or what
// stopped every path — on a small hand-written model.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "exposure/exposure.h"
#include "exposure_test_models.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::exposure_write_test {
namespace {

using namespace test_names;
using ::testing::UnorderedElementsAre;

/// PackedLstm with `from` in its write chain replaced by `to`.
std::string WithWrite(const std::string& from, const std::string& to) {
  std::string write = kPackedWrite;
  Replace(write, from, to);
  return PackedLstm(kPackedRead, write);
}

/// TraceWrite of the state `kind` of the recurrent node in the model `text`.
WriteTrace WriteOf(const std::string& text, const std::string& kind = "h") {
  Analyzed a(text);
  return TraceWrite(*a.index, a.State(0, kind).state);
}

std::vector<std::string> Tensors(const WriteTrace& trace) {
  std::vector<std::string> tensors;
  for (const ElementPlace& place : trace.places) tensors.push_back(place.tensor);
  return tensors;
}

TEST(TraceWrite, FindsTheRowOfThePackedOutputEachFinalLandsIn) {
  for (const auto& [kind, row] : {std::pair{"h", 0}, std::pair{"c", 1}}) {
    const WriteTrace write = WriteOf(PackedLstm(), kind);
    ASSERT_THAT(write.places, SizeIs(1)) << kind << ": " << write.broken;
    EXPECT_EQ(write.broken, "");
    EXPECT_EQ(write.places[0].tensor, "stateN");
    const ElementMap& map = write.places[0].map;
    ASSERT_EQ(map.rank(), 3u);
    EXPECT_TRUE(map.IsConstant(0));
    EXPECT_EQ(map.offset(0), row) << kind << ": Concat puts c after h";
    EXPECT_EQ(map.coef(1, 1), 1);
    EXPECT_EQ(map.coef(2, 2), 1);
  }
}

TEST(TraceWrite, EveryOutputThatHoldsAllOfItIsAPlace) {
  std::string text = WithWrite("hq = Squeeze (Yh, axis0)", "hq = Squeeze (Yh, axis0)\n  hN = Identity (Yh)");
  Replace(text, "float[2, batch, 3] stateN)", "float[2, batch, 3] stateN, float[1, batch, 3] hN)");
  const WriteTrace write = WriteOf(text);
  EXPECT_THAT(Tensors(write), UnorderedElementsAre("stateN", "hN"));
  EXPECT_EQ(write.broken, "") << "a place clears what stopped other paths";
}

TEST(TraceWrite, AFinalSlotWithoutAnOutputIsNotProduced) {
  const WriteTrace write = WriteOf(kGru);
  EXPECT_THAT(write.places, IsEmpty());
  EXPECT_EQ(write.broken, "the final state is not produced");
}

TEST(TraceWrite, AFinalUsedByNothingSaysSo) {
  const WriteTrace write = WriteOf(PackedLstm(kPackedRead, "  stateN = Identity (state)\n"), "c");
  EXPECT_THAT(write.places, IsEmpty());
  EXPECT_EQ(write.broken, "the final value 'Yc' is used by nothing");
}

TEST(TraceWrite, AUseThatIsNoViewIsNamed) {
  const WriteTrace write =
      WriteOf(WithWrite("hq = Squeeze (Yh, axis0)", "hd = Add (Yh, Yh)\n  hq = Squeeze (hd, axis0)"));
  EXPECT_THAT(write.places, IsEmpty());
  EXPECT_THAT(write.broken, HasSubstr("'Yh' goes into Add '"));
  EXPECT_THAT(write.broken, HasSubstr("which is not a view"));
}

TEST(TraceWrite, AViewThatBreaksTheProofIsSaidBeforeAUseThatIsNoView) {
  // Yh goes into an Add (no view) and into an Expand to [2, batch, 3] (a view that broadcasts it).
  const WriteTrace write = WriteOf(WithWrite("hq = Squeeze (Yh, axis0)",
                                             "hd = Add (Yh, Yh)\n  hq = Squeeze (hd, axis0)\n  rows = Shape (state)\n"
                                             "  hx = Expand (Yh, rows)"));
  EXPECT_THAT(write.places, IsEmpty());
  EXPECT_THAT(write.broken, HasSubstr("Expand '"));
  EXPECT_THAT(write.broken, HasSubstr("broadcasts it"));
}

TEST(TraceWrite, ACastToANarrowerTypeOnTheWayOutLosesPrecision) {
  const std::string text = WithWrite("hq = Squeeze (Yh, axis0)",
                                     "hh = Cast <to = 10> (Yh)\n  hf = Cast <to = 1> (hh)\n  hq = Squeeze (hf, axis0)");
  const WriteTrace write = WriteOf(text);
  EXPECT_THAT(write.places, IsEmpty());
  EXPECT_EQ(write.broken, "output 'stateN' holds it through a Cast that loses precision");
  EXPECT_THAT(WriteOf(text, "c").places, SizeIs(1)) << "c's chain has no Cast";
}

/// A GRU whose output hN is the first two hidden units of its final state.
const std::string kFirstTwoUnits = kHeader + std::string(
                                                 R"(g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R)
    => (float[seq, 1, batch, 3] Y, float[1, batch, 2] hN) {
  z1 = Constant <value = int64[1] {0}> ()
  two1 = Constant <value = int64[1] {2}> ()
  Y, Yh = GRU <hidden_size = 3> (X, W, R)
  hN = Slice (Yh, z1, two1, two1)
})");

TEST(TraceWrite, TheWalkMeasuresTheStateByTheShapeItIsGiven) {
  Analyzed a(kFirstTwoUnits);
  const RecurrentState& h = a.State(0, "h").state;
  const WriteTrace own = TraceWrite(*a.index, h);
  EXPECT_THAT(own.places, IsEmpty()) << "of its 3 units, the Slice keeps 2";
  EXPECT_THAT(own.broken, HasSubstr("cuts part of it off"));
  const WriteTrace same = TraceWrite(*a.index, h, StateShape(h));
  EXPECT_EQ(same.broken, own.broken) << "the shorter overload is this one with the state's own shape";
  // Measured as 2 units wide, the state is all in hN.
  const SymShape narrow = {SymDim{1, ""}, SymDim{-1, "batch"}, SymDim{2, ""}};
  const WriteTrace kept = TraceWrite(*a.index, h, narrow);
  EXPECT_THAT(Tensors(kept), ElementsAre("hN")) << kept.broken;
}

TEST(TraceValueWrite, FollowsAnyValueOfTheMainGraphToTheOutputs) {
  Analyzed a(PackedLstm());
  const SymShape shape = {SymDim{-1, "batch"}, SymDim{3, ""}};
  const WriteTrace cq = TraceValueWrite(*a.index, "cq", shape, onnx::TensorProto::FLOAT);
  ASSERT_THAT(cq.places, SizeIs(1)) << cq.broken;
  EXPECT_EQ(cq.places[0].tensor, "stateN");
  EXPECT_EQ(cq.places[0].map.rank(), 3u) << "the map has the output's rank, not the value's";
  EXPECT_EQ(cq.places[0].map.offset(0), 1);
  // A value said to be double cannot be held exactly by the float output.
  const WriteTrace as_double = TraceValueWrite(*a.index, "cq", shape, onnx::TensorProto::DOUBLE);
  EXPECT_THAT(as_double.places, IsEmpty());
  EXPECT_THAT(as_double.broken, HasSubstr("loses precision"));
}

TEST(TraceValueWrite, AnOutputIsItsOwnPlaceWhole) {
  Analyzed a(PackedLstm());
  const SymShape shape = {SymDim{2, ""}, SymDim{-1, "batch"}, SymDim{3, ""}};
  const WriteTrace write = TraceValueWrite(*a.index, "stateN", shape, onnx::TensorProto::FLOAT);
  ASSERT_THAT(write.places, SizeIs(1)) << write.broken;
  EXPECT_EQ(write.places[0].tensor, "stateN");
  EXPECT_TRUE(write.places[0].map.SamePlaces(ElementMap::Identity(shape)));
}

}  // namespace
}  // namespace rnnstate::exposure_write_test
