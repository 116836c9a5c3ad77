// FirstFeedsOf (contract/packed_first_feeds.h) on the "packed" description alone: each packed value's first
// feed comes first (the empty [0, N] tensor, or the empty sequence), then the first feed of each pair no
// member holds; a batch asked for that a packed value fixes otherwise is refused (exit 2), an invalid
// description is (exit 3), and a model that is not packed gets the pairs' own feeds.

#include "contract/packed_first_feeds.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rnnstate/error.h"
#include "rnnstate/packed_metadata.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::packed_first_feeds_test {
namespace {

using namespace test_names;

/// kLstm carrying a "packed" description of `kind` whose one value `state_in` holds state 0 (batch
/// `batch`: a name or a number) as a member of 3 columns; the other pairs are left out of it.
onnx::ModelProto PackedModel(const std::string& kind, const MetaDim& batch = MetaDim{-1, "batch"}) {
  const bool tensor = kind == kPackedTensor;
  const PackedMember member{{0},
                            "h",
                            "h_out",
                            {MetaDim{1, ""}, batch, MetaDim{3, ""}},
                            1,
                            tensor ? 0 : -1,
                            tensor ? 3 : -1,
                            tensor ? std::vector<int64_t>{1, 3} : std::vector<int64_t>{},
                            tensor ? -1 : 0};
  PackedValue value{"state_in", "state_out", "float32", {}, -1, kInitEmpty, true, true, {member}};
  if (tensor) {
    value.shape = {batch, MetaDim{3, ""}};
    value.batch_axis = 0;
  }
  onnx::ModelProto model = ParseModel(kLstm);
  WriteStateDocument(model, Json{{"version", 1}, {"packed", PackedStatesJson(PackedStates{kind, {value}})}});
  return model;
}

TEST(FirstFeedsOf, ThePackedValuesComeFirstThenThePairsLeftOut) {
  const std::vector<FirstFeed> feeds =
      FirstFeedsOf(PackedModel(kPackedTensor), {FloatHPair("h"), FloatHPair("c")}, 2, {});
  ASSERT_EQ(feeds.size(), 2u);
  EXPECT_EQ(feeds[0].input, "state_in");
  EXPECT_THAT(feeds[0].shape, ElementsAre(0, 3));
  EXPECT_EQ(feeds[0].init, kInitEmpty);
  EXPECT_FALSE(feeds[0].sequence);
  EXPECT_EQ(feeds[1].input, "c");
  EXPECT_THAT(feeds[1].shape, ElementsAre(1, 2, 3));
  EXPECT_EQ(feeds[1].init, kInitZeros);
}

TEST(FirstFeedsOf, ASequenceIsFedEmpty) {
  const std::vector<FirstFeed> feeds = FirstFeedsOf(PackedModel(kPackedSequence), {FloatHPair("h")}, 2, {});
  ASSERT_EQ(feeds.size(), 1u);
  EXPECT_TRUE(feeds[0].sequence);
  EXPECT_TRUE(feeds[0].shape.empty());
  EXPECT_EQ(FirstFeedsText(feeds), "state_in  sequence<float32>  []  empty\n");
}

TEST(FirstFeedsOf, RefusesABatchAPackedValueFixesOtherwise) {
  const onnx::ModelProto model = PackedModel(kPackedTensor, MetaDim{4, ""});
  EXPECT_EQ(FirstFeedsOf(model, {FloatHPair("h")}, 4, {}).size(), 1u);
  EXPECT_EQ(FirstFeedsOf(model, {FloatHPair("h")}, std::nullopt, {}).size(), 1u);
  ExpectError([&] { FirstFeedsOf(model, {FloatHPair("h")}, 2, {}); }, ExitCode::kUsage,
              "--batch 2: packed input 'state_in' has a fixed batch of 4");
}

TEST(FirstFeedsOf, RefusesAnInvalidDescriptionAndFeedsAnUnpackedModelsPairs) {
  // The member names state 0: a model recording no pair cannot hold it.
  ExpectError([] { FirstFeedsOf(PackedModel(kPackedTensor), {}, 2, {}); }, ExitCode::kBadInput,
              "\"packed\" is invalid");
  const std::vector<FirstFeed> feeds = FirstFeedsOf(ParseModel(kLstm), {FloatHPair("h"), FloatHPair("c")}, 3, {});
  ASSERT_EQ(feeds.size(), 2u);
  EXPECT_EQ(feeds[0].input, "h");
  EXPECT_THAT(feeds[1].shape, ElementsAre(1, 3, 3));
}

}  // namespace
}  // namespace rnnstate::packed_first_feeds_test
