// The context of a causal window over time as a state (rewrite/context_planner, context_apply, issue 39):
// the Pad in front of a Conv, or the Conv's own pads, lose their time padding before; the last frames of
// the window's input carry to the next call through a new pair of kind "context" that names the window;
// the new nodes sit after the value they read; the model is then judged chunk-exact; a rewrite of the
// rewrite changes no byte and check passes; `--no-conv-context` leaves the windows as they are.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "graph/naming.h"
#include "graph/proto_access.h"
#include "pipeline_stages.h"
#include "rnnstate/pipeline.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::window_context_test {
namespace {

using namespace test_names;
using testing::Producer;

/// PyTorch's `F.pad(x, (4, 0))` + `Conv1d(2, 3, 3, dilation=2)` on x [batch, seq, 2] (transposed to put
/// time on the conv's axis 2), then a GRU over time; a second Pad + Conv shares the pads constant.
const char* kPadConvGru = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, seq, 2] x, float[3, 2, 3] w, float[3] b, float[1, 9, 3] W, float[1, 9, 3] R)
    => (float[seq, 1, batch, 3] Y, float[batch, 3, seq] other) {
  t = Transpose <perm = [0, 2, 1]> (x)
  pads = Constant <value = int64[6] {0, 0, 4, 0, 0, 0}> ()
  p = Pad (t, pads)
  c = Conv <dilations = [2], kernel_shape = [3]> (p, w, b)
  a = Tanh (c)
  s = Transpose <perm = [2, 0, 1]> (a)
  Y = GRU <hidden_size = 3> (s, W, R)
  q = Pad (t, pads)
  other = Conv <dilations = [2], kernel_shape = [3]> (q, w, b)
})";

/// A Conv with its own causal pads, after a Relu: the context carries the Relu's frames; a GRU over time
/// after it.
const char* kSelfPaddedConv = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, 2, seq] x, float[2, 2, 2] w, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, batch, 3] Y) {
  r = Relu (x)
  y = Conv <pads = [1, 0]> (r, w)
  s = Transpose <perm = [2, 0, 1]> (y)
  Y = GRU <hidden_size = 3> (s, W, R)
})";

onnx::ModelProto Rewritten(const std::string& text, const PlanOptions& options, RewriteOutcome* outcome = nullptr) {
  onnx::ModelProto model = ParseModel(text);
  RewriteOutcome done = RewriteModel(model, options, /*strict=*/false);
  if (outcome != nullptr) *outcome = std::move(done);
  return model;
}

/// The index of the node producing `name` in the main graph.
int IndexOf(const onnx::GraphProto& g, const std::string& name) {
  for (int n = 0; n < g.node_size(); ++n) {
    for (const std::string& output : g.node(n).output()) {
      if (output == name) return n;
    }
  }
  return -1;
}

TEST(WindowContext, APadInFrontOfAConvLosesItsTimePaddingToAContextState) {
  RewriteOutcome outcome;
  const onnx::ModelProto model = Rewritten(kPadConvGru, InMode(StateInputMode::kDefaults), &outcome);
  const onnx::GraphProto& g = model.graph();
  const StatePair pair = ContextPair(model);  // the first Conv's
  ASSERT_TRUE(pair.context.has_value());
  EXPECT_EQ(pair.context->value, "t");
  EXPECT_EQ(pair.context->axis, 2);
  EXPECT_EQ(pair.context->frames, 4);
  // The Conv had no name of its own: the rewrite gives it one, which the metadata and the names use.
  EXPECT_EQ(pair.context->window, testing::NodeOfType(g, "Conv").name());
  EXPECT_FALSE(pair.context->window.empty());
  EXPECT_EQ(pair.input, NodeStem(pair.context->window) + ".context_in");
  EXPECT_TRUE(pair.optional);
  EXPECT_EQ(MetaShapeText(pair.shape), "[batch,2,4]");
  EXPECT_EQ(DeclaredShape(g, pair.input), "[batch,2,4]");

  // Each Pad reads its concatenation, with its time padding before gone (a new constant each: the old one
  // is shared); the concatenation comes after the value it reads.
  const onnx::NodeProto* pad = Producer(g, "p");
  ASSERT_NE(pad, nullptr);
  const onnx::NodeProto* concat = Producer(g, pad->input(0));
  ASSERT_NE(concat, nullptr);
  EXPECT_EQ(concat->op_type(), "Concat");
  EXPECT_EQ(concat->input(1), "t");
  EXPECT_GT(IndexOf(g, pad->input(0)), IndexOf(g, "t"));
  EXPECT_NE(pad->input(1), "pads");
  EXPECT_NE(Producer(g, "q")->input(1), "pads");
  EXPECT_NE(Producer(g, "q")->input(1), pad->input(1));
  EXPECT_NE(Producer(g, "q")->input(0), pad->input(0));
  bool found = false;
  for (const auto& tensor : g.initializer()) {
    if (tensor.name() != pad->input(1)) continue;
    found = true;
    EXPECT_THAT(tensor.int64_data(), ElementsAre(0, 0, 0, 0, 0, 0));
  }
  EXPECT_TRUE(found);
  // The model is judged as rewritten: the GRU's state and the context stream.
  EXPECT_TRUE(pair.streamable);
  for (const StatePair& state : testing::RecordedPairs(model)) EXPECT_TRUE(state.streamable) << state.input;
  EXPECT_THAT(CheckForStreaming(model).problems, IsEmpty());
  EXPECT_THAT(outcome.PlanLines(), Contains(HasSubstr("context of 't' (last 4 frames along axis 2)")));
}

