// RunsOnlyWhenEmpty (exposure/default_path.h) on Ifs whose conditions exporters write in other forms than
// the behaviour-named tests use: the state's Size compared with 0, a batch read by Gather(Shape) and
// compared, a condition negated with Not or combined with And; and what is no default path: a condition on
// a data input, a constant condition, a node that is not an If.

#include "exposure/default_path.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "test_models.h"
#include "test_names.h"

namespace rnnstate::default_path_test {
namespace {

using namespace test_names;

/// A model whose last node is an If on `condition` (computed by `reads`, which may read the state
/// [1, batch, 3] and the data x [seq, batch, 2]); both branches pass the state on.
onnx::ModelProto IfOn(const std::string& reads, const std::string& condition = "cond") {
  return ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[1, batch, 3] state, float[seq, batch, 2] x) => (float[1, batch, 3] out) {
  zero = Constant <value = int64 {0}> ()
  one = Constant <value = int64[1] {1}> ()
)" + reads + R"(
  out = If ()" + condition +
                    R"() <then_branch = t () => (float[1, batch, 3] a) { a = Identity (state) },
                    else_branch = e () => (float[1, batch, 3] b) { b = Identity (state) }>
})");
}

/// Whether `branch` of the last node runs only when the state (batch on axis 1) is empty.
bool OnlyWhenEmpty(const onnx::ModelProto& model, const std::string& branch) {
  const ModelIndex index(model);
  return RunsOnlyWhenEmpty(index, {}, model.graph().node_size() - 1, branch, {{"state", 1}});
}

TEST(RunsOnlyWhenEmpty, ReadsTheStatesSizeComparedWithZero) {
  const onnx::ModelProto model = IfOn("  n = Size (state)\n  cond = Equal (n, zero)");
  EXPECT_TRUE(OnlyWhenEmpty(model, "then_branch"));
  EXPECT_FALSE(OnlyWhenEmpty(model, "else_branch"));
}

TEST(RunsOnlyWhenEmpty, ReadsTheBatchGatheredFromTheShape) {
  const onnx::ModelProto model = IfOn(
      "  shape = Shape (state)\n  b = Gather <axis = 0> (shape, one)\n"
      "  fed = Greater (b, zero)\n  cond = Squeeze (fed)");
  EXPECT_TRUE(OnlyWhenEmpty(model, "else_branch"));
  EXPECT_FALSE(OnlyWhenEmpty(model, "then_branch"));
}

TEST(RunsOnlyWhenEmpty, FollowsNotAndAnd) {
  const std::string size = "  n = Size (state)\n  empty = Equal (n, zero)\n";
  EXPECT_TRUE(OnlyWhenEmpty(IfOn(size + "  cond = Not (empty)"), "else_branch"));
  EXPECT_FALSE(OnlyWhenEmpty(IfOn(size + "  cond = Not (empty)"), "then_branch"));
  const std::string both = size + "  small = Less (n, one)\n  cond = And (empty, small)";
  EXPECT_TRUE(OnlyWhenEmpty(IfOn(both), "then_branch"));
}

TEST(RunsOnlyWhenEmpty, IsNoDefaultPathWhereTheConditionDoesNotFollowTheState) {
  // The data's length: unknown from the state's shape.
  const onnx::ModelProto data = IfOn("  n = Size (x)\n  cond = Equal (n, zero)");
  EXPECT_FALSE(OnlyWhenEmpty(data, "then_branch"));
  EXPECT_FALSE(OnlyWhenEmpty(data, "else_branch"));
  // A constant: the same branch fed and empty.
  const onnx::ModelProto constant = IfOn("  cond = Equal (zero, zero)");
  EXPECT_FALSE(OnlyWhenEmpty(constant, "then_branch"));
  EXPECT_FALSE(OnlyWhenEmpty(constant, "else_branch"));
  // Not an If.
  const onnx::ModelProto size = IfOn("  n = Size (state)\n  cond = Equal (n, zero)");
  const ModelIndex index(size);
  EXPECT_FALSE(RunsOnlyWhenEmpty(index, {}, size.graph().node_size() - 2, "then_branch", {{"state", 1}}));
}

}  // namespace
}  // namespace rnnstate::default_path_test
