// pack/pack_plan.h: `--pack tensor|sequence` planned as data (PlanPack): the packed values, one per element
// type, their members' columns or positions, the names added, what a runtime must be told, and the
// refusals. kLstm's two states, exposed by the rewrite first; the model itself is never changed.

#include "pack/pack_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pack/packed_rewrite.h"
#include "rnnstate/error.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::pack_plan_test {
namespace {

using namespace test_names;

/// PlanPack of `model`'s recorded pairs (or `pairs` when given) as `options` asks.
PackPlan PlanOf(const onnx::ModelProto& model, const PlanOptions& options, std::vector<StatePair> pairs = {},
                const std::set<std::string>& own_outputs = {}) {
  if (pairs.empty()) pairs = RecordedPairs(model);
  ModelAllocators a(model);
  return PlanPack(model, pairs, options, a.names, a.dims, own_outputs);
}

TEST(PlanPack, ATensorHoldsEveryStateSideBySideInItsColumns) {
  const onnx::ModelProto model = ExposedLstm(StateInputMode::kRequired);
  const std::string bytes = Bytes(model);
  const std::vector<StatePair> pairs = RecordedPairs(model);
  ASSERT_EQ(pairs.size(), 2u);
  const PackPlan plan = PlanOf(model, Packing(PackKind::kTensor, StateLayout::kAsNode, StateInputMode::kRequired));
  EXPECT_EQ(Bytes(model), bytes);
  EXPECT_EQ(plan.kind, PackKind::kTensor);
  EXPECT_EQ(plan.opset, 14);
  EXPECT_FALSE(plan.defaults);
  ASSERT_EQ(plan.values.size(), 1u);
  const PackValuePlan& value = plan.values[0];
  EXPECT_EQ(value.meta.input, "state_in");
  EXPECT_EQ(value.meta.output, "state_out");
  EXPECT_EQ(value.meta.dtype, "float32");
  EXPECT_EQ(value.meta.init, kInitEmpty);
  EXPECT_FALSE(value.meta.optional);
  EXPECT_EQ(value.width, 6);
  EXPECT_EQ(value.meta.shape, (std::vector<MetaDim>{{-1, "batch"}, {6, ""}}));
  EXPECT_EQ(value.declared_batch, "state_in_batch");  // its own: the first feed has 0 rows
  // No default to copy: the zeros of an empty value take the batch of X.
  EXPECT_EQ(value.zero_batch.input, "X");
  EXPECT_EQ(value.zero_batch.axis, 1);
  ASSERT_EQ(value.members.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(value.members[i].meta.input, pairs[i].input);
    EXPECT_EQ(value.members[i].meta.offset, static_cast<int64_t>(3 * i));
    EXPECT_EQ(value.members[i].meta.length, 3);
    EXPECT_EQ(value.members[i].meta.row_shape, (std::vector<int64_t>{1, 3}));
    EXPECT_FALSE(plan.pairs[i].optional);  // the states' own inputs leave the interface
  }
  // h and c, both [1, B, 3]: one block of two, unpacked by one Reshape, Transpose and Split.
  ASSERT_EQ(value.blocks.size(), 1u);
  EXPECT_TRUE(value.blocks[0].group);
  EXPECT_EQ(value.blocks[0].count, 2u);
  EXPECT_EQ(value.blocks[0].length, 6);
  EXPECT_EQ(value.blocks[0].flat, "state_out");
  ASSERT_EQ(plan.notes.size(), 1u);
  EXPECT_THAT(plan.notes[0], HasSubstr("feed an empty tensor [0,6] on the first call"));
  EXPECT_THAT(plan.Describe(), ElementsAre("pack 2 state tensors into 'state_in' -> 'state_out' (float32 tensor "
                                           "[batch,6], first feed empty)"));
  EXPECT_EQ(plan.packed.kind, kPackedTensor);
  ASSERT_EQ(plan.packed.values.size(), 1u);
  EXPECT_EQ(plan.packed.values[0].input, "state_in");
}

TEST(PlanPack, InDefaultsModeTheTensorIsOptionalAndItsZerosOneRow) {
  const onnx::ModelProto model = ExposedLstm();
  const PackPlan plan = PlanOf(model, Packing(PackKind::kTensor, StateLayout::kAsNode));
  EXPECT_TRUE(plan.defaults);
  ASSERT_EQ(plan.values.size(), 1u);
  EXPECT_TRUE(plan.values[0].meta.optional);
  EXPECT_EQ(plan.values[0].zero_batch.fixed, 1);  // the defaults [1,1,3] broadcast to the batch
  EXPECT_THAT(plan.notes, IsEmpty());
  EXPECT_THAT(plan.Describe()[0], HasSubstr("first feed empty, optional)"));
}

TEST(PlanPack, ASequenceHoldsEachStateAtItsPosition) {
  const onnx::ModelProto model = ExposedLstm(StateInputMode::kRequired);
  const PackPlan plan = PlanOf(model, Packing(PackKind::kSequence, StateLayout::kAsNode, StateInputMode::kRequired));
  EXPECT_FALSE(plan.defaults);  // a sequence input has no default
  ASSERT_EQ(plan.values.size(), 1u);
  const PackValuePlan& value = plan.values[0];
  EXPECT_THAT(value.blocks, IsEmpty());
  ASSERT_EQ(value.members.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(value.members[i].meta.position, static_cast<int64_t>(i));
    EXPECT_EQ(value.members[i].zero_batch.input, "X");
  }
  EXPECT_EQ(plan.packed.kind, kPackedSequence);
  EXPECT_THAT(plan.notes[0], HasSubstr("feed an empty sequence on the first call"));
  EXPECT_THAT(plan.Describe()[0], HasSubstr("(float32 sequence, first feed empty)"));
}

TEST(PlanPack, OneValuePerElementTypeInTheOrderTheTypesAppear) {
  const onnx::ModelProto model = ExposedLstm(StateInputMode::kRequired);
  std::vector<StatePair> pairs = RecordedPairs(model);
  pairs[0].dtype = "float64";
  const PackPlan plan =
      PlanOf(model, Packing(PackKind::kTensor, StateLayout::kAsNode, StateInputMode::kRequired), pairs);
  ASSERT_EQ(plan.values.size(), 2u);
  EXPECT_EQ(plan.values[0].meta.input, "state_in.float64");
  EXPECT_EQ(plan.values[0].elem_type, onnx::TensorProto::DOUBLE);
  EXPECT_EQ(plan.values[1].meta.output, "state_out.float32");
  EXPECT_EQ(plan.values[1].width, 3);
}

TEST(PlanPack, TheModelsOwnOutputsAreKept) {
  const onnx::ModelProto model = ExposedLstm();
  const std::vector<StatePair> pairs = RecordedPairs(model);
  const PackPlan plan = PlanOf(model, Packing(PackKind::kTensor, StateLayout::kAsNode), pairs, {pairs[1].output, "Y"});
  EXPECT_THAT(plan.kept_outputs, ElementsAre(pairs[1].output));
}

TEST(PlanPack, RefusesStatesItCannotPack) {
  const onnx::ModelProto model = ExposedLstm(StateInputMode::kRequired);
  const std::vector<StatePair> recorded = RecordedPairs(model);
  const PlanOptions tensor = Packing(PackKind::kTensor, StateLayout::kAsNode, StateInputMode::kRequired);
  onnx::ModelProto opset10 = model;
  opset10.mutable_opset_import(0)->set_version(10);
  ExpectError([&] { PlanOf(opset10, Packing(PackKind::kSequence, StateLayout::kAsNode)); }, ExitCode::kUnsupported,
              "--pack sequence needs ai.onnx opset 11 or newer");
  std::vector<StatePair> batches = recorded;
  batches[1].shape[1] = MetaDim{2, ""};
  ExpectError([&] { PlanOf(model, tensor, batches); }, ExitCode::kUnsupported,
              "its batch '2' is not the batch 'batch'");
  std::vector<StatePair> unfixed = recorded;
  unfixed[0].shape[2] = MetaDim{-1, "hidden"};
  ExpectError([&] { PlanOf(model, tensor, unfixed); }, ExitCode::kUnsupported,
              "its size on axis 2 is not fixed (use --pack sequence)");
  std::vector<StatePair> unbatched = recorded;
  unbatched[0].batch_axis = -1;
  ExpectError([&] { PlanOf(model, tensor, unbatched); }, ExitCode::kUnsupported,
              "it has no batch axis (use --pack sequence)");
}

TEST(PlanPack, APackedNameAskedForMustBeFreeADefaultOneIsMadeFree) {
  const onnx::ModelProto model = ExposedLstm();
  PlanOptions options = Packing(PackKind::kTensor, StateLayout::kAsNode);
  options.packed_input = "X";
  EXPECT_EQ(PlanOf(model, options).values[0].meta.input, "X_2");
  options.packed_input_given = true;
  ExpectError([&] { PlanOf(model, options); }, ExitCode::kUsage,
              "--packed-input 'X' is already a name in the model (an input, output or value)");
}

}  // namespace
}  // namespace rnnstate::pack_plan_test