TEST(WindowContext, AConvWithItsOwnPadsLosesThemAndItsContextFollowsTheValueItReads) {
  const onnx::ModelProto model = Rewritten(kSelfPaddedConv, InMode(StateInputMode::kRequired));
  const onnx::GraphProto& g = model.graph();
  const onnx::NodeProto& conv = testing::NodeOfType(g, "Conv");
  const onnx::AttributeProto* pads = FindAttribute(conv, "pads");
  ASSERT_NE(pads, nullptr);
  EXPECT_THAT(pads->ints(), ElementsAre(0, 0));
  const onnx::NodeProto* concat = Producer(g, conv.input(0));
  ASSERT_NE(concat, nullptr);
  EXPECT_EQ(concat->op_type(), "Concat");
  EXPECT_EQ(concat->input(1), "r");
  EXPECT_GT(IndexOf(g, conv.input(0)), IndexOf(g, "r"));
  const StatePair pair = ContextPair(model);
  EXPECT_FALSE(pair.optional);  // required: no default
  EXPECT_THAT(testing::InitializerNames(g), Not(Contains(pair.input)));
  EXPECT_EQ(*pair.context, (ContextSpec{"r", 2, 1, conv.name(), 0, "", false}));
  EXPECT_THAT(CheckForStreaming(model).problems, IsEmpty());
}

TEST(WindowContext, AContextDeepInTheModelTakesTheDataBatchAndTheSizesInferenceLost) {
  // Computed pad amounts (as PyTorch's F.pad writes them): onnx's inference gives the values after the
  // first Pad no shape; the contexts still name the data's batch and know their channels.
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, 2, seq] x, float[3, 2, 2] w1, float[3, 3, 3] w2, float[1, 9, 3] W, float[1, 9, 3] R)
    => (float[seq, 1, batch, 3] Y) {
  one = Constant <value = int64[6] {0, 0, 1, 0, 0, 0}> ()
  two = Constant <value = int64[6] {1, 1, 2, 1, 1, 1}> ()
  p1pads = Mul (one, one)
  p1 = Pad (x, p1pads)
  c1 = Conv (p1, w1)
  a = Tanh (c1)
  p2pads = Mul (one, two)
  p2 = Pad (a, p2pads)
  c2 = Conv (p2, w2)
  s = Transpose <perm = [2, 0, 1]> (c2)
  Y = GRU <hidden_size = 3> (s, W, R)
})");
  RewriteModel(model, InMode(StateInputMode::kRequired), false);
  std::vector<std::string> shapes;
  for (const StatePair& pair : testing::RecordedPairs(model)) {
    if (pair.kind == kKindContext) shapes.push_back(MetaShapeText(pair.shape));
  }
  EXPECT_THAT(shapes, ElementsAre("[batch,2,1]", "[batch,3,2]"));
}

