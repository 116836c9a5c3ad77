// `rewrite --input-context INPUT:AXIS:N` (context_planner, context_apply): the context input, its default
// and the nodes it adds, the readers it redirects (subgraphs too), its pair; a rewrite of the rewrite
// changes no byte and check passes; every option that makes no sense is refused with exit 2.

#include "rewrite/context_planner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pipeline_stages.h"
#include "rnnstate/error.h"
#include "rnnstate/pipeline.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate {
namespace {

using namespace test_names;
using testing::Producer;

/// Audio framed into pairs of samples for a GRU, and read again inside both branches of an If.
const char* kFramedAudio = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, seq] audio, bool loud, float[1, 9, 2] W, float[1, 9, 3] R, float[batch] unused)
    => (float[seq2, 1, batch, 3] Y, float[batch] level) {
  shape = Constant <value = int64[3] {0, -1, 2}> ()
  frames = Reshape (audio, shape)
  x = Transpose <perm = [1, 0, 2]> (frames)
  Y = GRU <hidden_size = 3> (x, W, R)
  level = If (loud) <then_branch = t () => (float[batch] top) {
    top = ReduceMax <axes = [1], keepdims = 0> (audio)
  }, else_branch = e () => (float[batch] bottom) {
    bottom = ReduceMin <axes = [1], keepdims = 0> (audio)
  }>
})";

/// Audio framed for a GRU at ai.onnx opset OPSET (no If: kept small for the old opsets).
std::string FramedAudioAt(int opset) {
  return "<ir_version: 7, opset_import: [\"\" : " + std::to_string(opset) + R"(]>
g (float[batch, seq] audio, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq2, 1, batch, 3] Y) {
  shape = Constant <value = int64[3] {0, -1, 2}> ()
  frames = Reshape (audio, shape)
  x = Transpose <perm = [1, 0, 2]> (frames)
  Y = GRU <hidden_size = 3> (x, W, R)
})";
}

PlanOptions WithContext(const std::string& option, StateInputMode mode = StateInputMode::kRequired) {
  PlanOptions options = InMode(mode);
  options.input_contexts.push_back(ParseInputContext(option));
  return options;
}

/// The model rewritten with `options`.
onnx::ModelProto Rewritten(const std::string& text, const PlanOptions& options) {
  onnx::ModelProto model = ParseModel(text);
  RewriteModel(model, options, /*strict=*/false);
  return model;
}

/// The exit code of rewriting `text` with `options` (0 when it succeeds), and the message in `what`.
int Refusal(const std::string& text, const PlanOptions& options, std::string* what) {
  onnx::ModelProto model = ParseModel(text);
  try {
    RewriteModel(model, options, /*strict=*/false);
  } catch (const Error& e) {
    *what = e.what();
    return static_cast<int>(e.code());
  }
  return 0;
}

TEST(InputContext, ParsesInputAxisAndFrames) {
  const InputContextOption option = ParseInputContext("onnx::audio:1:64");  // names may contain ':'
  EXPECT_EQ(option.input, "onnx::audio");
  EXPECT_EQ(option.axis, 1);
  EXPECT_EQ(option.frames, 64);
  EXPECT_EQ(option.Text(), "onnx::audio:1:64");
  for (const char* bad : {"audio", "audio:1", "audio:1:0", "audio:-1:3", ":1:2", "audio:a:2", "audio:1:2.5", "audio::2"}) {
    try {
      ParseInputContext(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kUsage) << bad;
    }
  }
}

