// Issue 38, item 3: a state's batch is the data's batch. keras2onnx writes a stacked layer's input as
// Transpose(Reshape(Transpose(Y), Concat([-1], Shape(x)[1:2], [H]))), whose shape onnx's inference leaves
// unknown (not even the rank): the second layer's state must still get the data input's own dimension
// `N`, not a new name. A Reshape that merges the batch with another axis is no such trace.

#include "rewrite/data_batch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "find/analysis.h"
#include "rewrite/planner.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate {
namespace {

using namespace test_names;

/// Two keras2onnx LSTM layers (H 4) over input_1 [N, 6, 5]; the first's sequence output reshaped to
/// `target` (a computed shape: keras2onnx's dynamic-length form).
std::string Keras2Onnx(const std::string& target, const std::string& length = "6") {
  return R"(<ir_version: 6, opset_import: ["" : 11]>
g (float[N, )" +
         length + R"(, 5] input_1, float[1, 16, 5] W1, float[1, 16, 4] R1, float[1, 16, 4] W2, float[1, 16, 4] R2)
    => (float[1, ?, 4] Yh2) {
  X1 = Transpose <perm = [1, 0, 2]> (input_1)
  Y1, Yh1, Yc1 = LSTM <hidden_size = 4> (X1, W1, R1)
  Yt = Transpose <perm = [2, 0, 1, 3]> (Y1)
  shape = Shape (input_1)
  s1 = Constant <value = int64[1] {1}> ()
  s2 = Constant <value = int64[1] {2}> ()
  s0 = Constant <value = int64[1] {0}> ()
  seq = Slice (shape, s1, s2, s0)
  minus1 = Constant <value = int64[1] {-1}> ()
  hidden = Constant <value = int64[1] {4}> ()
  four = Constant <value = int64[1] {4}> ()
)" + target +
         R"(
  reshaped = Reshape (Yt, dims)
  out1 = Identity (reshaped)
  X2 = Transpose <perm = [1, 0, 2]> (out1)
  Y2, Yh2, Yc2 = LSTM <hidden_size = 4> (X2, W2, R2)
})";
}

const char* kKerasTarget = "  dims = Concat <axis = 0> (minus1, seq, hidden)";
// [N*6, 1, 4] read as [6, N, 4]: the second layer's axis 1 is no longer N.
const char* kMergingTarget =
    "  six = Constant <value = int64[1] {6}> ()\n  dims = Concat <axis = 0> (six, minus1, four)";

// [N, 6, 1, 4] read as [3N, 2, 4]: the second layer runs 2 steps over a batch of 3N, no data input's dim.
const char* kFoldingTarget =
    "  two = Constant <value = int64[1] {2}> ()\n  dims = Concat <axis = 0> (minus1, two, four)";

std::vector<Dim> BatchesOf(const std::string& text) {
  const onnx::ModelProto model = ParseModel(text);
  const ModelIndex index(model);
  const Analysis analysis = Analyze(index);
  const BranchFacts facts = BranchFacts::Find(index);
  std::vector<Dim> batches;
  for (const StateAnalysis& state : analysis.states)
    batches.push_back(FindDataBatch(index, state.state, "", &facts).dim);
  return batches;
}

TEST(DataBatch, AStackedLayerAfterAComputedReshapeHasTheDataInputsBatch) {
  const std::vector<Dim> batches = BatchesOf(Keras2Onnx(kKerasTarget));
  ASSERT_EQ(batches.size(), 4u);
  for (const Dim& batch : batches) EXPECT_EQ(batch.param, "N");
  // The plan declares every state input [1, N, 4].
  const onnx::ModelProto model = ParseModel(Keras2Onnx(kKerasTarget));
  const ModelIndex index(model);
  const Plan plan = MakePlan(index, Analyze(index), PlanOptions{});
  ASSERT_EQ(plan.pairs.size(), 4u);
  for (const StatePair& pair : plan.pairs) {
    ASSERT_EQ(pair.shape.size(), 3u);
    EXPECT_EQ(pair.shape[1].symbol, "N") << pair.node << " " << pair.kind;
  }
}

