// Integer constants folded from chains of nodes (ops/int_fold.h), as PyTorch 1.13 writes F.pad's amounts,
// and conditions decided by shapes (values/shape_eval.h, KnownCondition). Models as ONNX text.

#include "ops/int_fold.h"

#include <gtest/gtest.h>

#include "graph/model_index.h"
#include "test_models.h"
#include "test_names.h"
#include "values/shape_eval.h"

namespace rnnstate::int_fold_test {
namespace {

using namespace test_names;

TEST(IntFold, PyTorchsPadAmountsFold) {
  // F.pad(x, (4, 0)) on a rank-3 input, as torch 1.13 exports it: the pairs reversed with a Slice of step -1.
  const onnx::ModelProto model = ParseModel(
      "<ir_version: 8, opset_import: [\"\" : 14]>\n"
      "g (float[1, 2, 9] x) => (int64[6] pads) {\n" +
      TorchPadAmountsText({4, 0}, 3) + "}");
  const ModelIndex index(model);
  const std::optional<IntTensor> pads = FoldInts(index, {}, "pads");
  ASSERT_TRUE(pads);
  EXPECT_EQ(pads->values, (std::vector<int64_t>{0, 0, 4, 0, 0, 0}));
  EXPECT_EQ(pads->dims, (std::vector<int64_t>{6}));
  EXPECT_FALSE(FoldInts(index, {}, "x"));  // data, not a constant
}

TEST(KnownCondition, AFixedBatchDecidesPyTorchsSqueezeTest) {
  const onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[1, seq, 3] x) => (bool squeezable, bool other, bool unknown) {
    s = Shape (x)
    i0 = Constant <value = int64 {0}> ()
    i1 = Constant <value = int64 {1}> ()
    d0 = Gather <axis = 0> (s, i0)
    d1 = Gather <axis = 0> (s, i1)
    one = Constant <value = int64 {1}> ()
    squeezable = Equal (d0, one)
    other = Not (squeezable)
    unknown = Equal (d1, one)
})");
  const ModelIndex index(model);
  EXPECT_EQ(KnownCondition(index, {}, "squeezable"), true);
  EXPECT_EQ(KnownCondition(index, {}, "other"), false);
  EXPECT_FALSE(KnownCondition(index, {}, "unknown"));  // the sequence's length is not known
}

}  // namespace
}  // namespace rnnstate::int_fold_test
