// pack/state_layout.h: `--state-layout batch-first` planned as data (PlanBatchFirst: which state inputs and
// outputs are transposed, under which names, what is left and why, what is refused), applied
// (ApplyBatchFirst: Transposes between the interface and the node, declared shapes and defaults permuted),
// and the permutations it is made of. Models as ONNX text, their states exposed by the rewrite first.

#include "pack/state_layout.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "pack/packed_rewrite.h"
#include "rnnstate/error.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::state_layout_test {
namespace {

using namespace test_names;

/// A bidirectional LSTM (h and c [2, batch, 3]) with its states exposed: their defaults are [2, 1, 3].
onnx::ModelProto ExposedBidirectionalLstm() {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[2, 12, 2] W, float[2, 12, 3] R) => (float[seq, 2, batch, 3] Y) {
  Y = LSTM <hidden_size = 3, direction = "bidirectional"> (X, W, R)
})");
  Rewrite(model, PackKind::kNone);
  return model;
}

/// The dims of the initializer `name` of `graph` (empty when there is none).
std::vector<int64_t> InitializerDims(const onnx::GraphProto& graph, const std::string& name) {
  for (const auto& tensor : graph.initializer()) {
    if (tensor.name() == name) return {tensor.dims().begin(), tensor.dims().end()};
  }
  return {};
}

TEST(Permutations, BatchFirstAndInverse) {
  EXPECT_EQ(BatchFirstPermutation(3, 1), (std::vector<int64_t>{1, 0, 2}));
  EXPECT_EQ(BatchFirstPermutation(4, 2), (std::vector<int64_t>{2, 0, 1, 3}));
  EXPECT_EQ(InversePermutation({2, 0, 1, 3}), (std::vector<int64_t>{1, 2, 0, 3}));
}

