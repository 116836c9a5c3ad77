// Structural tests of the rewrite of main-graph recurrent nodes: one test per origin of the initial
// state and per destination of the final state, built as ONNX text.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "pipeline_stages.h"
#include "rewrite/plan.h"
#include "rnnstate/error.h"
#include "rnnstate/metadata.h"
#include "rules/structure_rules.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::pipeline_rewrite_test {
namespace {

using namespace test_names;
using testing::Producer;

const char* kHeader = R"(<ir_version: 8, opset_import: ["" : 14]>
)";

/// A GRU without initial state and a dynamic batch: the ONNX default, zeros.
const char* kGruAbsent = R"(g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, batch, 3] Y) {
  Y = GRU <hidden_size = 3> (X, W, R)
})";

onnx::ModelProto Model(const std::string& graph) { return ParseModel(kHeader + graph); }

RewriteOutcome Rewrite(onnx::ModelProto& model, PlanOptions options = {}) {
  return RewriteModel(model, options, /*strict=*/false);
}

TEST(Rewrite, AbsentStateWithDynamicBatchGetsBroadcastZeroDefault) {
  onnx::ModelProto model = Model(kGruAbsent);
  Rewrite(model);
  const auto& g = model.graph();
  EXPECT_THAT(InputNames(g), ElementsAre("X", "W", "R", "GRU_0.h_in"));
  EXPECT_EQ(DeclaredShape(g, "GRU_0.h_in"), "[1,batch,3]");
  EXPECT_THAT(InitializerNames(g), ElementsAre("GRU_0.h_in"));
  EXPECT_THAT(g.initializer(0).dims(), ElementsAre(1, 1, 3));
  const auto& gru = NodeOfType(g, "GRU");
  EXPECT_EQ(gru.name(), "GRU_0");
  const onnx::NodeProto* expand = Producer(g, gru.input(5));
  ASSERT_NE(expand, nullptr);
  EXPECT_EQ(expand->op_type(), "Expand");
  EXPECT_EQ(expand->input(0), "GRU_0.h_in");
  EXPECT_THAT(OutputNames(g), ElementsAre("Y", "GRU_0.h_out"));
  EXPECT_EQ(gru.output(1), "GRU_0.h_out");
  EXPECT_EQ(DeclaredShape(g, "GRU_0.h_out"), "[1,batch,3]");
  auto pairs = RecordedPairs(model);
  ASSERT_EQ(pairs.size(), 1u);
  StatePair expected{"GRU_0.h_in", "GRU_0.h_out", "GRU_0", "main", "h", true, true, std::nullopt, {}, {},
                     "float32", {MetaDim{1, ""}, MetaDim{-1, "batch"}, MetaDim{3, ""}}, 1, kInitZeros, {}};
  EXPECT_EQ(pairs[0], expected);
}

TEST(Rewrite, AbsentStateWithFixedBatchGetsFullZeroInitializer) {
  onnx::ModelProto model = Model(R"(g (float[5, 2, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[5, 1, 2, 3] Y) {
  Y = GRU <hidden_size = 3> (X, W, R)
})");
  Rewrite(model);
  const auto& g = model.graph();
  EXPECT_EQ(DeclaredShape(g, "GRU_0.h_in"), "[1,2,3]");
  ASSERT_EQ(g.initializer_size(), 1);
  EXPECT_THAT(g.initializer(0).dims(), ElementsAre(1, 2, 3));
  EXPECT_EQ(g.initializer(0).raw_data(), std::string(6 * 4, '\0'));
  EXPECT_EQ(NodeOfType(g, "GRU").input(5), "GRU_0.h_in");
}

