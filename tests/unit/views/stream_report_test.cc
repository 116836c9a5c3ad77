// What `report` says of the whole model's streaming (views/stream_report.h): the time axis and how it was
// found, each output's verdict, the windows a rewrite carries as context, the model's lookahead, and the
// answer; the JSON form (the metadata's record plus lookahead and contexts); each node's own line. Models as
// ONNX text, analyzed as `report` does.

#include "views/stream_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "find/analysis.h"
#include "graph/model_index.h"
#include "test_models.h"
#include "test_names.h"
#include "time/stream_verdict.h"

namespace rnnstate::stream_report_test {
namespace {

using namespace test_names;

/// `text` analyzed and judged as `report` judges it (the windows a rewrite would carry, carried).
struct Reported {
  explicit Reported(const std::string& text) : model(ParseModel(text)), index(model), analysis(Analyze(index)) {
    JudgeStream(index, analysis, {}, {}, /*carry_windows=*/true);
  }
  onnx::ModelProto model;
  ModelIndex index;
  Analysis analysis;
};

std::string TextOf(const std::string& text) { return StreamText(Reported(text).analysis); }
Json JsonOf(const std::string& text) { return StreamJson(Reported(text).analysis); }

/// A causal Conv over time (its own pads: 2 frames before, none after) before a GRU.
const char* kCausalConvGru = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, 2, seq] x, float[2, 2, 3] w, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, batch, 3] Y) {
  c = Conv <pads = [2, 0]> (x, w)
  s = Transpose <perm = [2, 0, 1]> (c)
  Y = GRU <hidden_size = 3> (s, W, R)
})";

TEST(StreamText, SaysYesForARecurrenceThatStreams) {
  const std::string text = TextOf(kGru);
  EXPECT_THAT(text, HasSubstr("\ndoes the model stream?\n  time axis: X:0 (the one named dimension of the data "
                              "besides the batch)\n"));
  EXPECT_THAT(text, HasSubstr("  output 'Y': chunked = whole: the chunks' frames along axis 0\n"));
  EXPECT_THAT(text, HasSubstr("  yes: chunked runs with the states fed back equal one run\n"));
}

TEST(StreamText, SaysNoAndWhyForOneThatDoesNot) {
  const Reported reported(kReverseGru);
  const Analysis& analysis = reported.analysis;
  const std::string text = StreamText(analysis);
  EXPECT_THAT(text, HasSubstr("  output 'Y': chunked != whole: "));
  EXPECT_THAT(text, HasSubstr("\n  no: "));
  EXPECT_THAT(text, Not(HasSubstr("yes")));
  ASSERT_EQ(analysis.nodes.size(), 1u);
  EXPECT_THAT(NodeStreamText(analysis.nodes[0], analysis.StatesOf(0)), ::testing::StartsWith("no ("));
  const Reported streams(kGru);
  EXPECT_EQ(NodeStreamText(streams.analysis.nodes[0], streams.analysis.StatesOf(0)), "yes");
}

TEST(StreamText, NamesTheContextACausalWindowCarries) {
  const std::string text = TextOf(kCausalConvGru);
  EXPECT_THAT(text, HasSubstr("  context: Conv "));
  EXPECT_THAT(text, HasSubstr("a rewrite carries the last 2 frames of 'x' from call to call in place of its zeros "
                              "(a context state)\n"));
}

TEST(StreamText, MeasuresALookaheadAndWhatANodeNeeds) {
  const std::string text = TextOf(kResidualSameConvGru);
  EXPECT_THAT(text, HasSubstr("  lookahead: 1 frame (summed along the path"));
  EXPECT_THAT(text, HasSubstr("frames before each frame and 1 after)"));
  EXPECT_THAT(text, HasSubstr("\n  no: "));
}

TEST(StreamText, IsEmptyForAModelWithoutRecurrencesOrTime) {
  EXPECT_EQ(TextOf(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[2] x) => (float[2] y) {
  y = Relu (x)
})"),
            "");
}

TEST(StreamJson, IsTheRecordPlusLookaheadAndContexts) {
  const Json exact = JsonOf(kGru);
  EXPECT_EQ(exact["version"], 1);
  EXPECT_EQ(exact["chunk_exact"], true);
  EXPECT_EQ(exact["outputs"].dump(), R"([{"output":"Y","chunked":"frames","axis":0}])");
  EXPECT_FALSE(exact.contains("lookahead"));
  EXPECT_FALSE(exact.contains("contexts"));
  const Json ahead = JsonOf(kResidualSameConvGru);
  EXPECT_EQ(ahead["chunk_exact"], false);
  EXPECT_EQ(ahead["lookahead"]["frames"], 1);
  const Json context = JsonOf(kCausalConvGru);
  ASSERT_EQ(context["contexts"].size(), 1u);
  EXPECT_EQ(context["contexts"][0]["value"], "x");
  EXPECT_EQ(context["contexts"][0]["frames"], 2);
  EXPECT_EQ(context["contexts"][0]["axis"], 2);
}

}  // namespace
}  // namespace rnnstate::stream_report_test
