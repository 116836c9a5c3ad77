// The whole model's verdict (time/stream_verdict.h) and the choice of its time axes (time/time_sources.h):
// the one named dimension of the data besides the batch, several names (ambiguous: none), a fixed length
// followed to the axis the recurrences run along (and not followed where the authors carry their state),
// recurrences that run within each frame left to the call, a model without recurrences timed by its causal
// windows, every state given the model's reason, the
// metadata record without the states' own outputs. Models as ONNX text.

#include "time/stream_verdict.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "find/analysis.h"
#include "graph/model_index.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::stream_verdict_test {
namespace {

using namespace test_names;

struct Judged {
  explicit Judged(const std::string& text, std::vector<InputAxis> given = {})
      : model(ParseModel(text)), index(model), analysis(Analyze(index)) {
    JudgeStream(index, analysis, given);
  }
  const StreamVerdict& verdict() const { return *analysis.stream; }
  onnx::ModelProto model;
  ModelIndex index;
  Analysis analysis;
};

const std::string kGru = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] x, float[1, 9, 2] w, float[1, 9, 3] r) => (float[seq, 1, batch, 3] y, float[1, batch, 3] h) {
  y, h = GRU <hidden_size = 3> (x, w, r)
  %s
})";

std::string WithExtra(const std::string& extra) {
  std::string text = kGru;
  return text.replace(text.find("%s"), 2, extra);
}

TEST(StreamVerdict, TheOneNamedDimensionBesidesTheBatchIsTime) {
  const Judged j(WithExtra(""));
  ASSERT_EQ(j.verdict().time.axes.size(), 1u);
  EXPECT_EQ(j.verdict().time.axes[0].input, "x");
  EXPECT_EQ(j.verdict().time.axes[0].axis, 0);
  EXPECT_EQ(j.verdict().time.source, TimeAxes::Source::kNamed);
  EXPECT_TRUE(j.verdict().ChunkExact());
  EXPECT_TRUE(j.analysis.states[0].Streams());
  ASSERT_EQ(j.verdict().outputs.size(), 2u);
  EXPECT_EQ(j.verdict().outputs[0].kind, OutputVerdict::Kind::kFrames);
  EXPECT_EQ(j.verdict().outputs[1].kind, OutputVerdict::Kind::kLast);
  EXPECT_TRUE(j.verdict().outputs[1].state);  // h is the GRU's final state: its pair speaks for it
}

TEST(StreamVerdict, AReductionOverTimeGivesEveryStateTheModelsReason) {
  const Judged j(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] x, float[1, 9, 2] w, float[1, 9, 3] r) => (float[seq, 1, batch, 3] y, float[1, batch, 3] m) {
  y, h = GRU <hidden_size = 3> (x, w, r)
  m = ReduceMean <axes = [0]> (y)
})");
  EXPECT_FALSE(j.verdict().ChunkExact());
  EXPECT_THAT(j.verdict().problem, HasSubstr("output 'm': ReduceMean"));
  EXPECT_TRUE(j.analysis.states[0].state.streamable);  // its recurrence still carries it
  EXPECT_FALSE(j.analysis.states[0].Streams());
  EXPECT_THAT(j.analysis.states[0].stream_problem, HasSubstr("reduces over time"));
  const StreamRecord record = RecordOf(j.verdict(), {});
  EXPECT_FALSE(record.chunk_exact);
  ASSERT_EQ(record.outputs.size(), 2u);
  EXPECT_EQ(record.outputs[1].chunked, "differs");
  EXPECT_EQ(record.outputs[1].node, "ReduceMean (output 'm')");
  EXPECT_TRUE(record.outputs[1].whole);
  // The states' own outputs are left to their pairs.
  EXPECT_EQ(RecordOf(j.verdict(), {"y"}).outputs.size(), 1u);
}

TEST(StreamVerdict, SeveralNamedDimensionsAreNoTimeAxisUnlessTheRecurrencesSayWhich) {
  // x [seq, batch, feat]: two names besides the batch; the GRU runs along seq.
  const Judged j(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, feat] x, float[1, 9, 2] w, float[1, 9, 3] r) => (float[seq, 1, batch, 3] y) {
  y, h = GRU <hidden_size = 3> (x, w, r)
})");
  ASSERT_EQ(j.verdict().time.axes.size(), 1u);
  EXPECT_EQ(j.verdict().time.axes[0].axis, 0);
  EXPECT_EQ(j.verdict().time.source, TimeAxes::Source::kFollowed);
}