TEST(Rewrite, LargeFixedBatchGetsBroadcastZerosNotAMegabyteInitializer) {
  // [1, 100000, 3] floats would be 1.2 MB of zeros per state: over kMaxZeroDefaultBytes.
  onnx::ModelProto model = Model(R"(g (float[5, 100000, 2] X, float[1, 12, 2] W, float[1, 12, 3] R, float[batch] other)
    => (float[5, 1, 100000, 3] Y, float[batch] other_out) {
  Y = LSTM <hidden_size = 3> (X, W, R)
  other_out = Identity (other)
})");
  Rewrite(model);
  const auto& g = model.graph();
  // "batch" is taken by another input's dimension: h and c share a fresh name for this node's batch.
  EXPECT_EQ(DeclaredShape(g, "LSTM_0.h_in"), "[1,batch_2,3]");
  EXPECT_EQ(DeclaredShape(g, "LSTM_0.c_in"), "[1,batch_2,3]");
  for (const auto& tensor : g.initializer()) {
    EXPECT_THAT(tensor.dims(), ElementsAre(1, 1, 3)) << tensor.name();
    EXPECT_LE(tensor.raw_data().size(), kMaxZeroDefaultBytes);
  }
  const auto& lstm = NodeOfType(g, "LSTM");
  for (int slot : {5, 6}) {
    const onnx::NodeProto* expand = Producer(g, lstm.input(slot));
    ASSERT_NE(expand, nullptr);
    EXPECT_EQ(expand->op_type(), "Expand");
  }
}

TEST(Rewrite, LargeFixedBatchIsDeclaredFixedAgainWhenRequiredModeDropsTheBroadcastDefault) {
  // Defaults mode declared the fixed batch symbolic for its [1,1,H] broadcast default; without the
  // default, required mode declares the batch itself, as a direct required-mode rewrite does.
  const char* text = R"(g (float[5, 100000, 2] X, float[1, 12, 2] W, float[1, 12, 3] R) => (float[5, 1, 100000, 3] Y) {
  Y = LSTM <hidden_size = 3> (X, W, R)
})";
  PlanOptions required;
  required.mode = StateInputMode::kRequired;
  onnx::ModelProto via_defaults = Model(text);
  Rewrite(via_defaults);
  Rewrite(via_defaults, required);
  onnx::ModelProto direct = Model(text);
  Rewrite(direct, required);
  for (const auto* model : {&via_defaults, &direct}) {
    EXPECT_EQ(DeclaredShape(model->graph(), "LSTM_0.h_in"), "[1,100000,3]");
    EXPECT_EQ(DeclaredShape(model->graph(), "LSTM_0.c_in"), "[1,100000,3]");
  }
  EXPECT_EQ(RecordedPairs(via_defaults), RecordedPairs(direct));
  EXPECT_EQ(StructuralProblem(via_defaults), "");
}

TEST(Rewrite, ImplausibleHiddenSizeIsSkippedWithAReasonNotAllocated) {
  // A malformed model (found by fuzzing): hidden_size 2^40 would make even [1,1,H] zeros 4 TiB. (With W
  // and R of known shapes it breaks the spec and is refused before: here their shapes are symbolic.)
  for (const char* batch : {"batch", "4"}) {
    onnx::ModelProto model = Model(std::string(R"(g (float[seq, )") + batch +
                                   R"(, 2] X, float[d, g, i] W, float[d, g, h] R) => (float[seq, 1, )" + batch +
                                   R"(, 3] Y) {
  Y = GRU <hidden_size = 1099511627776> (X, W, R)
})");
    RewriteOutcome outcome = Rewrite(model);
    ASSERT_EQ(outcome.plan.skipped.size(), 1u) << batch;
    EXPECT_THAT(outcome.plan.skipped[0].reason, ::testing::HasSubstr("hidden_size 1099511627776")) << batch;
    EXPECT_EQ(model.graph().initializer_size(), 0) << batch;
  }
}

TEST(Rewrite, ExistingStateInputAndOutputAreReusedNotDuplicated) {
  onnx::ModelProto model = Model(R"(g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R, float[1, batch, 3] h0)
    => (float[seq, 1, batch, 3] Y, float[1, batch, 3] hn) {
  Y, hn = GRU <hidden_size = 3> (X, W, R, , , h0)
})");
  Rewrite(model);
  const auto& g = model.graph();
  EXPECT_THAT(InputNames(g), ElementsAre("X", "W", "R", "h0"));
  EXPECT_THAT(OutputNames(g), ElementsAre("Y", "hn"));
  auto pairs = RecordedPairs(model);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].input, "h0");
  EXPECT_EQ(pairs[0].output, "hn");
  EXPECT_FALSE(pairs[0].optional) << "h0 has no default: it must be fed";
}

