// The context of a window without padding over time ("valid", issue 39): the rewrite concatenates the last
// span frames of the window's input in front of the chunk and changes nothing else; the context's time axis
// is named and its default holds no frames, so the unfed first call is the original and each later call
// emits as many frames as it is fed; the metadata says "valid", `init` feeds no frames first, check passes,
// a rewrite of the rewrite changes no byte; metadata with a "valid" that does not fit is refused.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "contract/first_feeds.h"
#include "graph/proto_access.h"
#include "pipeline_stages.h"
#include "rnnstate/pipeline.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::valid_context_test {
namespace {

using namespace test_names;
using testing::Producer;

/// x [batch, 2, seq] through a valid Conv (kernel 3: seq - 2 frames), then a GRU over time.
const char* kValidConvGru = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, 2, seq] x, float[3, 2, 3] w, float[1, 9, 3] W, float[1, 9, 3] R) => (float[seq2, 1, batch, 3] Y) {
  r = Relu (x)
  c = Conv (r, w)
  s = Transpose <perm = [2, 0, 1]> (c)
  Y = GRU <hidden_size = 3> (s, W, R)
})";

onnx::ModelProto Rewritten(StateInputMode mode) {
  onnx::ModelProto model = ParseModel(kValidConvGru);
  RewriteModel(model, InMode(mode), /*strict=*/false);
  return model;
}

TEST(ValidContext, AValidWindowGetsAContextWithNoFramesAtFirst) {
  const onnx::ModelProto model = Rewritten(StateInputMode::kDefaults);
  const onnx::GraphProto& g = model.graph();
  const onnx::NodeProto& conv = testing::NodeOfType(g, "Conv");
  EXPECT_EQ(FindAttribute(conv, "pads"), nullptr);  // nothing to remove
  const onnx::NodeProto* concat = Producer(g, conv.input(0));
  ASSERT_NE(concat, nullptr);
  EXPECT_EQ(concat->op_type(), "Concat");
  EXPECT_EQ(concat->input(1), "r");
  const StatePair pair = ContextPair(model);
  EXPECT_TRUE(pair.context->valid);
  EXPECT_EQ(pair.context->frames, 2);
  EXPECT_EQ(pair.context->FirstFrames(), 0);
  EXPECT_TRUE(pair.streamable);
  ExpectContextDefault(g, pair, {1, 2, 0});  // named: no frames first, 2 later
  EXPECT_THAT(CheckForStreaming(model).problems, IsEmpty());
}

TEST(ValidContext, TheFirstFeedHoldsNoFramesAndARewriteOfTheRewriteChangesNothing) {
  for (StateInputMode mode : {StateInputMode::kRequired, StateInputMode::kDefaults}) {
    onnx::ModelProto model = Rewritten(mode);
    const StatePair pair = ContextPair(model);
    for (const FirstFeed& feed : FirstFeeds({pair}, 2, {})) EXPECT_THAT(feed.shape, ElementsAre(2, 2, 0));
    const std::string first = testing::Bytes(model);
    EXPECT_FALSE(RewriteModel(model, InMode(mode), /*strict=*/false).changed);
    EXPECT_EQ(testing::Bytes(model), first);
  }
}

TEST(ValidContext, MetadataWithAValidThatDoesNotFitIsRefused) {
  onnx::ModelProto model = Rewritten(StateInputMode::kDefaults);
  for (auto& prop : *model.mutable_metadata_props()) {
    if (prop.key() != "rnnstate") continue;
    const std::string value = prop.value();
    const size_t at = value.find("\"valid\":true");
    ASSERT_NE(at, std::string::npos);
    std::string bad = value;
    bad.replace(at, 12, "\"valid\":1");
    prop.set_value(bad);
  }
  std::string error;
  ReadStatePairs(model, &error);
  EXPECT_THAT(error, ::testing::HasSubstr("'valid'"));
}

TEST(ValidContext, PackingRefusesItNamingTheWindowWithoutPadding) {
  for (PackKind kind : {PackKind::kTensor, PackKind::kSequence}) {
    PlanOptions options = InMode(StateInputMode::kDefaults);
    options.pack = kind;
    onnx::ModelProto model = ParseModel(kValidConvGru);
    try {
      RewriteModel(model, options, /*strict=*/false);
      ADD_FAILURE() << "--pack packed a context whose first call holds no frames";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kUnsupported);
      EXPECT_THAT(e.what(), ::testing::HasSubstr("fewer frames than the later ones (a window without padding)"));
    }
  }
}

}  // namespace
}  // namespace rnnstate::valid_context_test
