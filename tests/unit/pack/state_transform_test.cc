// The stage after the state rewrite: --state-layout batch-first and --pack tensor|sequence, planned as
// data (PlanPack, PlanBatchFirst) and through the whole rewrite (structure, opset forms, metadata, the
// refusals), plus `check`, `init` and the analysis on packed models.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "contract/packed_first_feeds.h"
#include "find/analysis.h"
#include "graph/model_index.h"
#include "graph/naming.h"
#include "graph/node_builder.h"
#include "pack/pack_plan.h"
#include "pack/packed_rewrite.h"
#include "pack/state_layout.h"
#include "pipeline_stages.h"
#include "rnnstate/error.h"
#include "rnnstate/packed_metadata.h"
#include "test_models.h"
#include "test_names.h"
#include "views/check.h"

namespace rnnstate::state_transform_test {
namespace {

using namespace test_names;

/// Two stacked LSTMs (h and c each) and a GRU, no initial states, dynamic batch: five zero states.
std::string TwoLstmsAndGru(int opset) {
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) + R"(]>
g (float[seq, batch, 2] X, float[1, 12, 2] W1, float[1, 12, 3] R1, float[1, 12, 3] W2, float[1, 12, 3] R2,
   float[1, 9, 3] W3, float[1, 9, 3] R3) => (float[seq, 1, batch, 3] Y) {
  Y1 = LSTM <hidden_size = 3> (X, W1, R1)
  S1 = Squeeze <axes = [1]> (Y1)
  Y2 = LSTM <hidden_size = 3> (S1, W2, R2)
  S2 = Squeeze <axes = [1]> (Y2)
  Y = GRU <hidden_size = 3> (S2, W3, R3)
})";
}

/// The same at opset 13+, where Squeeze takes its axes as an input.
std::string TwoLstmsAndGru13(int opset) {
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) + R"(]>
g (float[seq, batch, 2] X, float[1, 12, 2] W1, float[1, 12, 3] R1, float[1, 12, 3] W2, float[1, 12, 3] R2,
   float[1, 9, 3] W3, float[1, 9, 3] R3) => (float[seq, 1, batch, 3] Y) {
  one = Constant <value = int64[1] {1}> ()
  Y1 = LSTM <hidden_size = 3> (X, W1, R1)
  S1 = Squeeze (Y1, one)
  Y2 = LSTM <hidden_size = 3> (S1, W2, R2)
  S2 = Squeeze (Y2, one)
  Y = GRU <hidden_size = 3> (S2, W3, R3)
})";
}

int CountOps(const onnx::GraphProto& graph, const std::string& op) {
  int count = 0;
  for (const auto& node : graph.node()) count += node.op_type() == op;
  return count;
}