TEST(Rewrite, PyTorchZeroStateSharedByHAndCGetsTwoSeparateInputs) {
  // PyTorch 1.13 without h0: one ConstantOfShape from the batch size feeds initial_h and initial_c.
  onnx::ModelProto model =
      Model(R"(g (float[seq, batch, 2] X, float[1, 12, 2] W, float[1, 12, 3] R) => (float[seq, 1, batch, 3] Y) {
)" + testing::ZeroStateOfBatchText("X", 1, 3, {"shape", "idx", "b", "d", "h", "dims", "zeros"}) +
            R"(  Y = LSTM <hidden_size = 3> (X, W, R, , , zeros, zeros)
})");
  Rewrite(model);
  const auto& g = model.graph();
  const auto& lstm = NodeOfType(g, "LSTM");
  EXPECT_NE(lstm.input(5), lstm.input(6));
  EXPECT_EQ(Producer(g, lstm.input(5))->input(0), "LSTM_7.h_in") << "unnamed node 7 is named LSTM_7";
  EXPECT_EQ(Producer(g, lstm.input(6))->input(0), "LSTM_7.c_in");
  for (const auto& node : g.node()) EXPECT_NE(node.op_type(), "ConstantOfShape") << "the replaced default is pruned";
  EXPECT_THAT(OutputNames(g), ElementsAre("Y", "LSTM_7.h_out", "LSTM_7.c_out"));
  EXPECT_EQ(RecordedPairs(model).size(), 2u);
}

TEST(Rewrite, SlicedZeroStatePerLayerGetsOneInputPerLayer) {
  onnx::ModelProto model = Model(R"(g (float[seq, 2, 2] X, float[1, 9, 2] W0, float[1, 9, 3] R0, float[1, 9, 3] W1, float[1, 9, 3] R1)
    => (float[seq, 1, 2, 3] Y1) {
  dims = Constant <value = int64[3] {2, 2, 3}> ()
  zeros = ConstantOfShape (dims)
  s0 = Constant <value = int64[1] {0}> ()
  e0 = Constant <value = int64[1] {1}> ()
  e1 = Constant <value = int64[1] {2}> ()
  ax = Constant <value = int64[1] {0}> ()
  h0 = Slice (zeros, s0, e0, ax)
  h1 = Slice (zeros, e0, e1, ax)
  Y0 = GRU <hidden_size = 3> (X, W0, R0, , , h0)
  Y0s = Squeeze (Y0, e0)
  Y1 = GRU <hidden_size = 3> (Y0s, W1, R1, , , h1)
})");
  auto outcome = Rewrite(model);
  const auto& g = model.graph();
  EXPECT_EQ(NodeOfType(g, "GRU", 0).input(5), "GRU_8.h_in");
  EXPECT_EQ(NodeOfType(g, "GRU", 1).input(5), "GRU_10.h_in");
  // Each layer reads its own Slice of the zeros: not the same tensor, so not shared (one computation is).
  EXPECT_TRUE(outcome.analysis.states[0].shared_with.empty());
  for (const auto& node : g.node()) EXPECT_NE(node.op_type(), "Slice");
}

TEST(Rewrite, ZeroInitializerUsedOnceBecomesTheDefaultOfTheInput) {
  onnx::ModelProto model = Model(R"(g (float[4, 2, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[4, 1, 2, 3] Y) {
  Y = GRU <hidden_size = 3> (X, W, R, , , h_init)
})");
  testing::AddFloatInitializer(*model.mutable_graph(), "h_init", {1, 2, 3}, {0.0f});
  Rewrite(model);
  const auto& g = model.graph();
  EXPECT_THAT(InitializerNames(g), ElementsAre("GRU_0.h_in"));
  EXPECT_THAT(InputNames(g), Contains("GRU_0.h_in"));
  EXPECT_EQ(NodeOfType(g, "GRU").input(5), "GRU_0.h_in");
  EXPECT_EQ(RecordedPairs(model)[0].init, kInitZeros);
}

