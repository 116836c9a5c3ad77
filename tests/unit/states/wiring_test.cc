// The wiring walk (wiring.h): whether one value is computed from another, across scopes.

#include "states/wiring.h"

#include <gtest/gtest.h>

#include "graph/model_index.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::wiring_test {
namespace {

using namespace test_names;

TEST(ComputedFrom, ShapeAndSizeCarryNoValues) {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[2] a) => (float[2] viaShape, float[2] viaValue) {
  s = Shape (a)
  viaShape = ConstantOfShape (s)
  viaValue = Relu (a)
})");
  ModelIndex index(model);
  EXPECT_FALSE(ComputedFrom(index, ValueRef{{}, "viaShape"}, ValueRef{{}, "a"}));
  EXPECT_TRUE(ComputedFrom(index, ValueRef{{}, "viaValue"}, ValueRef{{}, "a"}));
  EXPECT_TRUE(ComputedFrom(index, ValueRef{{}, "a"}, ValueRef{{}, "a"}));
}

TEST(ComputedFrom, RecurrentNodesMakeNewStates) {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R, float[1, batch, 3] h0) => (float[1, batch, 3] H) {
  Y, H = GRU <hidden_size = 3> (X, W, R, , , h0)
})");
  ModelIndex index(model);
  EXPECT_FALSE(ComputedFrom(index, ValueRef{{}, "H"}, ValueRef{{}, "h0"}));
  EXPECT_FALSE(ComputedFrom(index, ValueRef{{}, "H"}, ValueRef{{}, "X"}));
}

TEST(ComputedFrom, IfOutputsComeFromBothBranchesAndOuterScope) {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (bool c, float[2] a, float[2] b) => (float[2] y) {
  y = If (c) <then_branch = t () => (float[2] ta) { ta = Identity (a) },
              else_branch = e () => (float[2] eb) { eb = Neg (b) }>
})");
  ModelIndex index(model);
  EXPECT_TRUE(ComputedFrom(index, ValueRef{{}, "y"}, ValueRef{{}, "a"}));
  EXPECT_TRUE(ComputedFrom(index, ValueRef{{}, "y"}, ValueRef{{}, "b"}));
  GraphPath then_branch{GraphStep{0, "then_branch", -1}};
  EXPECT_TRUE(ComputedFrom(index, ValueRef{{}, "y"}, ValueRef{then_branch, "ta"}));
  EXPECT_FALSE(ComputedFrom(index, ValueRef{then_branch, "ta"}, ValueRef{{}, "b"}));
}

}  // namespace
}  // namespace rnnstate::wiring_test