TEST(Permutations, ABatchFirstAlreadyIsTheIdentityAndInversesUndoEachOther) {
  EXPECT_EQ(BatchFirstPermutation(3, 0), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(BatchFirstPermutation(4, 3), (std::vector<int64_t>{3, 0, 1, 2}));
  for (const std::vector<int64_t>& perm : {std::vector<int64_t>{3, 0, 1, 2}, std::vector<int64_t>{1, 0, 2}}) {
    const std::vector<int64_t> inverse = InversePermutation(perm);
    for (size_t i = 0; i < perm.size(); ++i) EXPECT_EQ(inverse[static_cast<size_t>(perm[i])], static_cast<int64_t>(i));
  }
  EXPECT_THAT(InversePermutation({}), IsEmpty());
}

TEST(PlanBatchFirst, EachStateWithItsBatchOnAxisOneIsTransposedUnderItsOwnNames) {
  const onnx::ModelProto model = ExposedLstm();
  const std::string bytes = Bytes(model);
  const std::vector<StatePair> pairs = RecordedPairs(model);
  ASSERT_EQ(pairs.size(), 2u);
  ModelAllocators a(model);
  const LayoutPlan plan = PlanBatchFirst(model, pairs, a.names, a.nodes, a.dims);
  EXPECT_EQ(Bytes(model), bytes);  // planning changes nothing
  ASSERT_EQ(plan.inputs.size(), 2u);
  ASSERT_EQ(plan.outputs.size(), 2u);
  EXPECT_TRUE(plan.Changes());
  EXPECT_THAT(plan.warnings, IsEmpty());
  for (size_t i = 0; i < 2; ++i) {
    const LayoutChange& in = plan.inputs[i];
    EXPECT_EQ(in.name, pairs[i].input);
    EXPECT_EQ(in.internal, pairs[i].input + ".node_layout");
    EXPECT_EQ(in.perm, (std::vector<int64_t>{1, 0, 2}));
    EXPECT_EQ(in.to_batch_first, (std::vector<int64_t>{1, 0, 2}));
    EXPECT_EQ(in.own_batch, "");  // zeros first, not fed empty
    const LayoutChange& out = plan.outputs[i];
    EXPECT_EQ(out.name, pairs[i].output);
    EXPECT_EQ(out.internal, pairs[i].output + ".node_layout");
    EXPECT_EQ(out.node, pairs[i].output + ".batch_first");
    EXPECT_FALSE(out.copy);
    // The pairs as recorded afterwards: batch-first, same names.
    EXPECT_EQ(plan.pairs[i].input, pairs[i].input);
    EXPECT_EQ(plan.pairs[i].output, pairs[i].output);
    EXPECT_EQ(plan.pairs[i].layout, kLayoutBatchFirst);
    EXPECT_EQ(plan.pairs[i].batch_axis, 0);
    EXPECT_EQ(plan.pairs[i].shape, (std::vector<MetaDim>{{-1, "batch"}, {1, ""}, {3, ""}}));
  }
}

TEST(PlanBatchFirst, StatesBatchFirstAlreadyStackedOrWithoutABatchKeepTheirLayout) {
  const onnx::ModelProto model = ExposedLstm();
  std::vector<StatePair> pairs = RecordedPairs(model);
  ASSERT_EQ(pairs.size(), 2u);
  pairs[0].batch_axis = -1;        // no batch axis: a warning
  pairs[1].rows = RowRange{0, 1};  // rows of a stacked tensor: one warning for the tensor,
  pairs.push_back(pairs[1]);       // however many of its rows are states
  pairs.back().rows = RowRange{1, 2};
  StatePair first = RecordedPairs(model)[0];
  first.batch_axis = 0;  // batch-first already: left silently
  pairs.push_back(first);
  ModelAllocators a(model);
  const LayoutPlan plan = PlanBatchFirst(model, pairs, a.names, a.nodes, a.dims);
  EXPECT_FALSE(plan.Changes());
  EXPECT_EQ(plan.pairs, pairs);
  ASSERT_EQ(plan.warnings.size(), 2u);
  EXPECT_THAT(plan.warnings[0], HasSubstr("'" + pairs[0].input + "'"));
  EXPECT_THAT(plan.warnings[0], HasSubstr("has no batch axis: it keeps its layout"));
  EXPECT_THAT(plan.warnings[1], HasSubstr("'" + pairs[1].input + "'"));
  EXPECT_THAT(plan.warnings[1], HasSubstr("own tensor of stacked states: it keeps its layout"));
}

TEST(PlanBatchFirst, TheModelsOwnOutputKeepsItsLayoutAndGetsABatchFirstCopy) {
  const onnx::ModelProto model = ExposedLstm();
  const std::vector<StatePair> pairs = RecordedPairs(model);
  ModelAllocators a(model);
  const LayoutPlan plan =
      PlanBatchFirst(model, pairs, a.names, a.nodes, a.dims, {pairs[0].output}, "{node}.{kind}_first");
  ASSERT_EQ(plan.outputs.size(), 2u);
  EXPECT_TRUE(plan.outputs[0].copy);
  EXPECT_EQ(plan.outputs[0].internal, pairs[0].output);  // stays, as it was
  const std::string copy = pairs[0].node + "." + pairs[0].kind + "_first";
  EXPECT_EQ(plan.outputs[0].name, copy);
  EXPECT_EQ(plan.pairs[0].output, copy);  // the state leaves through the copy
  EXPECT_FALSE(plan.outputs[1].copy);
  EXPECT_EQ(plan.pairs[1].output, pairs[1].output);
}

TEST(PlanBatchFirst, AStateFedEmptyFirstDeclaresABatchOfItsOwn) {
  onnx::ModelProto model = ExposedLstm();
  std::vector<StatePair> pairs = RecordedPairs(model);
  pairs[0].init = kInitEmpty;
  ModelAllocators a(model);
  const LayoutPlan plan = PlanBatchFirst(model, pairs, a.names, a.nodes, a.dims);
  ASSERT_EQ(plan.inputs.size(), 2u);
  EXPECT_EQ(plan.inputs[0].own_batch, pairs[0].input + "_batch");
  EXPECT_EQ(plan.inputs[1].own_batch, "");
  ApplyBatchFirst(plan, model);
  EXPECT_EQ(DeclaredShape(model.graph(), pairs[0].input), "[" + pairs[0].input + "_batch,1,3]");
  EXPECT_EQ(DeclaredShape(model.graph(), pairs[1].input), "[batch,1,3]");
}

TEST(PlanBatchFirst, RefusesStatesItCannotTranspose) {
  const onnx::ModelProto model = ExposedLstm();
  const std::vector<StatePair> recorded = RecordedPairs(model);
  ASSERT_THAT(recorded, SizeIs(2u));
  auto plan_with = [&](const StatePair& pair, const onnx::ModelProto& of) {
    ModelAllocators a(of);
    PlanBatchFirst(of, {pair}, a.names, a.nodes, a.dims);
  };
  StatePair elsewhere = recorded[0];
  elsewhere.input = "nowhere";
  ExpectError([&] { plan_with(elsewhere, model); }, ExitCode::kUnsupported,
              "not a main-graph input and output (rewrite the model first)");
  // A default of two rows with the batch behind another axis of 2: its values would move.
  onnx::ModelProto rows = model;
  for (auto& tensor : *rows.mutable_graph()->mutable_initializer()) {
    if (tensor.name() != recorded[0].input) continue;
    tensor.set_dims(0, 2);
    tensor.set_dims(1, 2);
  }
  ExpectError([&] { plan_with(recorded[0], rows); }, ExitCode::kUnsupported,
              "would need its values reordered; --state-layout batch-first does not do that");
}

TEST(ApplyBatchFirst, TransposesBetweenTheInterfaceAndTheNodeAndPermutesShapesAndDefaults) {
  onnx::ModelProto model = ExposedBidirectionalLstm();
  const std::vector<StatePair> pairs = RecordedPairs(model);
  ASSERT_EQ(pairs.size(), 2u);
  ASSERT_EQ(InitializerDims(model.graph(), pairs[0].input), (std::vector<int64_t>{2, 1, 3}));
  ModelAllocators a(model);
  const LayoutPlan plan = PlanBatchFirst(model, pairs, a.names, a.nodes, a.dims);
  ApplyBatchFirst(plan, model);
  const onnx::GraphProto& g = model.graph();
  for (const StatePair& pair : pairs) {
    EXPECT_EQ(DeclaredShape(g, pair.input), "[batch,2,3]");
    EXPECT_EQ(DeclaredShape(g, pair.output), "[batch,2,3]");
    EXPECT_EQ(InitializerDims(g, pair.input), (std::vector<int64_t>{1, 2, 3}));
    // input -> Transpose -> the node's own layout -> LSTM -> Transpose -> output
    const onnx::NodeProto* in = testing::Producer(g, pair.input + ".node_layout");
    ASSERT_NE(in, nullptr);
    EXPECT_EQ(in->op_type(), "Transpose");
    EXPECT_EQ(in->input(0), pair.input);
    const onnx::NodeProto* out = testing::Producer(g, pair.output);
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(out->op_type(), "Transpose");
    EXPECT_EQ(out->name(), pair.output + ".batch_first");
    ASSERT_NE(testing::Producer(g, out->input(0)), nullptr);
    EXPECT_EQ(testing::Producer(g, out->input(0))->op_type(), "LSTM");
  }
  // The node side reads the node's layout only: each state input has one reader, its Transpose.
  for (const StatePair& pair : pairs) {
    int readers = 0;
    for (const auto& node : g.node())
      readers += static_cast<int>(std::count(node.input().begin(), node.input().end(), pair.input));
    EXPECT_EQ(readers, 1) << pair.input;
  }
  EXPECT_EQ(g.node(0).op_type(), "Transpose");  // before the node that reads it
  EXPECT_EQ(g.node(g.node_size() - 1).op_type(), "Transpose");
}

}  // namespace
}  // namespace rnnstate::state_layout_test
