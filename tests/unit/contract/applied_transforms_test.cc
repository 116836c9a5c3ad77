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

/// One LSTM without initial states, dynamic batch: h and c become state pairs.
constexpr const char* kLstm = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[1, 12, 2] W, float[1, 12, 3] R) => (float[seq, 1, batch, 3] Y) {
  Y = LSTM <hidden_size = 3> (X, W, R)
})";

onnx::ModelProto Rewritten(PackKind pack, StateLayout layout) {
  onnx::ModelProto model = testing::ParseModel(kLstm);
  PlanOptions options;
  options.pack = pack;
  options.layout = layout;
  EXPECT_TRUE(RewriteModel(model, options, /*strict=*/true).changed);
  return model;
}

TEST(AppliedTransforms, AModelWithoutMetadataHasNone) {
  const AppliedTransforms applied = TransformsOf(testing::ParseModel(kLstm));
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
