// A causal window behind a Pad that fills otherwise than with zeros (time/pad_fill.h, rewrite/context_fill.h):
// `reflect`, `edge` or a value other than zero. Its context starts empty (the default and the first feed hold
// no frames on time), the Pad keeps its mode and pads the concatenation by its span less the frames fed; the
// pair records the mode, a reflecting one the first call's least length (stream.first_chunk_min); a rewrite
// of the rewrite changes no byte and check passes, but not once the Pad's amounts are constant again;
// --pack tensor refuses it; --no-conv-context and opset 10 leave the Pad as it is.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "contract/first_feeds.h"
#include "graph/proto_access.h"
#include "pipeline_stages.h"
#include "rnnstate/error.h"
#include "rnnstate/json.h"
#include "rnnstate/pipeline.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::context_fill_test {
namespace {

using namespace test_names;
using testing::Producer;

/// A Pad (2 frames before time, `pad` its mode and value operands) in front of a Conv of kernel 3, then a GRU.
std::string PadConvGru(const std::string& pad, int opset = 14) {
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) + R"(]>
g (float[batch, 2, seq] x, float[2, 2, 3] w, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, batch, 3] Y) {
  pads = Constant <value = int64[6] {0, 0, 2, 0, 0, 0}> ()
  half = Constant <value = float {0.5}> ()
  p = )" +
         pad + R"(
  c = Conv (p, w)
  s = Transpose <perm = [2, 0, 1]> (c)
  Y = GRU <hidden_size = 3> (s, W, R)
})";
}

const char* kReflect = R"(Pad <mode = "reflect"> (x, pads))";
const char* kEdge = R"(Pad <mode = "edge"> (x, pads))";
const char* kHalf = R"(Pad (x, pads, half))";

onnx::ModelProto Rewritten(const std::string& text, const PlanOptions& options) {
  onnx::ModelProto model = ParseModel(text);
  RewriteModel(model, options, /*strict=*/false);
  return model;
}

TEST(FillContext, AReflectPadKeepsItsModeAndPadsWhatAnEmptyContextLacks) {
  const onnx::ModelProto model = Rewritten(PadConvGru(kReflect), InMode(StateInputMode::kDefaults));
  const onnx::GraphProto& g = model.graph();
  const onnx::NodeProto& pad = testing::NodeOfType(g, "Pad");
  EXPECT_EQ(StringAttribute(pad, "mode", ""), "reflect");
  const onnx::NodeProto* concat = Producer(g, pad.input(0));
  ASSERT_NE(concat, nullptr);
  EXPECT_EQ(concat->op_type(), "Concat");
  EXPECT_EQ(concat->input(1), "x");
  // Its amounts: the original's less the frames the context was fed, before time.
  const onnx::NodeProto* amounts = Producer(g, pad.input(1));
  ASSERT_NE(amounts, nullptr);
  EXPECT_EQ(amounts->op_type(), "Sub");
  const StatePair pair = ContextPair(model);
  EXPECT_EQ(*pair.context, (ContextSpec{"x", 2, 2, testing::NodeOfType(g, "Conv").name(), 0, "reflect", false}));
  ExpectContextDefault(g, pair, {1, 2, 0});  // empty: the Pad pads the first call as it did
  EXPECT_TRUE(pair.streamable);
  const Json stream = StreamObject(model);
  EXPECT_TRUE(stream.value("chunk_exact", false));
  EXPECT_EQ(stream.value("first_chunk_min", 0), 3);
  EXPECT_THAT(CheckForStreaming(model).problems, IsEmpty());
  const std::string report = ReportModel(model, "m.onnx", ReportFormat::kText).text;
  EXPECT_THAT(report, HasSubstr("first chunk: at least 3 frames"));
}

TEST(FillContext, TheReportOfTheInputNamesTheFillAndTheFirstChunk) {
  const onnx::ModelProto model = ParseModel(PadConvGru(kReflect));
  const std::string report = ReportModel(model, "m.onnx", ReportFormat::kText).text;
  EXPECT_THAT(report, HasSubstr("in place of its Pad's reflect padding"));
  EXPECT_THAT(report, HasSubstr("first chunk: at least 3 frames"));
  EXPECT_THAT(report, HasSubstr("yes: chunked runs"));
}

