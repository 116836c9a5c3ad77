// What --state-layout and --pack did to a model, read from its metadata alone (applied_transforms.h): on
// models rewritten in each way, and on the plain rewrite and a model rnnstate never saw, which show
// neither.

#include "contract/applied_transforms.h"

#include <gtest/gtest.h>

#include "pipeline_stages.h"
#include "rnnstate/metadata.h"
#include "test_models.h"

namespace rnnstate::applied_transforms_test {
namespace {

onnx::ModelProto Rewritten(PackKind pack, StateLayout layout) {
  onnx::ModelProto model = testing::ParseModel(testing::kLstm);  // h and c become state pairs
  EXPECT_TRUE(RewriteModel(model, testing::Packing(pack, layout), /*strict=*/true).changed);
  return model;
}

TEST(AppliedTransforms, AModelWithoutMetadataHasNone) {
  const AppliedTransforms applied = TransformsOf(testing::ParseModel(testing::kLstm));
  EXPECT_FALSE(applied.packed);
  EXPECT_FALSE(applied.batch_first);
  EXPECT_FALSE(applied.any());
}

TEST(AppliedTransforms, ThePlainRewriteIsNeitherPackedNorBatchFirst) {
  const onnx::ModelProto model = Rewritten(PackKind::kNone, StateLayout::kAsNode);
  ASSERT_EQ(testing::RecordedPairs(model).size(), 2u);
  EXPECT_FALSE(TransformsOf(model).any());
}

TEST(AppliedTransforms, BatchFirstIsReadFromThePairsLayout) {
  const AppliedTransforms applied = TransformsOf(Rewritten(PackKind::kNone, StateLayout::kBatchFirst));
  EXPECT_TRUE(applied.batch_first);
  EXPECT_FALSE(applied.packed);
  EXPECT_TRUE(applied.any());
}

TEST(AppliedTransforms, PackedIsReadFromThePackedObject) {
  const AppliedTransforms applied = TransformsOf(Rewritten(PackKind::kTensor, StateLayout::kAsNode));
  EXPECT_TRUE(applied.packed);
  EXPECT_TRUE(applied.any());
}

}  // namespace
}  // namespace rnnstate::applied_transforms_test
