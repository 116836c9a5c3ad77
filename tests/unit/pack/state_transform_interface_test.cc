// What packing and --state-layout batch-first keep of a model's interface and what they ask of a caller:
// the model's own outputs stay (in their layout), a state without a batch axis packs into a sequence,
// --state-inputs required switches a packed model's mode, explicitly named packed values must be free,
// and `init` refuses a batch the model does not run at.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "contract/packed_first_feeds.h"
#include "pack/packed_rewrite.h"
#include "pipeline_stages.h"
#include "rnnstate/error.h"
#include "rnnstate/packed_metadata.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::state_transform_interface_test {
namespace {

using namespace test_names;

/// PyTorch's export of LSTM + GRU: y and the GRU's h_n are the model's outputs; the LSTM's finals are not.
const std::string kLstmGru = LstmThenGru(3);

/// A Scan whose state [2] has no batch axis, from a zero initializer (added by the tests).
const char* kNoBatchScan = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, 2] x) => (float[seq, 2] y) {
  s_final, y = Scan <num_scan_inputs = 1, body = body (float[2] s_prev, float[2] x_t) => (float[2] s_next, float[2] s_scan) {
    s_next = Add (s_prev, x_t)
    s_scan = Identity (s_next)
  }> (s0, x)
})";

onnx::ModelProto NoBatchScan(float initial) {
  onnx::ModelProto model = ParseModel(kNoBatchScan);
  testing::AddFloatInitializer(*model.mutable_graph(), "s0", {2}, {initial});
  return model;
}

TEST(PackInterface, TheModelsOwnOutputsStayBesideThePackedValue) {
  for (PackKind pack : {PackKind::kTensor, PackKind::kSequence}) {
    onnx::ModelProto model = ParseModel(kLstmGru);
    Rewrite(model, pack, StateLayout::kAsNode, StateInputMode::kRequired);
    // h_n is the model's result: it stays an output, and state_out holds a copy of it.
    EXPECT_THAT(OutputNames(model.graph()), ElementsAre("Y", "h_n", "state_out"));
    EXPECT_EQ(DeclaredShape(model.graph(), "h_n"), "[1,batch,3]");
    const PackedStates packed = Packed(model);
    ASSERT_EQ(packed.values.size(), 1u);
    EXPECT_EQ(packed.values[0].members.back().output, "h_n");
    // The state inputs are replaced by the packed value (the LSTM's had no input of the model's own).
    EXPECT_THAT(InputNames(model.graph()), ElementsAre("X", "W1", "R1", "W2", "R2", "state_in"));
  }
}

TEST(PackInterface, TheAuthorsOwnStateInputsArePackedTheirOutputsKept) {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R, float[1, batch, 3] h0) => (float[seq, 1, batch, 3] Y, float[1, batch, 3] h_n) {
  Y, h_n = GRU <hidden_size = 3> (X, W, R, , , h0)
})");
  Rewrite(model, PackKind::kTensor, StateLayout::kAsNode, StateInputMode::kRequired);
  EXPECT_THAT(InputNames(model.graph()), ElementsAre("X", "W", "R", "state_in"));
  EXPECT_THAT(OutputNames(model.graph()), ElementsAre("Y", "h_n", "state_out"));
  EXPECT_EQ(Packed(model).values[0].members[0].input, "h0");  // its columns of state_in
}