TEST(Rewrite, LearnedInitialStateIsKeptAndSelectedWhenTheInputIsEmpty) {
  for (StateInputMode mode : {StateInputMode::kDefaults, StateInputMode::kRequired}) {
    onnx::ModelProto model = Model(R"(g (float[4, 2, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[4, 1, 2, 3] Y) {
  Y = GRU <hidden_size = 3> (X, W, R, , , h_init)
})");
    testing::AddFloatInitializer(*model.mutable_graph(), "h_init", {1, 2, 3}, {0.5f, -1.0f});
    PlanOptions options;
    options.mode = mode;
    Rewrite(model, options);
    const auto& g = model.graph();
    const bool defaults = mode == StateInputMode::kDefaults;
    const std::vector<std::string> initializers = InitializerNames(g);
    const std::vector<std::string> expected =
        defaults ? std::vector<std::string>{"h_init", "GRU_0.h_in"} : std::vector<std::string>{"h_init"};
    EXPECT_EQ(initializers, expected);
    EXPECT_EQ(g.initializer(0).float_data(0), 0.5f) << "values are kept";
    if (defaults) {
      EXPECT_THAT(g.initializer(1).dims(), ElementsAre(1, 0, 3)) << "the empty default";
    }
    EXPECT_EQ(DeclaredShape(g, "GRU_0.h_in"), "[1,batch,3]") << "an empty feed must be valid";
    const onnx::NodeProto* select = Producer(g, NodeOfType(g, "GRU").input(5));
    ASSERT_NE(select, nullptr);
    EXPECT_EQ(select->op_type(), "If");
    auto pairs = RecordedPairs(model);
    ASSERT_EQ(pairs.size(), 1u);
    EXPECT_EQ(pairs[0].init, kInitEmpty);
    EXPECT_EQ(pairs[0].optional, defaults);
  }
}

TEST(Rewrite, LearnedInitialStateSharedByHAndCIsSelectedForEach) {
  onnx::ModelProto model = Model(R"(g (float[4, 2, 2] X, float[1, 12, 2] W, float[1, 12, 3] R) => (float[4, 1, 2, 3] Y) {
  Y = LSTM <hidden_size = 3> (X, W, R, , , s, s)
})");
  testing::AddFloatInitializer(*model.mutable_graph(), "s", {1, 2, 3}, {0.25f});
  Rewrite(model);
  const auto& g = model.graph();
  EXPECT_THAT(InitializerNames(g), ElementsAre("s", "LSTM_0.h_in", "LSTM_0.c_in")) << "the learned values stay";
  EXPECT_EQ(g.initializer(0).float_data(0), 0.25f);
  const auto& lstm = NodeOfType(g, "LSTM");
  EXPECT_EQ(lstm.input(5), "LSTM_0.h_in.selected");
  EXPECT_EQ(lstm.input(6), "LSTM_0.c_in.selected");
}

TEST(Rewrite, NonZeroComputedStateIsSelectedByAnIfWhenTheInputIsEmpty) {
  onnx::ModelProto model = Model(R"(g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R, float[1, batch, 3] bias)
    => (float[seq, 1, batch, 3] Y) {
  one = Constant <value = float[1] {1.0}> ()
  h = Add (bias, one)
  Y = GRU <hidden_size = 3> (X, W, R, , , h)
})");
  Rewrite(model);
  const auto& g = model.graph();
  const onnx::NodeProto* select = Producer(g, NodeOfType(g, "GRU").input(5));
  ASSERT_NE(select, nullptr);
  EXPECT_EQ(select->op_type(), "If");
  EXPECT_EQ(Producer(g, "h")->op_type(), "Add") << "the original computation stays for the default";
  ASSERT_EQ(g.initializer_size(), 1);
  EXPECT_THAT(g.initializer(0).dims(), ElementsAre(1, 0, 3)) << "empty default means: not fed";
}