TEST(InputContext, RequiredModeConcatenatesTheContextInFrontForEveryReader) {
  const onnx::ModelProto model = Rewritten(kFramedAudio, WithContext("audio:1:2"));
  const onnx::GraphProto& g = model.graph();
  EXPECT_EQ(DeclaredShape(g, "audio.context_in"), "[batch,2]");
  EXPECT_EQ(DeclaredShape(g, "audio.context_out"), "[batch,2]");
  const onnx::NodeProto* concat = Producer(g, "audio.with_context");
  ASSERT_NE(concat, nullptr);
  EXPECT_EQ(concat->op_type(), "Concat");
  EXPECT_EQ(concat->name(), "audio.with_context");
  EXPECT_THAT(concat->input(), ElementsAre("audio.context_in", "audio"));
  const onnx::NodeProto* slice = Producer(g, "audio.context_out");
  ASSERT_NE(slice, nullptr);
  EXPECT_EQ(slice->op_type(), "Slice");
  EXPECT_EQ(slice->input(0), "audio.with_context");
  EXPECT_EQ(Producer(g, "frames")->input(0), "audio.with_context");
  const onnx::NodeProto* branch = Producer(g, "level");
  EXPECT_EQ(branch->attribute(0).g().node(0).input(0), "audio.with_context");
  EXPECT_EQ(branch->attribute(1).g().node(0).input(0), "audio.with_context");
  EXPECT_THAT(testing::InitializerNames(g), Not(Contains("audio.context_in")));  // required: no default

  const StatePair pair = ContextPair(model);
  EXPECT_EQ(pair.input, "audio.context_in");
  EXPECT_EQ(pair.output, "audio.context_out");
  EXPECT_EQ(pair.node, "audio.with_context");
  EXPECT_FALSE(pair.optional);
  // It carries frames from call to call; whether chunks equal one run is the whole model's verdict, and
  // this model's framing Reshape and its ReduceMax over time say no.
  EXPECT_TRUE(pair.carried);
  EXPECT_FALSE(pair.streamable);
  EXPECT_EQ(MetaShapeText(pair.shape), "[batch,2]");
  EXPECT_EQ(pair.batch_axis, 0);
  EXPECT_EQ(pair.init, kInitZeros);
  ASSERT_TRUE(pair.context.has_value());
  EXPECT_EQ(*pair.context, (ContextSpec{"audio", 1, 2, "", 0, "", false}));
  EXPECT_THAT(CheckForStreaming(model).problems, IsEmpty());
}

TEST(InputContext, CheckRefutesAContextThatNoLongerHolds) {
  onnx::ModelProto model = Rewritten(kFramedAudio, WithContext("audio:1:2"));
  onnx::NodeProto& slice = testing::NodeOfType(*model.mutable_graph(), "Slice");
  slice.set_input(0, "audio");  // the last frames of what was fed, not of the concatenation
  std::vector<std::string> messages;
  for (const CheckProblem& problem : CheckForStreaming(model).problems) {
    EXPECT_EQ(problem.kind, CheckProblem::Kind::kOutputNotWired);
    messages.push_back(problem.message);
  }
  EXPECT_THAT(messages, ElementsAre(HasSubstr("output 'audio.context_out' is not the last 2 frames along axis 1")));
  // Rewrite does not record it again: a note says why.
  const RewriteOutcome outcome = RewriteModel(model, InMode(StateInputMode::kRequired), false);
  EXPECT_THAT(outcome.plan.notes, Contains(HasSubstr("context pair 'audio.context_in' -> 'audio.context_out' is not "
                                                     "recorded again")));

  onnx::ModelProto flagged = Rewritten(kFramedAudio, WithContext("audio:1:2"));
  Json document = ParseJson(flagged.metadata_props(0).value());
  document["states"][1]["optional"] = true;
  flagged.mutable_metadata_props(0)->set_value(DumpJson(document));
  EXPECT_THAT(CheckForStreaming(flagged).problems,
              ElementsAre(::testing::Field(&CheckProblem::message, HasSubstr("optional is true but input"))));
}

TEST(InputContext, ARewriteOfTheRewriteChangesNothing) {
  for (StateInputMode mode : {StateInputMode::kRequired, StateInputMode::kDefaults}) {
    onnx::ModelProto model = Rewritten(kFramedAudio, WithContext("audio:1:2", mode));
    const std::string first = testing::Bytes(model);
    for (const PlanOptions& again : {WithContext("audio:1:2", mode), InMode(mode)}) {
      onnx::ModelProto copy = model;
      const RewriteOutcome outcome = RewriteModel(copy, again, /*strict=*/false);
      EXPECT_FALSE(outcome.changed);
      EXPECT_EQ(testing::Bytes(copy), first);
    }
  }
}

