// pack/pack_apply.h: a PackPlan executed (ApplyPack): the packed value takes the place of the states'
// inputs, defaults and outputs in the interface, unpacking nodes go first and packing nodes last, the
// model's own outputs stay, and the result is a valid model. kLstm's two states, exposed by the rewrite
// first, planned by PlanPack.

#include "pack/pack_apply.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pack/pack_plan.h"
#include "pack/packed_rewrite.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::pack_apply_test {
namespace {

using namespace test_names;

/// kLstm exposed in `mode` (its pairs in `pairs`), then planned and packed with `kind`; `own_outputs` the
/// outputs it keeps.
onnx::ModelProto PackedLstm(PackKind kind, StateInputMode mode, std::vector<StatePair>& pairs,
                            const std::set<std::string>& own_outputs = {}) {
  onnx::ModelProto model = ExposedLstm(mode);
  pairs = RecordedPairs(model);
  ModelAllocators a(model);
  const PackPlan plan = PlanPack(model, pairs, Packing(kind, StateLayout::kAsNode, mode), a.names, a.dims, own_outputs);
  ApplyPack(plan, model, a.names, a.nodes);
  return model;
}

TEST(ApplyPack, ATensorTakesThePlaceOfTheStatesInputsDefaultsAndOutputs) {
  std::vector<StatePair> pairs;
  const onnx::ModelProto model = PackedLstm(PackKind::kTensor, StateInputMode::kDefaults, pairs);
  const onnx::GraphProto& g = model.graph();
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_THAT(InputNames(g), ElementsAre("X", "W", "R", "state_in"));
  EXPECT_THAT(OutputNames(g), ElementsAre("Y", "state_out"));
  EXPECT_EQ(DeclaredShape(g, "state_in"), "[state_in_batch,6]");
  EXPECT_EQ(DeclaredShape(g, "state_out"), "[batch,6]");
  // Defaults mode: the states' own defaults are gone, the empty tensor is the packed input's.
  EXPECT_THAT(InitializerNames(g), ElementsAre("state_in"));
  EXPECT_THAT(g.initializer(0).dims(), ElementsAre(0, 6));
  // Unpacked first (an If selects zeros for an empty value; one Split gives h and c), packed last.
  EXPECT_EQ(testing::Producer(g, pairs[0].input)->op_type(), "Split");
  EXPECT_EQ(testing::Producer(g, pairs[1].input), testing::Producer(g, pairs[0].input));
  EXPECT_EQ(NodeOfType(g, "If").input(0), "state_in.is_empty");
  EXPECT_EQ(g.node(g.node_size() - 1).output(0), "state_out");
  EXPECT_EQ(g.node(g.node_size() - 1).op_type(), "Reshape");
  EXPECT_EQ(Verdict(model), "");
}

TEST(ApplyPack, InRequiredModeThePackedTensorHasNoDefault) {
  std::vector<StatePair> pairs;
  const onnx::ModelProto model = PackedLstm(PackKind::kTensor, StateInputMode::kRequired, pairs);
  EXPECT_THAT(InputNames(model.graph()), ElementsAre("X", "W", "R", "state_in"));
  EXPECT_THAT(InitializerNames(model.graph()), IsEmpty());
  EXPECT_EQ(Verdict(model), "");
}

TEST(ApplyPack, TheModelsOwnOutputsStayBesideThePackedOutput) {
  std::vector<StatePair> pairs;
  const onnx::ModelProto model = PackedLstm(PackKind::kTensor, StateInputMode::kDefaults, pairs, {"c_kept"});
  EXPECT_THAT(OutputNames(model.graph()), ElementsAre("Y", "state_out"));  // c_kept names no member
  const std::string c_out = pairs[1].output;
  const onnx::ModelProto with_c = PackedLstm(PackKind::kTensor, StateInputMode::kDefaults, pairs, {c_out});
  EXPECT_THAT(OutputNames(with_c.graph()), ElementsAre("Y", c_out, "state_out"));
  EXPECT_EQ(Verdict(with_c), "");
}

TEST(ApplyPack, ASequenceIsUnpackedInAnIfAndPackedBySequenceConstruct) {
  std::vector<StatePair> pairs;
  const onnx::ModelProto model = PackedLstm(PackKind::kSequence, StateInputMode::kRequired, pairs);
  const onnx::GraphProto& g = model.graph();
  EXPECT_THAT(InputNames(g), ElementsAre("X", "W", "R", "state_in"));
  EXPECT_THAT(OutputNames(g), ElementsAre("Y", "state_out"));
  EXPECT_TRUE(g.input(3).type().has_sequence_type());
  EXPECT_TRUE(g.output(1).type().has_sequence_type());
  const onnx::NodeProto& unpack = NodeOfType(g, "If");
  EXPECT_THAT(unpack.output(), ElementsAre(pairs[0].input, pairs[1].input));
  const onnx::NodeProto* pack = testing::Producer(g, "state_out");
  ASSERT_NE(pack, nullptr);
  EXPECT_EQ(pack->op_type(), "SequenceConstruct");
  EXPECT_THAT(pack->input(), ElementsAre(pairs[0].output, pairs[1].output));
  EXPECT_EQ(Verdict(model), "");
}

}  // namespace
}  // namespace rnnstate::pack_apply_test