TEST(Rewrite, FinalStateUsedInsideTheGraphIsExposedThroughIdentity) {
  onnx::ModelProto model = Model(R"(g (float[seq, batch, 2] X, float[1, 12, 2] W, float[1, 12, 3] R, float[3, 4] head)
    => (float[1, batch, 4] logits) {
  Y, Y_h = LSTM <hidden_size = 3> (X, W, R)
  logits = MatMul (Y_h, head)
})");
  Rewrite(model);
  const auto& g = model.graph();
  EXPECT_THAT(OutputNames(g), ElementsAre("logits", "LSTM_0.h_out", "LSTM_0.c_out"));
  EXPECT_EQ(Producer(g, "LSTM_0.h_out")->op_type(), "Identity");
  EXPECT_EQ(Producer(g, "LSTM_0.c_out")->op_type(), "LSTM") << "the empty Y_c slot is named directly";
  EXPECT_EQ(Producer(g, "logits")->input(0), "Y_h") << "existing consumers are undisturbed";
}

TEST(Rewrite, GeneratedNamesNeverCollide) {
  onnx::ModelProto model = Model(R"(g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R, float[1] a)
    => (float[seq, 1, batch, 3] Y, float[1] b) {
  Y = GRU <hidden_size = 3> (X, W, R)
  b = Identity (a)
})");
  // The text syntax has no dots in names: rename to what the default templates would generate.
  auto* g = model.mutable_graph();
  g->mutable_input(3)->set_name("GRU_0.h_in");
  g->mutable_output(1)->set_name("GRU_0.h_out");
  g->mutable_node(1)->set_input(0, "GRU_0.h_in");
  g->mutable_node(1)->set_output(0, "GRU_0.h_out");
  Rewrite(model);
  EXPECT_EQ(RecordedPairs(model)[0].input, "GRU_0.h_in_2");
  EXPECT_EQ(RecordedPairs(model)[0].output, "GRU_0.h_out_2");
}

TEST(Rewrite, UserNameTemplatesAreApplied) {
  onnx::ModelProto model = Model(kGruAbsent);
  PlanOptions options;
  options.input_template = "state_in/{node}/{kind}";
  options.output_template = "state_out/{node}/{kind}";
  Rewrite(model, options);
  EXPECT_EQ(RecordedPairs(model)[0].input, "state_in/GRU_0/h");
  EXPECT_EQ(RecordedPairs(model)[0].output, "state_out/GRU_0/h");
}

TEST(Rewrite, BadNameTemplateIsAUsageError) {
  onnx::ModelProto model = Model(kGruAbsent);
  PlanOptions options;
  options.input_template = "{kind}_in";  // no {node}: names of different nodes would clash
  try {
    Rewrite(model, options);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
  }
}

TEST(Rewrite, Layout1StatesAreBatchMajor) {
  onnx::ModelProto model = Model(R"(g (float[batch, seq, 2] X, float[1, 12, 2] W, float[1, 12, 3] R) => (float[batch, seq, 1, 3] Y) {
  Y = LSTM <hidden_size = 3, layout = 1> (X, W, R)
})");
  Rewrite(model);
  const auto& g = model.graph();
  EXPECT_EQ(DeclaredShape(g, "LSTM_0.h_in"), "[batch,1,3]");
  EXPECT_THAT(g.initializer(0).dims(), ElementsAre(1, 1, 3));
  const onnx::NodeProto* concat = Producer(g, Producer(g, NodeOfType(g, "LSTM").input(5))->input(1));
  ASSERT_EQ(concat->op_type(), "Concat");
  EXPECT_EQ(Producer(g, concat->input(0))->op_type(), "Gather") << "batch first in the state shape";
  EXPECT_EQ(Producer(g, Producer(g, concat->input(0))->input(1))->attribute(0).t().int64_data(0), 0)
      << "batch is axis 0 of X";
}