TEST(PackInterface, BatchFirstKeepsTheModelsOwnOutputInItsLayout) {
  onnx::ModelProto model = ParseModel(kLstmGru);
  Rewrite(model, PackKind::kNone, StateLayout::kBatchFirst, StateInputMode::kRequired);
  const auto& g = model.graph();
  EXPECT_THAT(OutputNames(g), ElementsAre("Y", "h_n", "LSTM_0.h_out", "LSTM_0.c_out", "GRU_3.h_out"));
  EXPECT_EQ(DeclaredShape(g, "h_n"), "[1,batch,3]");  // the model's own, as it was
  EXPECT_EQ(DeclaredShape(g, "GRU_3.h_out"), "[batch,1,3]");
  EXPECT_EQ(DeclaredShape(g, "LSTM_0.h_out"), "[batch,1,3]");  // added by rnnstate: batch-first in place
  const std::vector<StatePair> pairs = RecordedPairs(model);
  ASSERT_EQ(pairs.size(), 3u);
  EXPECT_EQ(pairs[2].output, "GRU_3.h_out");
  EXPECT_EQ(pairs[2].layout, kLayoutBatchFirst);
  ASSERT_NE(testing::Producer(g, "GRU_3.h_out"), nullptr);
  EXPECT_EQ(testing::Producer(g, "GRU_3.h_out")->op_type(), "Transpose");
  EXPECT_EQ(testing::Producer(g, "GRU_3.h_out")->input(0), "h_n");
}

TEST(PackInterface, BatchFirstWarnsOncePerStackedTensor) {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[1, 12, 2] W1, float[1, 12, 3] R1, float[1, 12, 3] W2, float[2, batch, 3] h0, float[2, batch, 3] c0)
    => (float[seq, 1, batch, 3] Y, float[2, batch, 3] h_n, float[2, batch, 3] c_n) {
  s0 = Constant <value = int64[1] {0}> ()
  s1 = Constant <value = int64[1] {1}> ()
  s2 = Constant <value = int64[1] {2}> ()
  h0a = Slice (h0, s0, s1)
  c0a = Slice (c0, s0, s1)
  h0b = Slice (h0, s1, s2)
  c0b = Slice (c0, s1, s2)
  Y1, ha, ca = LSTM <hidden_size = 3> (X, W1, R1, , , h0a, c0a)
  S1 = Squeeze (Y1, s1)
  Y, hb, cb = LSTM <hidden_size = 3> (S1, W2, R1, , , h0b, c0b)
  h_n = Concat <axis = 0> (ha, hb)
  c_n = Concat <axis = 0> (ca, cb)
})");
  RewriteOutcome outcome = Rewrite(model, PackKind::kNone, StateLayout::kBatchFirst, StateInputMode::kRequired);
  int stacked = 0;
  for (const Warning& warning : outcome.warnings) stacked += warning.text.find("stacked states") != std::string::npos;
  EXPECT_EQ(stacked, 2);  // h0 and c0, not one per row
}

TEST(PackInterface, AStateWithoutABatchAxisPacksIntoASequence) {
  onnx::ModelProto model = NoBatchScan(0.0F);
  Rewrite(model, PackKind::kSequence);  // crashed (an index -1) before
  const PackedStates packed = Packed(model);
  ASSERT_EQ(packed.values.size(), 1u);
  EXPECT_EQ(packed.values[0].members[0].batch_axis, -1);
  // Its zeros, for an empty sequence, are zeros of its own shape (a constant shape).
  const onnx::NodeProto& select = testing::NodeOfType(model.graph(), "If");
  const onnx::GraphProto& then_branch =
      select.attribute(0).name() == "then_branch" ? select.attribute(0).g() : select.attribute(1).g();
  ASSERT_EQ(then_branch.node_size(), 2);
  EXPECT_EQ(then_branch.node(0).op_type(), "Constant");
  EXPECT_THAT(then_branch.node(0).attribute(0).t().int64_data(), ElementsAre(2));
  EXPECT_EQ(then_branch.node(1).op_type(), "ConstantOfShape");

  onnx::ModelProto tensor = NoBatchScan(0.0F);
  try {
    Rewrite(tensor, PackKind::kTensor);
    FAIL() << "a state without a batch axis has no rows to pack";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUnsupported);
    EXPECT_THAT(e.what(), HasSubstr("no batch axis (use --pack sequence)"));
  }
}