TEST(StreamVerdict, AFixedLengthIsFollowedAndNamed) {
  const Judged j(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[7, 1, 2] x, float[1, 9, 2] w, float[1, 9, 3] r) => (float[7, 1, 1, 3] y) {
  y, h = GRU <hidden_size = 3> (x, w, r)
})");
  ASSERT_EQ(j.verdict().time.axes.size(), 1u);
  EXPECT_EQ(j.verdict().time.axes[0].axis, 0);
  EXPECT_EQ(j.verdict().time.fixed_length, 7);
  EXPECT_THAT(j.verdict().problem, HasSubstr("fixed length 7"));
  EXPECT_THAT(j.verdict().problem, HasSubstr("--time-axis x:0"));
}

TEST(StreamVerdict, AModelCalledOneFrameAtATimeHasNoTimeAxis) {
  // The authors carry the state (h0 -> hn); x [1, 1, 2] holds one frame: the model streams call by call.
  const Judged j(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[1, 1, 2] x, float[1, 1, 3] h0, float[1, 9, 2] w, float[1, 9, 3] r) => (float[1, 1, 1, 3] y, float[1, 1, 3] hn) {
  y, hn = GRU <hidden_size = 3> (x, w, r, , , h0)
})");
  EXPECT_TRUE(j.verdict().time.axes.empty());
  EXPECT_TRUE(j.verdict().problem.empty());
  EXPECT_TRUE(j.analysis.states[0].Streams());
}

TEST(StreamVerdict, WithoutRecurrencesTheTimeIsTheNamedDimensionACausalWindowSlidesAlong) {
  const std::string tcn = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, 2, seq] x, float[2, 2, 3] w) => (float[batch, 2, seq] y) {
  r = Relu (x)
  y = Conv <pads = %s> (r, w)
})";
  const auto with_pads = [&](const std::string& pads) {
    std::string text = tcn;
    return text.replace(text.find("%s"), 2, pads);
  };
  const Judged causal(with_pads("[2, 0]"));
  ASSERT_EQ(causal.verdict().time.axes.size(), 1u);
  EXPECT_EQ(causal.verdict().time.axes[0].input, "x");
  EXPECT_EQ(causal.verdict().time.axes[0].axis, 2);  // not the batch: no window slides along it
  EXPECT_EQ(causal.verdict().time.source, TimeAxes::Source::kWindowed);
  // A "same" window slides along seq too, but needs the future: nothing says seq is time.
  const Judged same(with_pads("[1, 1]"));
  EXPECT_TRUE(same.verdict().time.axes.empty());
  EXPECT_TRUE(same.verdict().time.note.empty());
}

TEST(StreamVerdict, CausalWindowsAlongTwoNamedDimensionsLeaveTheChoiceToTheUser) {
  const Judged j(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, 1, seq, bins] x, float[1, 1, 2, 2] w) => (float[batch, 1, seq, bins] y) {
  y = Conv <pads = [1, 1, 0, 0]> (x, w)
})");
  EXPECT_TRUE(j.verdict().time.axes.empty());
  EXPECT_THAT(j.verdict().time.note, HasSubstr("bins, seq"));
  EXPECT_THAT(j.verdict().time.note, HasSubstr("--time-axis"));
}

TEST(StreamVerdict, ARecordThatFoundNoTimeAxisIsKept) {
  // A rewrite that found no time axis records none; its rewrite gives the data's unnamed dims names (the
  // batch of an --input-context), which must not make a rewrite of the rewrite or check guess again.
  const onnx::ModelProto model = ParseModel(WithExtra(""));
  const ModelIndex index(model);
  Analysis analysis = Analyze(index);
  analysis.recorded_stream = StreamRecord{};
  JudgeStream(index, analysis);
  EXPECT_TRUE(analysis.stream->time.axes.empty());
  EXPECT_EQ(analysis.stream->time.source, TimeAxes::Source::kRecorded);
  // What the record says gives way to --time-axis.
  Analysis given = Analyze(index);
  given.recorded_stream = StreamRecord{};
  JudgeStream(index, given, {InputAxis{"x", 0}});
  ASSERT_EQ(given.stream->time.axes.size(), 1u);
  EXPECT_EQ(given.stream->time.source, TimeAxes::Source::kGiven);
}