TEST(Rewrite, BidirectionalAndSequenceLensAreExposedButNotStreamable) {
  onnx::ModelProto model = Model(R"(g (float[seq, batch, 2] X, float[2, 9, 2] W, float[2, 9, 3] R, int32[batch] lens)
    => (float[seq, 2, batch, 3] Y, float[seq, 1, batch, 3] Z) {
  Y = GRU <hidden_size = 3, direction = "bidirectional"> (X, W, R)
  Z = RNN <hidden_size = 3> (X, W1, R1, , lens)
})");
  testing::AddFloatInitializer(*model.mutable_graph(), "W1", {1, 3, 2}, {0.1f});
  testing::AddFloatInitializer(*model.mutable_graph(), "R1", {1, 3, 3}, {0.1f});
  Rewrite(model);
  auto pairs = RecordedPairs(model);
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_FALSE(pairs[0].streamable);
  EXPECT_FALSE(pairs[1].streamable);
  EXPECT_EQ(DeclaredShape(model.graph(), pairs[0].input), "[2,batch,3]");
}

TEST(Rewrite, RequiredModeAddsPlainInputsAndPrunesTheOldDefault) {
  onnx::ModelProto model = Model(R"(g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, batch, 3] Y) {
  dims = Constant <value = int64[3] {1, 2, 3}> ()
  zeros = ConstantOfShape (dims)
  Y = GRU <hidden_size = 3> (X, W, R, , , zeros)
})");
  PlanOptions options;
  options.mode = StateInputMode::kRequired;
  Rewrite(model, options);
  const auto& g = model.graph();
  EXPECT_EQ(g.initializer_size(), 0);
  EXPECT_EQ(NodeOfType(g, "GRU").input(5), "GRU_2.h_in");
  EXPECT_EQ(g.node_size(), 1);
  EXPECT_FALSE(RecordedPairs(model)[0].optional);
}

TEST(Rewrite, RequiredModeOnARewrittenModelOnlyDropsTheDefaults) {
  onnx::ModelProto model = Model(kGruAbsent);
  Rewrite(model);
  onnx::ModelProto required = model;
  PlanOptions options;
  options.mode = StateInputMode::kRequired;
  Rewrite(required, options);
  EXPECT_EQ(required.graph().initializer_size(), 0);
  EXPECT_EQ(required.graph().node_size(), model.graph().node_size());
  EXPECT_FALSE(RecordedPairs(required)[0].optional);
  EXPECT_EQ(RecordedPairs(required)[0].input, RecordedPairs(model)[0].input);
}

TEST(Rewrite, RewritingItsOwnOutputChangesNothing) {
  for (const char* graph : {kGruAbsent, R"(g (float[4, 2, 2] X, float[1, 12, 2] W, float[1, 12, 3] R, float[3, 4] head)
    => (float[1, 2, 4] logits) {
  Y, Y_h = LSTM <hidden_size = 3> (X, W, R)
  logits = MatMul (Y_h, head)
})"}) {
    onnx::ModelProto model = Model(graph);
    Rewrite(model);
    std::string once = Bytes(model);
    auto outcome = Rewrite(model);
    EXPECT_FALSE(outcome.changed);
    EXPECT_EQ(Bytes(model), once);
  }
}

TEST(Rewrite, NodeFilterSelectsNodesAndKeepsEarlierPairs) {
  onnx::ModelProto model = Model(R"(g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, batch, 3] Y, float[seq, 1, batch, 3] Z) {
  Y = GRU <hidden_size = 3> (X, W, R)
  Z = GRU <hidden_size = 3> (X, W, R)
})");
  PlanOptions first;
  first.node_filter = NodePattern("GRU_1$");
  Rewrite(model, first);
  ASSERT_EQ(RecordedPairs(model).size(), 1u);
  EXPECT_EQ(RecordedPairs(model)[0].node, "GRU_1");
  Rewrite(model);
  ASSERT_EQ(RecordedPairs(model).size(), 2u);
  EXPECT_EQ(RecordedPairs(model)[0].node, "GRU_0");
  EXPECT_EQ(RecordedPairs(model)[1].node, "GRU_1");
}