TEST(PackInterface, RequiredSwitchesAPackedModelInDefaultsMode) {
  onnx::ModelProto model = ParseModel(kLstmGru);
  Rewrite(model, PackKind::kTensor);
  EXPECT_THAT(InitializerNames(model.graph()), ElementsAre("state_in"));
  RewriteOutcome outcome = Rewrite(model, PackKind::kNone, StateLayout::kAsNode, StateInputMode::kRequired);
  EXPECT_TRUE(outcome.changed);
  EXPECT_THAT(InitializerNames(model.graph()), ElementsAre());  // JavaScript runtimes list it now
  EXPECT_FALSE(Packed(model).values[0].optional);
  ASSERT_FALSE(outcome.warnings.empty());
  EXPECT_THAT(outcome.warnings.back().text, HasSubstr("feed an empty tensor [0,9] on the first call"));
  // The same interface as packing the original in required mode.
  onnx::ModelProto direct = ParseModel(kLstmGru);
  Rewrite(direct, PackKind::kTensor, StateLayout::kAsNode, StateInputMode::kRequired);
  EXPECT_EQ(InputNames(model.graph()), InputNames(direct.graph()));
  EXPECT_EQ(OutputNames(model.graph()), OutputNames(direct.graph()));
  EXPECT_EQ(DeclaredShape(model.graph(), "state_in"), DeclaredShape(direct.graph(), "state_in"));
  // Again: nothing left to change.
  EXPECT_FALSE(Rewrite(model, PackKind::kNone, StateLayout::kAsNode, StateInputMode::kRequired).changed);
}

TEST(PackInterface, RequiredRefusesABatchFirstModelInDefaultsMode) {
  onnx::ModelProto model = ParseModel(kLstmGru);
  Rewrite(model, PackKind::kNone, StateLayout::kBatchFirst);
  try {
    Rewrite(model, PackKind::kNone, StateLayout::kAsNode, StateInputMode::kRequired);
    FAIL() << "a silent no-op leaves the state inputs invisible to JavaScript runtimes";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUnsupported);
    EXPECT_THAT(e.what(), HasSubstr("--state-layout batch-first --state-inputs required"));
  }
}

TEST(PackInterface, AnExplicitPackedNameThatIsTakenIsAUsageError) {
  onnx::ModelProto model = ParseModel(kLstmGru);
  PlanOptions options;
  options.pack = PackKind::kTensor;
  options.packed_input = "X";
  options.packed_input_given = true;
  try {
    RewriteModel(model, options, false);
    FAIL() << "--packed-input X names the data input";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
    EXPECT_THAT(e.what(), HasSubstr("--packed-input 'X' is already a name in the model"));
  }
  options.packed_input_given = false;  // the default name is made unique instead
  options.packed_input = "state_in";
  options.packed_output = "Y";
  options.packed_output_given = true;
  EXPECT_THROW(RewriteModel(model, options, false), Error);
}

TEST(PackInterface, InitRefusesABatchTheModelDoesNotRunAt) {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[5, 2, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[5, 1, 2, 3] Y) {
  Y = GRU <hidden_size = 3> (X, W, R)
})");
  onnx::ModelProto packed = model;
  Rewrite(model, PackKind::kNone, StateLayout::kAsNode, StateInputMode::kRequired);
  EXPECT_EQ(FirstFeedsText(FirstFeedsOf(model, RecordedPairs(model), 2, {})), "GRU_0.h_in  float32  [1,2,3]  zeros\n");
  try {
    FirstFeedsOf(model, RecordedPairs(model), 5, {});
    FAIL() << "--batch 5 on a batch-2 model";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
    EXPECT_THAT(e.what(), HasSubstr("has a fixed batch of 2"));
  }
  Rewrite(packed, PackKind::kTensor, StateLayout::kAsNode, StateInputMode::kRequired);
  EXPECT_THROW(FirstFeedsOf(packed, RecordedPairs(packed), 5, {}), Error);
  // A fixed batch is declared symbolic (a name of its own), so that [0, N] is a valid first feed.
  EXPECT_EQ(DeclaredShape(packed.graph(), "state_in"), "[state_in_batch,3]");
}

}  // namespace
}  // namespace rnnstate::state_transform_interface_test