TEST(WindowContext, ACausalConvCutByASliceLosesBothPaddingsAndTheSliceKeepsEveryFrame) {
  const char* cut = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, 2, seq] x, float[2, 2, 3] w, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, batch, 3] Y) {
  c = Conv <pads = [2, 2]> (x, w)
  starts = Constant <value = int64[1] {0}> ()
  ends = Constant <value = int64[1] {-2}> ()
  axes = Constant <value = int64[1] {2}> ()
  y = Slice (c, starts, ends, axes)
  s = Transpose <perm = [2, 0, 1]> (y)
  Y = GRU <hidden_size = 3> (s, W, R)
})";
  onnx::ModelProto model = Rewritten(cut, InMode(StateInputMode::kDefaults));
  const onnx::GraphProto& g = model.graph();
  EXPECT_THAT(FindAttribute(testing::NodeOfType(g, "Conv"), "pads")->ints(), ElementsAre(0, 0));
  const onnx::NodeProto& slice = *Producer(g, "y");
  EXPECT_EQ(slice.input(0), "c");
  bool found = false;
  for (const auto& tensor : g.initializer()) {
    if (tensor.name() != slice.input(2)) continue;
    found = true;
    EXPECT_THAT(tensor.int64_data(), ElementsAre(std::numeric_limits<int64_t>::max()));
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(ContextPair(model).context->frames, 2);
  EXPECT_TRUE(ContextPair(model).streamable);
  const std::string first = testing::Bytes(model);
  EXPECT_FALSE(RewriteModel(model, InMode(StateInputMode::kDefaults), false).changed);
  EXPECT_EQ(testing::Bytes(model), first);
}

TEST(WindowContext, AModelWithoutRecurrencesCarriesItsWindowsAlongTheAxisTheySlideAlong) {
  const char* tcn = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, 2, seq] x, float[2, 2, 2] w) => (float[batch, 2, seq] y) {
  r = Relu (x)
  y = Conv <pads = [1, 0]> (r, w)
})";
  // Two named dims, each with a causal window: no time axis, nothing changed until one is given.
  const char* ambiguous = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, 1, seq, bins] x, float[1, 1, 2, 2] w) => (float[batch, 1, seq, bins] y) {
  y = Conv <pads = [1, 1, 0, 0]> (x, w)
})";
  onnx::ModelProto unchanged = ParseModel(ambiguous);
  EXPECT_FALSE(RewriteModel(unchanged, InMode(StateInputMode::kDefaults), false).changed);
  PlanOptions given = InMode(StateInputMode::kDefaults);
  given.time_axes.push_back(ParseTimeAxis("x:2"));
  onnx::ModelProto chosen = ParseModel(ambiguous);
  EXPECT_EQ(RewriteForStreaming(chosen, given, false, "").pairs.size(), 1u);
  // One named dim besides the batch a window slides along: found without --time-axis.
  onnx::ModelProto model = ParseModel(tcn);
  const RewriteResult result = RewriteForStreaming(model, InMode(StateInputMode::kDefaults), false, "");
  ASSERT_EQ(result.pairs.size(), 1u);
  EXPECT_EQ(result.pairs[0].kind, kKindContext);
  EXPECT_TRUE(result.pairs[0].streamable);
  EXPECT_THAT(CheckForStreaming(model).problems, IsEmpty());
  EXPECT_THAT(ReportModel(model, "m.onnx", ReportFormat::kText).text,
              AllOf(HasSubstr("yes: chunked runs"), Not(HasSubstr("nothing to do"))));
}

TEST(WindowContext, TheContextNamesTheWindow) {
  onnx::ModelProto model = ParseModel(kSelfPaddedConv);
  model.mutable_graph()->mutable_node(1)->set_name("/enc/conv");
  RewriteModel(model, InMode(StateInputMode::kDefaults), false);
  const StatePair pair = ContextPair(model);
  EXPECT_EQ(pair.context->window, "/enc/conv");
  EXPECT_EQ(pair.input, "enc.conv.context_in");
  EXPECT_EQ(pair.output, "enc.conv.context_out");
}

TEST(WindowContext, ARewriteOfTheRewriteChangesNothing) {
  for (const char* text : {kPadConvGru, kSelfPaddedConv}) {
    for (StateInputMode mode : {StateInputMode::kRequired, StateInputMode::kDefaults}) {
      onnx::ModelProto model = Rewritten(text, InMode(mode));
      const std::string first = testing::Bytes(model);
      const RewriteOutcome outcome = RewriteModel(model, InMode(mode), /*strict=*/false);
      EXPECT_FALSE(outcome.changed);
      EXPECT_EQ(testing::Bytes(model), first);
    }
  }
}

TEST(WindowContext, NoConvContextLeavesTheWindowsAndSaysTheModelDoesNotStream) {
  PlanOptions options = InMode(StateInputMode::kDefaults);
  options.conv_context = false;
  const onnx::ModelProto model = Rewritten(kPadConvGru, options);
  for (const StatePair& pair : testing::RecordedPairs(model)) {
    EXPECT_NE(pair.kind, kKindContext);
    EXPECT_FALSE(pair.streamable);
  }
  EXPECT_EQ(Producer(model.graph(), "p")->input(0), "t");
  EXPECT_EQ(Producer(model.graph(), "p")->input(1), "pads");
}

}  // namespace
}  // namespace rnnstate::window_context_test