TEST(InputContext, DefaultsModeBroadcastsZerosThatRequiredModeDrops) {
  onnx::ModelProto model = Rewritten(kFramedAudio, WithContext("audio:1:2", StateInputMode::kDefaults));
  const onnx::GraphProto& g = model.graph();
  EXPECT_THAT(testing::InitializerNames(g), Contains("audio.context_in"));
  const onnx::NodeProto* concat = Producer(g, "audio.with_context");
  const onnx::NodeProto* expand = Producer(g, concat->input(0));
  ASSERT_NE(expand, nullptr);
  EXPECT_EQ(expand->op_type(), "Expand");
  EXPECT_EQ(expand->input(0), "audio.context_in");
  EXPECT_TRUE(ContextPair(model).optional);
  EXPECT_THAT(CheckForStreaming(model).problems, IsEmpty());

  RewriteModel(model, InMode(StateInputMode::kRequired), /*strict=*/false);
  EXPECT_THAT(testing::InitializerNames(model.graph()), Not(Contains("audio.context_in")));
  EXPECT_FALSE(ContextPair(model).optional);
  EXPECT_THAT(CheckForStreaming(model).problems, IsEmpty());
}

TEST(InputContext, TimeMajorInputsHaveTheirBatchOnAxisOneAndUnnamedBatchesGetANameShared) {
  const char* time_major = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] x, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, batch, 3] Y) {
  Y = GRU <hidden_size = 3> (x, W, R)
})";
  onnx::ModelProto model = Rewritten(time_major, WithContext("x:0:3"));
  const StatePair pair = ContextPair(model);
  EXPECT_EQ(MetaShapeText(pair.shape), "[3,batch,2]");
  EXPECT_EQ(pair.batch_axis, 1);

  onnx::ModelProto unnamed = ParseModel(kFramedAudio);
  unnamed.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->clear_dim_param();
  RewriteModel(unnamed, WithContext("audio:1:2"), /*strict=*/false);
  const StatePair named = ContextPair(unnamed);
  EXPECT_EQ(MetaShapeText(named.shape), "[batch_2,2]");  // "batch" is the model's own unused input's
  EXPECT_EQ(DeclaredShape(unnamed.graph(), "audio"), "[batch_2,seq]");
}

TEST(InputContext, TheDryRunSaysWhatChanges) {
  const onnx::ModelProto model = ParseModel(kFramedAudio);
  EXPECT_THAT(PlanRewrite(model, WithContext("audio:1:2")).PlanLines(),
              Contains(HasSubstr("context of 'audio' (last 2 frames along axis 1): 'audio.context_in' -> "
                                 "'audio.context_out', concatenated in front of it for 2 reader(s) (required)")));
}

TEST(InputContext, OldOpsetsSliceWithAttributes) {
  const onnx::ModelProto model = Rewritten(FramedAudioAt(9), WithContext("audio:1:2"));
  const onnx::NodeProto* slice = Producer(model.graph(), "audio.context_out");
  ASSERT_NE(slice, nullptr);
  EXPECT_EQ(slice->input_size(), 1);
  EXPECT_THAT(CheckForStreaming(model).problems, IsEmpty());
}

TEST(InputContext, OptionsThatMakeNoSenseAreUsageErrors) {
  std::string what;
  auto usage = [&](const std::string& option, const char* expected) {
    EXPECT_EQ(Refusal(kFramedAudio, WithContext(option), &what), 2) << option;
    EXPECT_THAT(what, HasSubstr(expected)) << option;
  };
  usage("Y:0:2", "'Y' is not an input of the model");
  usage("audio:2:2", "'audio' has no axis 2 (rank 2)");
  usage("unused:0:2", "nothing in the model reads 'unused'");
  usage("loud:0:1", "'loud' has no axis 0 (rank 0)");
  PlanOptions twice = WithContext("audio:1:2");
  twice.input_contexts.push_back(ParseInputContext("audio:1:3"));
  EXPECT_EQ(Refusal(kFramedAudio, twice, &what), 2);
  EXPECT_THAT(what, HasSubstr("'audio' is given twice"));

  onnx::ModelProto weights = ParseModel(kFramedAudio);
  testing::AddFloatInitializer(*weights.mutable_graph(), "W", {1, 9, 2}, {0.5f});
  try {
    RewriteModel(weights, WithContext("W:1:2"), false);
    ADD_FAILURE() << "a weight was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
    EXPECT_THAT(e.what(), HasSubstr("'W' is not a data input: it has an initializer"));
  }
}