TEST(PackTensor, OneBatchFirstTensorReplacesEveryStateInputAndOutput) {
  onnx::ModelProto model = ParseModel(TwoLstmsAndGru13(14));
  RewriteOutcome outcome = Rewrite(model, PackKind::kTensor);
  ASSERT_TRUE(outcome.changed);
  const auto& g = model.graph();
  EXPECT_THAT(InputNames(g), ElementsAre("X", "W1", "R1", "W2", "R2", "W3", "R3", "state_in"));
  EXPECT_THAT(OutputNames(g), ElementsAre("Y", "state_out"));
  // Defaults mode: the empty tensor is the packed input's default; the states' own defaults are gone.
  EXPECT_THAT(InitializerNames(g), ElementsAre("state_in"));
  EXPECT_THAT(g.initializer(0).dims(), ElementsAre(0, 15));
  EXPECT_EQ(DeclaredShape(g, "state_in"), "[state_in_batch,15]");
  EXPECT_EQ(DeclaredShape(g, "state_out"), "[batch,15]");

  const PackedStates packed = Packed(model);
  EXPECT_EQ(packed.kind, kPackedTensor);
  ASSERT_EQ(packed.values.size(), 1u);
  const PackedValue& value = packed.values[0];
  EXPECT_EQ(value.input, "state_in");
  EXPECT_EQ(value.init, kInitEmpty);
  EXPECT_TRUE(value.optional);
  EXPECT_EQ(value.shape, (std::vector<MetaDim>{{-1, "batch"}, {15, ""}}));
  ASSERT_EQ(value.members.size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(value.members[i].states, std::vector<int64_t>{static_cast<int64_t>(i)});
    EXPECT_EQ(value.members[i].offset, static_cast<int64_t>(3 * i));
    EXPECT_EQ(value.members[i].length, 3);
    EXPECT_EQ(value.members[i].row_shape, (std::vector<int64_t>{1, 3}));
    EXPECT_EQ(value.members[i].batch_axis, 1);
  }
  // The states' pairs now name values inside the graph, which have no default.
  const std::vector<StatePair> pairs = RecordedPairs(model);
  ASSERT_EQ(pairs.size(), 5u);
  EXPECT_EQ(pairs[0].input, value.members[0].input);
  EXPECT_FALSE(pairs[0].optional);
  // The five [1,B,3] states are one block: Reshape [B,5,3], Transpose [5,B,3], Split into [1,B,3] each;
  // the final states the reverse. Nothing per state, so the cost per call does not grow with them.
  EXPECT_EQ(CountOps(g, "Unsqueeze"), 0);
  EXPECT_EQ(CountOps(g, "Squeeze"), 2);  // the model's own
  EXPECT_EQ(NodeOfType(g, "Split").output_size(), 5);
  EXPECT_EQ(NodeOfType(g, "Split").output(0), pairs[0].input);
  EXPECT_EQ(testing::Producer(g, "state_out")->op_type(), "Reshape");
  const onnx::NodeProto* transpose = testing::Producer(g, testing::Producer(g, "state_out")->input(0));
  ASSERT_NE(transpose, nullptr);
  EXPECT_EQ(transpose->op_type(), "Transpose");
  EXPECT_EQ(testing::Producer(g, transpose->input(0))->input_size(), 5);  // Concat of the final states
}

TEST(PackTensor, OperatorFormsFollowTheOpset) {
  onnx::ModelProto old = ParseModel(TwoLstmsAndGru(11));
  Rewrite(old, PackKind::kTensor);
  const onnx::NodeProto& split11 = NodeOfType(old.graph(), "Split");
  EXPECT_EQ(split11.input_size(), 1);  // sizes as the `split` attribute before opset 13
  EXPECT_EQ(split11.attribute_size(), 2);
  EXPECT_EQ(OnnxOpset(old), 11);  // never changed

  onnx::ModelProto recent = ParseModel(TwoLstmsAndGru13(13));
  Rewrite(recent, PackKind::kTensor);
  EXPECT_EQ(NodeOfType(recent.graph(), "Split").input_size(), 2);  // sizes as an input from opset 13
  EXPECT_EQ(OnnxOpset(recent), 13);

  // One state: an Unsqueeze and a Squeeze, whose axes are an attribute before 13 and an input after.
  for (int opset : {11, 13}) {
    onnx::ModelProto gru = ParseModel("<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) + R"(]>
g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, batch, 3] Y) {
  Y = GRU <hidden_size = 3> (X, W, R)
})");
    Rewrite(gru, PackKind::kTensor);
    EXPECT_EQ(NodeOfType(gru.graph(), "Unsqueeze").input_size(), opset < 13 ? 1 : 2);
    EXPECT_EQ(NodeOfType(gru.graph(), "Squeeze").input_size(), opset < 13 ? 1 : 2);
    EXPECT_EQ(testing::Producer(gru.graph(), "state_out")->op_type(), "Squeeze");
  }
}

TEST(PackTensor, MembersOfOneShapeFormOneBlock) {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[1, 12, 2] W1, float[1, 12, 3] R1, float[1, 12, 3] W2, float[1, 12, 4] R2) => (float[seq, 1, batch, 4] Y) {
  Y1 = LSTM <hidden_size = 3> (X, W1, R1)
  axis = Constant <value = int64[1] {1}> ()
  S1 = Squeeze (Y1, axis)
  Y = GRU <hidden_size = 4> (S1, W2, R2)
})");
  PlanOptions options;
  options.pack = PackKind::kTensor;
  options.mode = StateInputMode::kRequired;
  PlanOptions expose;
  expose.mode = StateInputMode::kRequired;
  RewriteModel(model, expose, false);
  NameAllocator names(ModelNames(model)), dims(ModelDimParams(model));
  PackPlan plan = PlanPack(model, RecordedPairs(model), options, names, dims);
  ASSERT_EQ(plan.values[0].blocks.size(), 2u);
  EXPECT_TRUE(plan.values[0].blocks[0].group);  // h and c of the LSTM: [1,B,3] each
  EXPECT_EQ(plan.values[0].blocks[0].count, 2u);
  EXPECT_FALSE(plan.values[0].blocks[1].group);  // the GRU's [1,B,4]
  EXPECT_EQ(plan.values[0].blocks[1].offset, 6);
  EXPECT_EQ(plan.values[0].blocks[1].length, 4);
}

