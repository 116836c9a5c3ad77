// `check` on packed models: which columns (tensor) or position (sequence) of the packed value hold which
// member is traced through the unpacking and packing nodes, so that a description that names the wrong
// state for a place fails (a runner reading the columns would read another state).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "find/analysis.h"
#include "graph/model_index.h"
#include "pipeline_stages.h"
#include "rnnstate/metadata.h"
#include "test_models.h"
#include "test_names.h"
#include "views/check.h"

namespace rnnstate::packed_state_test {
namespace {

using namespace test_names;

onnx::ModelProto Packed(PackKind pack, StateInputMode mode) {
  onnx::ModelProto model = ParseModel(LstmThenGru(5));
  RewriteModel(model, Packing(pack, StateLayout::kAsNode, mode), false);
  return model;
}

std::vector<std::string> Messages(const onnx::ModelProto& model) {
  ModelIndex index(model);
  std::vector<std::string> messages;
  for (const CheckProblem& problem : CheckModel(index, Analyze(index))) {
    EXPECT_EQ(problem.kind, CheckProblem::Kind::kPackedMismatch) << problem.message;
    messages.push_back(problem.message);
  }
  return messages;
}

/// Swaps what members `a` and `b` of the first packed value say they are (states, input, output, shape),
/// keeping their places: the audit's tampering.
void SwapMembers(onnx::ModelProto& model, size_t a, size_t b) {
  Json document = *ReadStateDocument(model);
  Json& members = document["packed"]["values"][0]["members"];
  for (const char* key : {"states", "input", "output", "shape", "batch_axis", "row_shape"}) {
    std::swap(members[a][key], members[b][key]);
  }
  WriteStateDocument(model, document);
}

TEST(PackedCheck, EveryRewriteIsTracedToTheColumnsItClaims) {
  for (PackKind pack : {PackKind::kTensor, PackKind::kSequence}) {
    for (StateInputMode mode : {StateInputMode::kDefaults, StateInputMode::kRequired}) {
      EXPECT_THAT(Messages(Packed(pack, mode)), ElementsAre());
    }
  }
}

TEST(PackedCheck, TensorMembersAtEachOthersColumnsFail) {
  onnx::ModelProto model = Packed(PackKind::kTensor, StateInputMode::kDefaults);
  SwapMembers(model, 0, 1);  // h [0:5) and c [5:10): both [1,B,5], so only the trace can tell
  const std::vector<std::string> messages = Messages(model);
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_THAT(messages[0], HasSubstr("member 'LSTM_0.c_in' is described at columns [0:5) of 'state_in', but the "
                                     "graph unpacks it from columns [5:10)"));
  // The analysis no longer takes the record for the truth either.
  ModelIndex index(model);
  const Analysis analysis = Analyze(index);
  EXPECT_FALSE(analysis.states[0].exposed);
}

TEST(PackedCheck, SequenceMembersAtEachOthersPositionsFail) {
  onnx::ModelProto model = Packed(PackKind::kSequence, StateInputMode::kRequired);
  Json document = *ReadStateDocument(model);
  Json& members = document["packed"]["values"][0]["members"];
  std::swap(members[0]["position"], members[2]["position"]);
  WriteStateDocument(model, document);
  const std::vector<std::string> messages = Messages(model);
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_THAT(messages[0], HasSubstr("member 'LSTM_0.h_in' is described at position 2 of 'state_in', but the graph "
                                     "takes it from position 0"));
}

TEST(PackedCheck, HugeSizesInTheMetadataFailWithoutOverflow) {
  // Hostile metadata: lengths and row shapes whose sums and products overflow 64 bits (signed overflow
  // before, which the sanitizer run would report); `check` names the mismatch instead.
  onnx::ModelProto model = Packed(PackKind::kTensor, StateInputMode::kDefaults);
  Json document = *ReadStateDocument(model);
  Json& members = document["packed"]["values"][0]["members"];
  members[0]["length"] = INT64_MAX;
  members[0]["row_shape"] = Json::array({INT64_MAX, 2});
  members[1]["offset"] = INT64_MAX;
  WriteStateDocument(model, document);
  ModelIndex index(model);
  std::vector<std::string> messages;
  for (const CheckProblem& problem : CheckModel(index, Analyze(index))) messages.push_back(problem.message);
  EXPECT_THAT(messages, ::testing::Contains(HasSubstr("has a row_shape that does not hold 'length' elements")));
}

}  // namespace
}  // namespace rnnstate::packed_state_test