TEST(InputContext, StateInputsAndOtherContextsOfARewriteAreRefused) {
  onnx::ModelProto model = Rewritten(kFramedAudio, WithContext("audio:1:2"));
  const std::string rewritten = testing::Bytes(model);
  const std::string gru_input = testing::RecordedPairs(model).front().input;  // the GRU's new h input
  for (const auto& [option, expected] :
       {std::pair<std::string, std::string>{gru_input + ":1:1", "is a state input, not a data input"},
        {"audio.context_in:1:1", "is a state input, not a data input"},
        {"audio:1:3", "'audio' already carries a context of 2 frames along axis 1"}}) {
    onnx::ModelProto copy = model;
    try {
      RewriteModel(copy, WithContext(option), false);
      ADD_FAILURE() << option << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kUsage) << option;
      EXPECT_THAT(e.what(), HasSubstr(expected)) << option;
    }
    EXPECT_EQ(testing::Bytes(copy), rewritten);
  }
}

TEST(InputContext, BelowOpset8TheDefaultIsTiledWhereExpandIsMissing) {
  // Opset 7 has no Expand: the zeros are tiled by the value's shape over the context's own (1 on the time
  // axis), with the operators opset 7 has.
  onnx::ModelProto model = Rewritten(FramedAudioAt(7), WithContext("audio:1:2", StateInputMode::kDefaults));
  const onnx::GraphProto& g = model.graph();
  const onnx::NodeProto* tile = Producer(g, Producer(g, "audio.with_context")->input(0));
  ASSERT_NE(tile, nullptr);
  EXPECT_EQ(tile->op_type(), "Tile");
  EXPECT_EQ(tile->input(0), "audio.context_in");
  const onnx::NodeProto* repeats = Producer(g, tile->input(1));
  ASSERT_NE(repeats, nullptr);
  EXPECT_EQ(repeats->op_type(), "Add");  // the value's shape - the context's + 1: no division
  const onnx::NodeProto* gap = Producer(g, repeats->input(0));
  ASSERT_NE(gap, nullptr);
  EXPECT_EQ(gap->op_type(), "Sub");
  EXPECT_EQ(Producer(g, Producer(g, gap->input(1))->input(0))->input(0), "audio.context_in");
  for (const onnx::NodeProto& node : g.node()) EXPECT_NE(node.op_type(), "Expand");
  // The context holds; the one problem is the GRU's state, whose own zero default still needs Expand.
  const std::vector<CheckProblem> problems = CheckForStreaming(model).problems;
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_THAT(problems[0].message, HasSubstr("GRU"));
  const std::string first = testing::Bytes(model);
  RewriteModel(model, WithContext("audio:1:2", StateInputMode::kDefaults), /*strict=*/false);
  EXPECT_EQ(testing::Bytes(model), first);
  // From opset 8 on, Expand as before (the negative control).
  const onnx::ModelProto at8 = Rewritten(FramedAudioAt(8), WithContext("audio:1:2", StateInputMode::kDefaults));
  EXPECT_EQ(Producer(at8.graph(), Producer(at8.graph(), "audio.with_context")->input(0))->op_type(), "Expand");
}

TEST(InputContext, APackedModelNeedsItsOwnContext) {
  PlanOptions packed = InMode(StateInputMode::kRequired);
  packed.pack = PackKind::kTensor;
  onnx::ModelProto model = Rewritten(kFramedAudio, packed);
  try {
    RewriteModel(model, WithContext("audio:1:2"), false);
    ADD_FAILURE() << "a new context on a packed model was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUnsupported);
    EXPECT_THAT(e.what(), HasSubstr("the model's states were packed or made batch-first"));
  }
}

TEST(InputContext, APackedContextStaysRecognized) {
  PlanOptions options = WithContext("audio:1:2");
  options.pack = PackKind::kTensor;
  onnx::ModelProto model = Rewritten(kFramedAudio, options);
  EXPECT_THAT(CheckForStreaming(model).problems, IsEmpty());
  const std::string first = testing::Bytes(model);
  RewriteModel(model, WithContext("audio:1:2"), /*strict=*/false);  // the same context, not packed again
  EXPECT_EQ(testing::Bytes(model), first);
}

}  // namespace
}  // namespace rnnstate