TEST(FillContext, EdgeAndAValueOtherThanZeroNeedNoFirstChunkLength) {
  for (const auto& [pad, mode] : {std::pair{kEdge, "edge"}, std::pair{kHalf, "constant"}}) {
    const onnx::ModelProto model = Rewritten(PadConvGru(pad), InMode(StateInputMode::kDefaults));
    EXPECT_EQ(ContextPair(model).context->pad, mode);
    const Json stream = StreamObject(model);
    EXPECT_TRUE(stream.value("chunk_exact", false)) << mode;
    EXPECT_FALSE(stream.contains("first_chunk_min")) << mode;
    // The Pad keeps its value operand: it pads 0.5 where the context lacks frames.
    EXPECT_EQ(testing::NodeOfType(model.graph(), "Pad").input_size(), pad == kHalf ? 3 : 2);
  }
}

TEST(FillContext, ARewriteOfTheRewriteChangesNoByte) {
  for (const char* pad : {kReflect, kEdge, kHalf}) {
    for (StateInputMode mode : {StateInputMode::kRequired, StateInputMode::kDefaults}) {
      onnx::ModelProto model = Rewritten(PadConvGru(pad), InMode(mode));
      const std::string first = testing::Bytes(model);
      EXPECT_FALSE(RewriteModel(model, InMode(mode), false).changed) << pad;
      EXPECT_EQ(testing::Bytes(model), first) << pad;
    }
  }
}

TEST(FillContext, InRequiredModeTheFirstFeedIsEmptyAlongTime) {
  const StatePair pair = ContextPair(Rewritten(PadConvGru(kReflect), InMode(StateInputMode::kRequired)));
  EXPECT_FALSE(pair.optional);
  const std::vector<FirstFeed> feeds = FirstFeeds({pair}, 2, {});
  ASSERT_EQ(feeds.size(), 1u);
  EXPECT_THAT(feeds[0].shape, ElementsAre(2, 2, 0));
}

TEST(FillContext, CheckRefutesTheRecordOnceThePadsAmountsAreConstantAgain) {
  onnx::ModelProto model = Rewritten(PadConvGru(kReflect), InMode(StateInputMode::kDefaults));
  testing::NodeOfType(*model.mutable_graph(), "Pad").set_input(1, "pads");
  const CheckResult checked = CheckForStreaming(model);
  std::vector<std::string> messages;
  for (const CheckProblem& problem : checked.problems) messages.push_back(problem.message);
  EXPECT_THAT(messages, ::testing::Contains(HasSubstr("is read by no Pad in mode 'reflect'")));
  // And the model no longer streams as its pairs say.
  EXPECT_THAT(messages, ::testing::Contains(HasSubstr("streamable is true but chunked runs of the model differ")));
}

TEST(FillContext, PackRefusesAContextWhoseLengthOnTimeChanges) {
  for (PackKind kind : {PackKind::kTensor, PackKind::kSequence}) {
    PlanOptions options = InMode(StateInputMode::kDefaults);
    options.pack = kind;
    onnx::ModelProto model = ParseModel(PadConvGru(kEdge));
    try {
      RewriteModel(model, options, false);
      ADD_FAILURE() << "--pack packed a context whose time axis changes";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kUnsupported);
      EXPECT_THAT(e.what(), HasSubstr("first call holds fewer frames than the later ones (a Pad in mode edge)"));
    }
  }
}

TEST(FillContext, NoConvContextOrOpsetTenLeavesThePadAndTheModelDoesNotStream) {
  PlanOptions without = InMode(StateInputMode::kDefaults);
  without.conv_context = false;
  const std::string reflect10 = R"(Pad <mode = "reflect", pads = [0, 0, 2, 0, 0, 0]> (x))";
  for (const auto& [text, options] : {std::pair{PadConvGru(kReflect), without},
                                      std::pair{PadConvGru(reflect10, 10), InMode(StateInputMode::kDefaults)}}) {
    const onnx::ModelProto model = Rewritten(text, options);
    EXPECT_EQ(testing::NodeOfType(model.graph(), "Pad").input(0), "x");
    const Json stream = StreamObject(model);
    EXPECT_FALSE(stream.value("chunk_exact", true));
    EXPECT_THAT(stream.value("reason", ""), HasSubstr("pads time with 2 frames before"));
  }
}

}  // namespace
}  // namespace rnnstate::context_fill_test