TEST(Rewrite, ModelWithoutRecurrentNodesIsUnchanged) {
  onnx::ModelProto model = Model(R"(g (float[2] a) => (float[2] b) { b = Relu (a) })");
  std::string before = Bytes(model);
  auto outcome = Rewrite(model);
  EXPECT_FALSE(outcome.changed);
  EXPECT_TRUE(outcome.analysis.nodes.empty());
  EXPECT_EQ(Bytes(model), before);
}

TEST(Rewrite, OldOpsetIsRejectedClearly) {
  onnx::ModelProto model = ParseModel(std::string(R"(<ir_version: 3, opset_import: ["" : 6]>
)") + kGruAbsent);
  try {
    Rewrite(model);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("opset 6"), std::string::npos);
  }
}

TEST(Rewrite, NodeWithoutHiddenSizeOrShapesIsSkippedWithAReason) {
  onnx::ModelProto model = Model(R"(g (float[seq, batch, 2] X, float W, float R) => (float[seq, 1, batch, 3] Y) {
  Y = GRU (X, W, R)
})");
  for (int i : {1, 2}) model.mutable_graph()->mutable_input(i)->mutable_type()->mutable_tensor_type()->clear_shape();
  auto outcome = Rewrite(model);
  ASSERT_EQ(outcome.plan.skipped.size(), 1u);
  EXPECT_NE(outcome.plan.skipped[0].reason.find("hidden size unknown"), std::string::npos);
  EXPECT_FALSE(outcome.changed);
  EXPECT_THROW(RewriteModel(model, {}, /*strict=*/true), Error);
}

TEST(Rewrite, MalformedMetadataIsReplaced) {
  onnx::ModelProto model = Model(kGruAbsent);
  auto* prop = model.add_metadata_props();
  prop->set_key("rnnstate");
  prop->set_value("{not json");
  auto outcome = Rewrite(model);
  EXPECT_FALSE(outcome.warnings.empty());
  EXPECT_EQ(RecordedPairs(model).size(), 1u);
}

TEST(Rewrite, OtherMetadataDocStringsAndOpsetsArePreserved) {
  onnx::ModelProto model = Model(kGruAbsent);
  model.set_doc_string("my model");
  model.set_producer_name("exporter");
  auto* prop = model.add_metadata_props();
  prop->set_key("author");
  prop->set_value("me");
  Rewrite(model);
  EXPECT_EQ(model.doc_string(), "my model");
  EXPECT_EQ(model.producer_name(), "exporter");
  EXPECT_EQ(model.metadata_props(0).key(), "author");
  EXPECT_EQ(model.opset_import(0).version(), 14);
  EXPECT_EQ(model.ir_version(), 8);
}

}  // namespace
}  // namespace rnnstate::pipeline_rewrite_test

namespace rnnstate::pipeline_rewrite_test {
namespace {

TEST(Rewrite, StaleMetadataIsNotTrusted) {
  // A rewritten LSTM whose metadata was later edited: h and c outputs swapped.
  onnx::ModelProto model = testing::ParseModel(std::string(kHeader) + R"(g (float[4, 2, 2] X, float[1, 12, 2] W, float[1, 12, 3] R) => (float[4, 1, 2, 3] Y) {
  Y = LSTM <hidden_size = 3> (X, W, R)
})");
  RewriteModel(model, {}, false);
  auto pairs = RecordedPairs(model);
  std::swap(pairs[0].output, pairs[1].output);
  WriteStatePairs(model, pairs);
  auto outcome = RewriteModel(model, {}, false);
  EXPECT_FALSE(outcome.analysis.states[0].exposed);
  EXPECT_TRUE(outcome.changed);
  for (const auto& pair : RecordedPairs(model)) {
    const char* final_value = pair.kind == "h" ? "LSTM_0.h_out" : "LSTM_0.c_out";
    EXPECT_EQ(pair.output, final_value) << "each pair again names the output of its own state";
  }
}

}  // namespace
}  // namespace rnnstate::pipeline_rewrite_test

