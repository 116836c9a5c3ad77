// The state tensors a runtime carries (contract/state_tensors.h), read from a rewritten model's metadata
// alone: one per state input, or one per packed value with what its members need; states that do not
// stream named and warned about; a model without pairs refused (exit 4), malformed metadata (exit 3).

#include "contract/state_tensors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pipeline_stages.h"
#include "rnnstate/error.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::state_tensors_test {
namespace {

using namespace test_names;

/// `text` rewritten with `options`.
onnx::ModelProto Rewritten(const char* text, const PlanOptions& options) {
  onnx::ModelProto model = ParseModel(text);
  RewriteModel(model, options, /*strict=*/false);
  return model;
}

/// The value of the `rnnstate` metadata entry of `model`, edited by `edit` (text replaced).
void EditMetadata(onnx::ModelProto& model, const std::string& from, const std::string& to) {
  for (auto& prop : *model.mutable_metadata_props()) {
    if (prop.key() != "rnnstate") continue;
    std::string value = prop.value();
    const size_t at = value.find(from);
    ASSERT_NE(at, std::string::npos) << value;
    prop.set_value(value.replace(at, from.size(), to));
  }
}

TEST(StateTensorsOf, OneTensorPerStateInputAsThePairsRecordThem) {
  const onnx::ModelProto model = Rewritten(kLstm, InMode(StateInputMode::kRequired));
  const std::vector<StatePair> pairs = RecordedPairs(model);
  const std::vector<StateTensor> tensors = StateTensorsOf(model);
  ASSERT_EQ(pairs.size(), 2u);
  ASSERT_EQ(tensors.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(tensors[i].input, pairs[i].input);
    EXPECT_EQ(tensors[i].output, pairs[i].output);
    EXPECT_EQ(tensors[i].dtype, "float32");
    EXPECT_EQ(MetaShapeText(tensors[i].shape), "[1,batch,3]");
    EXPECT_EQ(tensors[i].batch_axis, 1);
    EXPECT_TRUE(tensors[i].streamable);
    EXPECT_FALSE(tensors[i].optional);
    EXPECT_FALSE(tensors[i].sequence);
    EXPECT_FALSE(tensors[i].stacked);
    EXPECT_THAT(tensors[i].empty_init, IsEmpty());
  }
  EXPECT_THAT(NotStreamableWarnings(tensors, "Triton"), IsEmpty());
}

TEST(StateTensorsOf, AnInputWithADefaultIsOptional) {
  const std::vector<StateTensor> tensors = StateTensorsOf(Rewritten(kGru, InMode(StateInputMode::kDefaults)));
  ASSERT_EQ(tensors.size(), 1u);
  EXPECT_TRUE(tensors[0].optional);
}

TEST(StateTensorsOf, NamesAndWarnsAboutStatesThatDoNotStream) {
  const std::vector<StateTensor> tensors = StateTensorsOf(Rewritten(kReverseGru, InMode(StateInputMode::kRequired)));
  ASSERT_EQ(tensors.size(), 1u);
  EXPECT_FALSE(tensors[0].streamable);
  EXPECT_THAT(tensors[0].not_streamable, ElementsAre(tensors[0].input));
  EXPECT_THAT(NotStreamableWarnings(tensors, "Triton"),
              ElementsAre("state '" + tensors[0].input +
                          "' does not stream (bidirectional, reverse or sequence_lens): carried by Triton from one "
                          "request to the next it gives other results than one full run; send each sequence in one "
                          "request, or rewrite with --streamable-only"));
}

TEST(StateTensorsOf, APackedValueIsOneTensorForAllItsMembers) {
  const onnx::ModelProto model =
      Rewritten(kLstm, Packing(PackKind::kTensor, StateLayout::kAsNode, StateInputMode::kRequired));
  const std::vector<StateTensor> tensors = StateTensorsOf(model);
  ASSERT_EQ(tensors.size(), 1u);
  EXPECT_THAT(InputNames(model.graph()), Contains(tensors[0].input));
  EXPECT_EQ(tensors[0].dtype, "float32");
  EXPECT_EQ(tensors[0].batch_axis, 0);
  EXPECT_FALSE(tensors[0].sequence);
  const std::vector<StateTensor> sequence =
      StateTensorsOf(Rewritten(kLstm, Packing(PackKind::kSequence, StateLayout::kAsNode, StateInputMode::kRequired)));
  ASSERT_EQ(sequence.size(), 1u);
  EXPECT_TRUE(sequence[0].sequence);
}

TEST(NotStreamableWarnings, NamesThePackedMembersThatDoNotStream) {
  StateTensor packed;
  packed.input = "states";
  packed.not_streamable = {"a.h_in", "b.h_in"};
  StateTensor streams;
  streams.input = "other";
  EXPECT_THAT(
      NotStreamableWarnings({packed, streams}, "OpenVINO"),
      ElementsAre(HasSubstr("state 'states' holds state 'a.h_in', 'b.h_in', which do not stream (bidirectional, "
                            "reverse or sequence_lens): carried by OpenVINO")));
}

TEST(StateTensorsOf, RefusesAModelWithoutPairsOrWithPairsOfOlderMetadata) {
  ExpectError([] { StateTensorsOf(ParseModel(kGru)); }, ExitCode::kUnsupported, "no state pairs recorded");
  onnx::ModelProto old = Rewritten(kGru, InMode(StateInputMode::kRequired));
  EditMetadata(old, "\"init\":\"zeros\",", "");
  ExpectError([&] { StateTensorsOf(old); }, ExitCode::kBadInput, "lacks dtype/shape/init");
  onnx::ModelProto broken = Rewritten(kGru, InMode(StateInputMode::kRequired));
  EditMetadata(broken, "{", "[");
  EXPECT_EQ(ErrorMessage([&] { StateTensorsOf(broken); }, ExitCode::kBadInput).empty(), false);
}

}  // namespace
}  // namespace rnnstate::state_tensors_test
