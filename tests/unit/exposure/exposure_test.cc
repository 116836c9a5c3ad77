// The read side of the exposure walks (exposure/exposure.h): TraceRead from a state's initial slot back to a
// main-graph input, TraceValueRead from any main-graph value, and StateShape. Each test reads the trace
// itself — the tensor, the element map, or what broke the proof — on a small hand-written model. The write
// side (TraceWrite, TraceValueWrite) is tested in exposure_write_test.cc.

#include "exposure/exposure.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "exposure_test_models.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::exposure_test {
namespace {

using namespace test_names;

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;

/// PackedLstm with the node computing h0 replaced by `h0` (one or more lines of ONNX text).
std::string WithH0(const std::string& h0) {
  std::string read = kPackedRead;
  Replace(read, "h0 = Unsqueeze (hs, axis0)", h0);
  return PackedLstm(read);
}

/// TraceRead of the state `kind` of the LSTM in the model `text`.
ReadTrace ReadOf(const std::string& text, const std::string& kind = "h") {
  Analyzed a(text);
  return TraceRead(*a.index, a.State(0, kind).state);
}

/// [1, batch, 3]: an LSTM state of PackedLstm as the element maps see it.
SymShape LstmStateShape() { return {SymDim{1, ""}, SymDim{-1, "batch"}, SymDim{3, ""}}; }

TEST(StateShape, KeepsSizesAndNamesAndDropsTheNameOfAFixedSize) {
  RecurrentState state;
  state.shape = {Dim{1, ""}, Dim{-1, "batch"}, Dim{-1, ""}, Dim{4, "four"}};
  const SymShape shape = StateShape(state);
  ASSERT_THAT(shape, SizeIs(4));
  EXPECT_EQ(shape[0], (SymDim{1, ""}));
  EXPECT_EQ(shape[1], (SymDim{-1, "batch"}));
  EXPECT_EQ(shape[2], (SymDim{-1, ""})) << "an unknown size stays unknown";
  EXPECT_EQ(shape[3], (SymDim{4, ""})) << "a fixed size is the same size whatever it was called";
  EXPECT_THAT(StateShape(RecurrentState{}), IsEmpty());
}

TEST(TraceRead, FindsTheRowOfThePackedInputEachStateIsReadFrom) {
  for (const auto& [kind, row] : {std::pair{"h", 0}, std::pair{"c", 1}}) {
    const ReadTrace read = ReadOf(PackedLstm(), kind);
    ASSERT_TRUE(read.place.has_value()) << kind << ": " << read.broken;
    EXPECT_EQ(read.broken, "");
    EXPECT_FALSE(read.constant);
    EXPECT_EQ(read.place->tensor, "state");
    const ElementMap& map = read.place->map;
    ASSERT_EQ(map.rank(), 3u) << "the map has the rank of the input [2, batch, 3]";
    EXPECT_TRUE(map.IsConstant(0));
    EXPECT_EQ(map.offset(0), row) << kind;
    EXPECT_EQ(map.coef(1, 1), 1) << "the batch stays the batch";
    EXPECT_EQ(map.coef(2, 2), 1) << "the hidden axis stays the hidden axis";
  }
}

TEST(TraceRead, AnAbsentInitialStateIsAConstantWithoutAPlace) {
  const ReadTrace read = ReadOf(kGru);
  EXPECT_FALSE(read.place.has_value());
  EXPECT_TRUE(read.constant);
  EXPECT_EQ(read.broken, "the initial state is absent (zeros)");
}

TEST(TraceRead, AStateFromAnInitializerIsConstantNotABrokenProof) {
  std::string text = WithH0("");
  Replace(text, "{\n  zero", "<float[1, 1, 3] h0 = {0.5, 0.25, 0.125}> {\n  zero");
  const ReadTrace read = ReadOf(text);
  EXPECT_FALSE(read.place.has_value());
  EXPECT_TRUE(read.constant) << "the origin says where it comes from: nothing broke";
  EXPECT_EQ(read.broken, "it is read from a constant ('h0')");
}

// A Constant node is a constant too (ReadTrace::constant: "it is a constant, or absent"), as an initializer
// is: no broken proof for the analysis to report as why_not.
TEST(TraceRead, AStateFromAConstantNodeIsConstantNotABrokenProof) {
  const ReadTrace read = ReadOf(WithH0("h0 = Constant <value = float[1, 1, 3] {0, 0, 0}> ()"));
  EXPECT_FALSE(read.place.has_value());
  EXPECT_TRUE(read.constant);
  EXPECT_THAT(read.broken, HasSubstr("it is read from a constant"));
}

TEST(TraceRead, AnOperatorThatIsNoViewBreaksTheProofAndIsNamed) {
  const std::string text = WithH0("hx = Unsqueeze (hs, axis0)\n  h0 = Relu (hx)");
  const ReadTrace read = ReadOf(text);
  EXPECT_FALSE(read.place.has_value());
  EXPECT_FALSE(read.constant);
  EXPECT_THAT(read.broken, HasSubstr("Relu '"));
  EXPECT_THAT(read.broken, HasSubstr("is not a view of its input"));
  // c's chain is untouched: the break is the h chain's only.
  EXPECT_TRUE(ReadOf(text, "c").place.has_value());
}

TEST(TraceRead, ACastToANarrowerTypeAndBackLosesPrecision) {
  const ReadTrace read =
      ReadOf(WithH0("hx = Unsqueeze (hs, axis0)\n  hh = Cast <to = 10> (hx)\n  h0 = Cast <to = 1> (hh)"));
  EXPECT_FALSE(read.place.has_value());
  EXPECT_EQ(read.broken, "a Cast on the way loses precision");
  // Through double and back every float survives.
  const ReadTrace exact =
      ReadOf(WithH0("hx = Unsqueeze (hs, axis0)\n  hd = Cast <to = 11> (hx)\n  h0 = Cast <to = 1> (hd)"));
  ASSERT_TRUE(exact.place.has_value()) << exact.broken;
  EXPECT_EQ(exact.place->tensor, "state");
}

TEST(TraceRead, AReversedSliceCountsItsRowsFromTheEnd) {
  // Row 0 of the rows reversed is the input's last row.
  const ReadTrace read =
      ReadOf(WithH0("m1 = Constant <value = int64[1] {-1}> ()\n  past = Constant <value = int64[1] {-9}> ()\n"
                    "  z1 = Constant <value = int64[1] {0}> ()\n  o1 = Constant <value = int64[1] {1}> ()\n"
                    "  reversed = Slice (state, m1, past, z1, m1)\n  h0 = Slice (reversed, z1, o1, z1)"));
  ASSERT_TRUE(read.place.has_value()) << read.broken;
  EXPECT_EQ(read.place->tensor, "state");
  EXPECT_EQ(read.place->map.offset(0), 1);
}

/// h0 = If(state is empty) then a learned (non-zero) initializer else rows [0:1] of `state`; h0 is the output.
const std::string kDefaultOrRows = kHeader + std::string(R"(g (float[2, batch, 3] state) => (float[1, batch, 3] h0)
    <float[1, 1, 3] learned = {0.5, 0.25, 0.125}> {
  zero = Constant <value = int64 {0}> ()
  one = Constant <value = int64 {1}> ()
  z1 = Constant <value = int64[1] {0}> ()
  o1 = Constant <value = int64[1] {1}> ()
)") + kStateIsEmpty + R"(  h0 = If (empty) <then_branch = learned () => (float[1, batch, 3] hl) {
    hl = Identity (learned)
  }, else_branch = fed () => (float[1, batch, 3] hf) {
    hf = Slice (state, z1, o1, z1)
  }>
})";

TEST(TraceValueRead, FollowsTheFedBranchOnlyWhenTheEmptyInputsSkipTheOther) {
  const onnx::ModelProto model = ParseModel(kDefaultOrRows);
  const ModelIndex index(model);
  // Told that `state` fed empty (on its batch axis 1) selects the default: what h0 reads when it is fed.
  const ReadTrace fed = TraceValueRead(index, "h0", LstmStateShape(), kFloat, {{"state", 1}});
  ASSERT_TRUE(fed.place.has_value()) << fed.broken;
  EXPECT_EQ(fed.place->tensor, "state");
  EXPECT_EQ(fed.place->map.offset(0), 0);
  // Not told: the learned default is a constant that is not zeros, which ends the proof.
  const ReadTrace both = TraceValueRead(index, "h0", LstmStateShape(), kFloat, {});
  EXPECT_FALSE(both.place.has_value());
  EXPECT_TRUE(both.constant);
  EXPECT_THAT(both.broken, HasSubstr("read from a constant ('learned')"));
}

TEST(TraceValueRead, ReadsAnyValueOfTheMainGraphAndChecksItsType) {
  Analyzed a(PackedLstm());
  const ReadTrace c0 = TraceValueRead(*a.index, "c0", LstmStateShape(), kFloat, {});
  ASSERT_TRUE(c0.place.has_value()) << c0.broken;
  EXPECT_EQ(c0.place->map.offset(0), 1);
  // A value said to be float16 read from a float input: float16 cannot hold every float exactly.
  const ReadTrace narrow = TraceValueRead(*a.index, "c0", LstmStateShape(), onnx::TensorProto::FLOAT16, {});
  EXPECT_FALSE(narrow.place.has_value());
  EXPECT_EQ(narrow.broken, "a Cast on the way loses precision");
  EXPECT_TRUE(TraceValueRead(*a.index, "c0", LstmStateShape(), onnx::TensorProto::DOUBLE, {}).place.has_value())
      << "a double holds every float";
  // A graph input is its own place, whole.
  const ReadTrace whole =
      TraceValueRead(*a.index, "state", {SymDim{2, ""}, SymDim{-1, "batch"}, SymDim{3, ""}}, kFloat, {});
  ASSERT_TRUE(whole.place.has_value()) << whole.broken;
  EXPECT_TRUE(whole.place->map.SamePlaces(ElementMap::Identity(whole.place->map.state())));
}

}  // namespace
}  // namespace rnnstate::exposure_test