TEST(PackTensor, OpsetSevenModelsPack) {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 3, opset_import: ["" : 7]>
g (float[5, 2, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[5, 1, 2, 3] Y) {
  Y = GRU <hidden_size = 3> (X, W, R)
})");
  EXPECT_TRUE(Rewrite(model, PackKind::kTensor, StateLayout::kAsNode, StateInputMode::kRequired).changed);
  EXPECT_EQ(DeclaredShape(model.graph(), "state_out"), "[2,3]");
}

TEST(PackTensor, RequiredModeHasNoDefaultAndSaysHowToStart) {
  onnx::ModelProto model = ParseModel(TwoLstmsAndGru13(14));
  RewriteOutcome outcome = Rewrite(model, PackKind::kTensor, StateLayout::kAsNode, StateInputMode::kRequired);
  EXPECT_THAT(InitializerNames(model.graph()), ElementsAre());
  EXPECT_FALSE(Packed(model).values[0].optional);
  ASSERT_FALSE(outcome.warnings.empty());
  EXPECT_THAT(outcome.warnings.back().text, HasSubstr("feed an empty tensor [0,15] on the first call"));
}

TEST(PackTensor, NamesAreCollisionSafeAndConfigurable) {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R, float[1] state_in) => (float[seq, 1, batch, 3] Y, float[1] state_out) {
  Y = GRU <hidden_size = 3> (X, W, R)
  state_out = Identity (state_in)
})");
  Rewrite(model, PackKind::kTensor);
  EXPECT_THAT(InputNames(model.graph()), ElementsAre("X", "W", "R", "state_in", "state_in_2"));
  EXPECT_THAT(OutputNames(model.graph()), ElementsAre("Y", "state_out", "state_out_2"));

  onnx::ModelProto named = ParseModel(TwoLstmsAndGru13(14));
  PlanOptions options;
  options.pack = PackKind::kTensor;
  options.packed_input = "cache";
  options.packed_output = "cache_next";
  RewriteModel(named, options, false);
  EXPECT_THAT(OutputNames(named.graph()), ElementsAre("Y", "cache_next"));
}

TEST(PackTensor, OneValuePerElementType) {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R, double[seq, batch, 2] Xd, double[1, 9, 2] Wd, double[1, 9, 3] Rd) => (float[seq, 1, batch, 3] Y, double[seq, 1, batch, 3] Yd) {
  Y = GRU <hidden_size = 3> (X, W, R)
  Yd = GRU <hidden_size = 3> (Xd, Wd, Rd)
})");
  Rewrite(model, PackKind::kTensor);
  const PackedStates packed = Packed(model);
  ASSERT_EQ(packed.values.size(), 2u);
  EXPECT_EQ(packed.values[0].input, "state_in.float32");
  EXPECT_EQ(packed.values[1].input, "state_in.float64");
  EXPECT_EQ(packed.values[1].dtype, "float64");
}

TEST(PackTensor, TwiceIsRefusedAndRewritingAgainChangesNothing) {
  onnx::ModelProto model = ParseModel(TwoLstmsAndGru13(14));
  Rewrite(model, PackKind::kTensor);
  const std::string bytes = testing::Bytes(model);
  try {
    Rewrite(model, PackKind::kTensor);
    FAIL() << "packing twice must be refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUnsupported);
    EXPECT_THAT(e.what(), HasSubstr("packed already"));
  }
  EXPECT_FALSE(Rewrite(model, PackKind::kNone).changed);
  EXPECT_FALSE(Rewrite(model, PackKind::kNone, StateLayout::kBatchFirst).changed);
  EXPECT_EQ(testing::Bytes(model), bytes);  // (--state-inputs required switches its mode: pack_interface_test)
}