namespace rnnstate::pipeline_rewrite_test {
namespace {

TEST(Rewrite, OldOpsetIsStillReported) {
  onnx::ModelProto model = testing::ParseModel(std::string(R"(<ir_version: 3, opset_import: ["" : 6]>
)") + kGruAbsent);
  RewriteOutcome outcome = PlanRewrite(model, {});
  ASSERT_EQ(outcome.analysis.nodes.size(), 1u);
  EXPECT_NE(outcome.analysis.nodes[0].problem.find("opset 6"), std::string::npos);
  EXPECT_FALSE(outcome.plan.ChangesModel());
  EXPECT_THROW(RequireSupportedOpset(outcome.analysis), Error);
}

}  // namespace
}  // namespace rnnstate::pipeline_rewrite_test

namespace rnnstate::pipeline_rewrite_test {
namespace {

TEST(Rewrite, ModelInputWithALearnedDefaultKeepsItBehindTheEmptyTensor) {
  for (StateInputMode mode : {StateInputMode::kDefaults, StateInputMode::kRequired}) {
    onnx::ModelProto model = Model(R"(g (float[seq, 2, 2] X, float[1, 9, 2] W, float[1, 9, 3] R, float[1, 2, 3] h0)
    => (float[1, 2, 3] hn) {
  Y, hn = GRU <hidden_size = 3> (X, W, R, , , h0)
})");
    testing::AddFloatInitializer(*model.mutable_graph(), "h0", {1, 2, 3}, {0.5f});
    PlanOptions options;
    options.mode = mode;
    RewriteOutcome outcome = Rewrite(model, options);
    const auto& g = model.graph();
    const bool defaults = mode == StateInputMode::kDefaults;
    EXPECT_THAT(InputNames(g), Contains("h0")) << "the interface is the model's own";
    const std::vector<std::string> initializers = InitializerNames(g);
    EXPECT_THAT(initializers, Contains("h0.default"));
    EXPECT_EQ(std::count(initializers.begin(), initializers.end(), "h0"), defaults ? 1 : 0);
    EXPECT_EQ(DeclaredShape(g, "h0"), "[1,batch,3]");
    const onnx::NodeProto* select = Producer(g, NodeOfType(g, "GRU").input(5));
    ASSERT_NE(select, nullptr);
    EXPECT_EQ(select->op_type(), "If");
    auto pairs = RecordedPairs(model);
    ASSERT_EQ(pairs.size(), 1u);
    EXPECT_EQ(pairs[0].input, "h0");
    EXPECT_EQ(pairs[0].init, kInitEmpty);
    EXPECT_FALSE(Rewrite(model, options).changed) << "idempotent";
  }
}

TEST(Rewrite, BothRoutesToRequiredModeGiveTheSameInterface) {
  const char* graph = R"(g (float[4, 2, 2] X, float[1, 12, 2] W, float[1, 12, 3] R) => (float[4, 1, 2, 3] Y) {
  Y = LSTM <hidden_size = 3> (X, W, R, , , h_init, c_init)
})";
  auto make = [&] {
    onnx::ModelProto model = Model(graph);
    testing::AddFloatInitializer(*model.mutable_graph(), "h_init", {1, 2, 3}, {0.0f});
    testing::AddFloatInitializer(*model.mutable_graph(), "c_init", {1, 2, 3}, {0.75f, -0.5f});
    return model;
  };
  PlanOptions required;
  required.mode = StateInputMode::kRequired;
  onnx::ModelProto direct = make();
  Rewrite(direct, required);
  onnx::ModelProto two_steps = make();
  Rewrite(two_steps);
  Rewrite(two_steps, required);
  EXPECT_EQ(InputNames(direct.graph()), InputNames(two_steps.graph()));
  for (const auto& name : InputNames(direct.graph())) {
    EXPECT_EQ(DeclaredShape(direct.graph(), name), DeclaredShape(two_steps.graph(), name)) << name;
  }
  EXPECT_EQ(RecordedPairs(direct), RecordedPairs(two_steps));
}

}  // namespace
}  // namespace rnnstate::pipeline_rewrite_test
