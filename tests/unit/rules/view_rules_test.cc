// The spec rules of the view operators (rules/view_rules.h), judged by FirstViewRuleViolation on small
// models: axes of Unsqueeze and Squeeze (in range of the output's or input's rank, a squeezed axis of size
// 1), Transpose's perm, Reshape's constant shape, Slice's step, Concat's axis, Gather's constant indices;
// valid views and computed operands (which the walks check themselves) break no rule.

#include "rules/view_rules.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "test_models.h"
#include "test_names.h"

namespace rnnstate::view_rules_test {
namespace {

using namespace test_names;

/// The first view rule broken by a model of input x float[2, 3] (opset 14) with the node lines `body`
/// whose output is y.
std::string ViewRule(const std::string& body, const std::string& y_type = "float[N]") {
  const onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[2, 3] x) => ()" + y_type +
                                            R"( y) {
)" + body + R"(
})");
  return FirstViewRuleViolation(ModelIndex(model));
}

TEST(FirstViewRuleViolation, AcceptsValidViewsAndComputedOperands) {
  EXPECT_EQ(ViewRule("  y = Transpose <perm = [1, 0]> (x)"), "");
  EXPECT_EQ(ViewRule("  axes = Constant <value = int64[1] {0}> ()\n  y = Unsqueeze (x, axes)"), "");
  EXPECT_EQ(ViewRule("  shape = Constant <value = int64[2] {3, -1}> ()\n  y = Reshape (x, shape)"), "");
  EXPECT_EQ(ViewRule("  i = Constant <value = int64[1] {2}> ()\n  y = Gather <axis = 1> (x, i)"), "");
  // A shape computed from the data is not judged here.
  EXPECT_EQ(ViewRule("  s = Shape (x)\n  y = Reshape (x, s)"), "");
}

TEST(FirstViewRuleViolation, JudgesUnitAxesAgainstTheRightRankAndSize) {
  EXPECT_EQ(ViewRule("  axes = Constant <value = int64[1] {3}> ()\n  y = Unsqueeze (x, axes)"),
            "main: Unsqueeze 'Unsqueeze_1': axis 3 is out of range for an output of rank 3");
  EXPECT_EQ(ViewRule("  axes = Constant <value = int64[2] {0, -4}> ()\n  y = Unsqueeze (x, axes)"),
            "main: Unsqueeze 'Unsqueeze_1': axis -4 is listed twice");
  EXPECT_EQ(ViewRule("  axes = Constant <value = int64[1] {0}> ()\n  y = Squeeze (x, axes)"),
            "main: Squeeze 'Squeeze_1': axis 0 has size 2, not 1");
}

TEST(FirstViewRuleViolation, RefusesAPermThatIsNotAPermutation) {
  EXPECT_THAT(ViewRule("  y = Transpose <perm = [0, 0]> (x)"),
              AllOf(HasSubstr("main: Transpose 'Transpose_0': perm "),
                    HasSubstr("is not a permutation of the input's 2 axes")));
}

TEST(FirstViewRuleViolation, RefusesAConstantShapeWithTwoInferredDims) {
  EXPECT_THAT(ViewRule("  shape = Constant <value = int64[2] {-1, -1}> ()\n  y = Reshape (x, shape)"),
              HasSubstr("has more than one -1"));
  EXPECT_THAT(ViewRule("  shape = Constant <value = int64[2] {-2, 3}> ()\n  y = Reshape (x, shape)"),
              HasSubstr("has a dim -2"));
}

TEST(FirstViewRuleViolation, JudgesSliceStepsAndNamedAxes) {
  EXPECT_EQ(ViewRule("  s = Constant <value = int64[1] {0}> ()\n  e = Constant <value = int64[1] {1}> ()\n"
                     "  a = Constant <value = int64[1] {1}> ()\n  z = Constant <value = int64[1] {0}> ()\n"
                     "  y = Slice (x, s, e, a, z)"),
            "main: Slice 'Slice_4': a step is 0");
  EXPECT_EQ(ViewRule("  y = Concat <axis = 2> (x, x)"),
            "main: Concat 'Concat_0': axis 2 is out of range for an input of rank 2");
  EXPECT_EQ(ViewRule("  i = Constant <value = int64[1] {3}> ()\n  y = Gather <axis = 1> (x, i)"),
            "main: Gather 'Gather_1': index 3 is out of range for axis 1 of size 3");
}

}  // namespace
}  // namespace rnnstate::view_rules_test