TEST(PackSequence, NeedsOpsetEleven) {
  onnx::ModelProto model = ParseModel(TwoLstmsAndGru(10));
  try {
    Rewrite(model, PackKind::kSequence);
    FAIL() << "opset 10 has no sequence operators";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUnsupported);
    EXPECT_THAT(e.what(), HasSubstr("opset 11 or newer"));
  }
}

TEST(PackSequence, OneSequenceInputAndOutputWithPositions) {
  onnx::ModelProto model = ParseModel(TwoLstmsAndGru(11));
  Rewrite(model, PackKind::kSequence);
  const auto& g = model.graph();
  EXPECT_THAT(OutputNames(g), ElementsAre("Y", "state_out"));
  const auto& input = g.input(g.input_size() - 1);
  EXPECT_EQ(input.name(), "state_in");
  EXPECT_TRUE(input.type().has_sequence_type());
  EXPECT_THAT(InitializerNames(g), ElementsAre());  // a sequence input has no default
  EXPECT_EQ(NodeOfType(g, "SequenceConstruct").input_size(), 5);
  EXPECT_EQ(NodeOfType(g, "If").output_size(), 5);
  const PackedStates packed = Packed(model);
  EXPECT_EQ(packed.kind, kPackedSequence);
  EXPECT_FALSE(packed.values[0].optional);
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(packed.values[0].members[i].position, static_cast<int64_t>(i));
}

TEST(StateLayout, BatchFirstTransposesInputsAndOutputsAndKeepsNames) {
  onnx::ModelProto model = ParseModel(TwoLstmsAndGru13(14));
  Rewrite(model, PackKind::kNone, StateLayout::kBatchFirst);
  const auto& g = model.graph();
  const StatePair first = RecordedPairs(model).front();
  EXPECT_EQ(DeclaredShape(g, first.input), "[batch,1,3]");
  EXPECT_EQ(DeclaredShape(g, first.output), "[batch,1,3]");
  EXPECT_EQ(CountOps(g, "Transpose"), 10);
  // The default ([1,1,3] zeros broadcast to the batch) is batch-first too.
  for (const auto& tensor : g.initializer()) EXPECT_THAT(tensor.dims(), ElementsAre(1, 1, 3));
  for (const StatePair& pair : RecordedPairs(model)) {
    EXPECT_EQ(pair.layout, kLayoutBatchFirst);
    EXPECT_EQ(pair.batch_axis, 0);
    EXPECT_EQ(pair.shape, (std::vector<MetaDim>{{-1, "batch"}, {1, ""}, {3, ""}}));
  }
  // Again: nothing changes.
  const std::string bytes = testing::Bytes(model);
  EXPECT_FALSE(Rewrite(model, PackKind::kNone, StateLayout::kBatchFirst).changed);
  EXPECT_FALSE(Rewrite(model, PackKind::kNone).changed);
  EXPECT_EQ(testing::Bytes(model), bytes);
}

TEST(StateLayout, PlannedAsData) {
  onnx::ModelProto model = ParseModel(TwoLstmsAndGru13(14));
  Rewrite(model, PackKind::kNone);
  std::vector<StatePair> pairs = RecordedPairs(model);
  pairs[1].batch_axis = 0;         // already batch-first: left as it is
  pairs[2].rows = RowRange{0, 1};  // rows of a stacked tensor: left as it is, with a warning
  NameAllocator names(ModelNames(model)), nodes(ModelNodeNames(model)), dims(ModelDimParams(model));
  LayoutPlan plan = PlanBatchFirst(model, pairs, names, nodes, dims);
  ASSERT_EQ(plan.inputs.size(), 3u);
  EXPECT_EQ(plan.inputs[0].name, pairs[0].input);
  EXPECT_EQ(plan.inputs[0].internal, pairs[0].input + ".node_layout");
  EXPECT_EQ(plan.inputs[0].perm, (std::vector<int64_t>{1, 0, 2}));
  EXPECT_EQ(plan.outputs[0].perm, (std::vector<int64_t>{1, 0, 2}));
  ASSERT_EQ(plan.warnings.size(), 1u);
  EXPECT_THAT(plan.warnings[0], HasSubstr("keeps its layout"));
  EXPECT_EQ(plan.pairs[1].layout, "");
}