TEST(StreamVerdict, ARecurrenceWhoseBatchHoldsTimeIsLeftToTheCall) {
  // An RNN over axis 0 of x [8, seq, 2]: its batch is the time axis (a dual-path model's RNN over
  // frequency); a GRU over time beside it keeps its state.
  const Judged j(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[8, seq, 2] x, float[2, 9, 2] wb, float[2, 9, 3] rb) => (float[8, 2, seq, 3] y) {
  y, h = GRU <hidden_size = 3, direction = "bidirectional"> (x, wb, rb)
})",
                 {InputAxis{"x", 1}});
  ASSERT_EQ(j.analysis.states.size(), 1u);
  EXPECT_THAT(j.analysis.states[0].within_call, HasSubstr("runs within each frame"));
  EXPECT_TRUE(j.verdict().ChunkExact());
}

TEST(StreamVerdict, AChainedFinalStateNamesTheLayerItComesFrom) {
  const Judged j(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] x, float[1, 9, 2] w, float[1, 9, 3] r, float[1, 9, 3] w2) => (float[seq, 1, batch, 3] y2) {
  y1, h1 = GRU <hidden_size = 3> (x, w, r)
  one = Constant <value = int64[1] {1}> ()
  s1 = Squeeze (y1, one)
  y2, h2 = GRU <hidden_size = 3> (s1, w2, r, , , h1)
})");
  EXPECT_THAT(j.verdict().problem, HasSubstr("starts from the final state of GRU (output 'y1')"));
  EXPECT_FALSE(j.analysis.states[0].Streams());
}

// A GRU whose outputs reach no graph output, its initial state a graph input that is also passed through.
const std::string kDeadGru = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] x, float[1, batch, 3] s, float[1, 9, 2] w, float[1, 9, 3] r) => (float[1, batch, 3] o) {
  y, h = GRU <hidden_size = 3> (x, w, r, , , s)
  o = Identity (s)
})";

TEST(StreamVerdict, TheFinalStateARewriteAddsIsJudgedAsItsOutputWillBe) {
  // Time along s's axis 1: the GRU runs over x, which has none. Its final state is no output yet; the
  // rewrite adds it, and a rewrite of that rewrite judges it: so does the first.
  const Judged j(kDeadGru, {InputAxis{"s", 1}});
  ASSERT_EQ(j.verdict().added.size(), 1u);
  EXPECT_EQ(j.verdict().added[0].verdict.kind, OutputVerdict::Kind::kDiffers);
  EXPECT_FALSE(j.verdict().ChunkExact());
  EXPECT_EQ(j.verdict().problem,
            "the final h state of GRU (output 'y') (an output a rewrite adds): GRU (output 'y') runs over the "
            "chunk's length");
  EXPECT_FALSE(j.analysis.states[0].Streams());
  // The record names the output as the rewrite names it, as a rewrite of the rewrite will.
  const StreamRecord record = RecordOf(j.verdict(), {}, {}, {{j.analysis.states[0].state.key(), "h_out"}});
  EXPECT_EQ(record.reason, "output 'h_out': GRU (output 'y') runs over the chunk's length");
  // A rewrite that leaves the state (--nodes) keeps the verdict's words.
  EXPECT_EQ(RecordOf(j.verdict(), {}).reason, j.verdict().problem);
}

TEST(StreamVerdict, AFinalStateARewriteAddsThatStreamsLeavesTheVerdictAlone) {
  // Negative control: time along x's axis 0, the GRU's sequence: its final state is the last call's.
  const Judged j(kDeadGru, {InputAxis{"x", 0}});
  ASSERT_EQ(j.verdict().added.size(), 1u);
  EXPECT_EQ(j.verdict().added[0].verdict.kind, OutputVerdict::Kind::kLast);
  EXPECT_TRUE(j.verdict().ChunkExact());
  EXPECT_TRUE(j.analysis.states[0].Streams());
}

TEST(StreamVerdict, AFinalStateTheModelLeavesOutIsJudgedFromItsSlot) {
  // Y_h is left out (the GRU has one output): the rewrite adds it; its fact is the slot's.
  const Judged j(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] x, float[1, 9, 2] w, float[1, 9, 3] r) => (float[seq, 1, batch, 3] y) {
  y = GRU <hidden_size = 3> (x, w, r)
})");
  ASSERT_EQ(j.verdict().added.size(), 1u);
  EXPECT_EQ(j.verdict().added[0].verdict.kind, OutputVerdict::Kind::kLast);
  // A state already a graph output is judged as one, not as added.
  EXPECT_TRUE(Judged(WithExtra("")).verdict().added.empty());
}

}  // namespace
}  // namespace rnnstate::stream_verdict_test