TEST(DataBatch, TheMinusOneOfAComputedReshapeIsTheDimNoOtherTargetDimNames) {
  // [N, T, 1, 4] to [-1, T, 4] with T symbolic too: -1 is N (T is named by the target), not the last
  // symbolic dim of the input.
  const std::vector<Dim> batches = BatchesOf(Keras2Onnx(kKerasTarget, "T"));
  ASSERT_EQ(batches.size(), 4u);
  for (const Dim& batch : batches) EXPECT_EQ(batch.param, "N");
}

TEST(DataBatch, AReshapeMergingTheBatchWithAnotherAxisIsNoTrace) {
  const std::vector<Dim> batches = BatchesOf(Keras2Onnx(kMergingTarget));
  ASSERT_EQ(batches.size(), 4u);
  EXPECT_EQ(batches[0].param, "N");
  EXPECT_NE(batches[2].param, "N");
  EXPECT_NE(batches[3].param, "N");
}

TEST(DataBatch, ABatchNoDataInputGivesIsNamedApart) {
  // The second layer's batch is 3N: its inputs must not declare the data's N (a runtime would be told they
  // are equal).
  for (StateInputMode mode : {StateInputMode::kDefaults, StateInputMode::kRequired}) {
    const onnx::ModelProto model = ParseModel(Keras2Onnx(kFoldingTarget));
    const ModelIndex index(model);
    PlanOptions options;
    options.mode = mode;
    const Plan plan = MakePlan(index, Analyze(index), options);
    ASSERT_EQ(plan.pairs.size(), 4u);
    int apart = 0;
    for (const StatePair& pair : plan.pairs) {
      ASSERT_EQ(pair.shape.size(), 3u);
      if (pair.shape[1].symbol == "N") continue;
      ++apart;
      EXPECT_NE(pair.shape[1].symbol, "") << pair.input;
      EXPECT_LT(pair.shape[1].value, 0) << pair.input;
    }
    EXPECT_EQ(apart, 2) << "the second layer's h and c";
  }
}

TEST(DataBatch, ComputedZerosOfABatchNoDataInputGivesAreSelectedByAnEmptyFeed) {
  // A dual-path model's GRU over time runs on batch x frequency rows, its zeros computed from its X
  // (PyTorch's ConstantOfShape): no caller can size them, so the first feed is the empty tensor that
  // selects the model's own zeros, in both modes.
  const std::string text = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, T, 5, 3] x, float[1, 12, 3] W, float[1, 12, 4] R) => (float[T, 1, ?, 4] Y) {
  t = Transpose <perm = [1, 0, 2, 3]> (x)
  rows = Constant <value = int64[3] {0, -1, 3}> ()
  X = Reshape (t, rows)
)" + testing::ZeroStateOfBatchText("X", 1, 4, {"s", "i1", "b", "one", "four", "hs", "h0"}) +
                           R"(  Y, Yh = GRU <hidden_size = 4> (X, W, R, , , h0)
})";
  for (StateInputMode mode : {StateInputMode::kDefaults, StateInputMode::kRequired}) {
    const onnx::ModelProto model = ParseModel(text);
    const ModelIndex index(model);
    PlanOptions options;
    options.mode = mode;
    const Plan plan = MakePlan(index, Analyze(index), options);
    ASSERT_EQ(plan.pairs.size(), 1u);
    const StatePair& pair = plan.pairs[0];
    ASSERT_EQ(pair.shape.size(), 3u);
    // The data's own name for its batch ("batch") would claim the rows are that batch.
    EXPECT_NE(pair.shape[1].symbol, "batch");
    EXPECT_NE(pair.shape[1].symbol, "");
    EXPECT_EQ(pair.init, "empty");
  }
}

}  // namespace
}  // namespace rnnstate