TEST(PackPlan, ZerosOfAnEmptyValueTakeTheBatchOfTheData) {
  onnx::ModelProto model = ParseModel(TwoLstmsAndGru13(14));
  PlanOptions required;
  required.mode = StateInputMode::kRequired;
  RewriteModel(model, required, false);
  PlanOptions options;
  options.pack = PackKind::kTensor;
  NameAllocator names(ModelNames(model)), dims(ModelDimParams(model));
  PackPlan plan = PlanPack(model, RecordedPairs(model), options, names, dims);
  ASSERT_EQ(plan.values.size(), 1u);
  // Required mode left no one-row default: the zeros read the batch from axis 1 of X.
  EXPECT_EQ(plan.values[0].zero_batch.input, "X");
  EXPECT_EQ(plan.values[0].zero_batch.axis, 1);
  EXPECT_EQ(plan.values[0].width, 15);
  ASSERT_EQ(plan.Describe().size(), 1u);
  EXPECT_THAT(plan.Describe()[0], HasSubstr("pack 5 state tensors into 'state_in' -> 'state_out'"));
}

TEST(PackedModel, CheckPassesAndCatchesATamperedDescription) {
  onnx::ModelProto model = ParseModel(TwoLstmsAndGru13(14));
  Rewrite(model, PackKind::kTensor);
  {
    ModelIndex index(model);
    Analysis analysis = Analyze(index);
    for (const auto& state : analysis.states) EXPECT_TRUE(state.exposed);
    EXPECT_THAT(CheckModel(index, analysis), ElementsAre());
  }
  // Swap the members' offsets: the description no longer tiles the value in order.
  Json document = *ReadStateDocument(model);
  document["packed"]["values"][0]["members"][0]["offset"] = 3;
  document["packed"]["values"][0]["members"][1]["offset"] = 0;
  WriteStateDocument(model, document);
  ModelIndex index(model);
  std::vector<CheckProblem> problems = CheckModel(index, Analyze(index));
  ASSERT_FALSE(problems.empty());
  EXPECT_EQ(problems[0].kind, CheckProblem::Kind::kPackedMismatch);
  EXPECT_STREQ(CheckProblemKindName(problems[0].kind), "packed_mismatch");
}

TEST(PackedModel, FirstFeedsAreTheEmptyPackedValues) {
  onnx::ModelProto model = ParseModel(TwoLstmsAndGru13(14));
  Rewrite(model, PackKind::kTensor);
  std::vector<FirstFeed> feeds = FirstFeedsOf(model, RecordedPairs(model), 4, {});
  ASSERT_EQ(feeds.size(), 1u);
  EXPECT_EQ(FirstFeedsText(feeds), "state_in  float32  [0,15]  empty\n");

  onnx::ModelProto sequence = ParseModel(TwoLstmsAndGru(11));
  Rewrite(sequence, PackKind::kSequence);
  EXPECT_EQ(FirstFeedsText(FirstFeedsOf(sequence, RecordedPairs(sequence), 4, {})),
            "state_in  sequence<float32>  []  empty\n");
}

TEST(PackedMetadata, ReadRejectsWhatIsNotADescription) {
  onnx::ModelProto model = ParseModel(TwoLstmsAndGru13(14));
  Rewrite(model, PackKind::kTensor);
  Json document = *ReadStateDocument(model);
  document["packed"]["values"][0]["members"][0]["states"] = Json::array({7});
  WriteStateDocument(model, document);
  std::string error;
  EXPECT_FALSE(ReadPackedStates(model, 5, &error).has_value());
  EXPECT_THAT(error, HasSubstr("names state 7"));
  // Writing the pairs again keeps the "packed" key (old readers' writes do not drop it).
  WriteStatePairs(model, RecordedPairs(model));
  EXPECT_TRUE(HasPackedStates(model));
}

}  // namespace
}  // namespace rnnstate::state_transform_test
