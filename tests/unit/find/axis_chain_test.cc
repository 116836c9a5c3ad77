// The value an axis has exactly the length of (axis_chain: AxisChainRoots): up recurrent operators'
// batch, one-operand elementwise operators, Transpose, Squeeze and Unsqueeze, within one graph; never
// through an operator that may cut, join, pad, broadcast or regroup the axis. Models as ONNX text.

#include "find/axis_chain.h"

#include <gtest/gtest.h>

#include <string>

#include "graph/model_index.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::axis_chain_test {
namespace {

using namespace test_names;

const char* kChains = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] x, float[1, 16, 2] W, float[1, 16, 4] R, float[seq, batch, 4] other, bool cond,
    float[1, 16, 4] W4)
    => (float[seq, 1, batch, 4] y2, float[batch, seq, 4] moved) {
  axes = Constant <value = int64[1] {1}> ()
  y1 = LSTM <hidden_size = 4> (x, W, R)
  s1 = Squeeze (y1, axes)
  r1 = Relu (s1)
  y2, h2 = LSTM <hidden_size = 4> (r1, W4, R)
  moved = Transpose <perm = [1, 0, 2]> (r1)
  back = Unsqueeze (moved, axes)
  first = Constant <value = int64[1] {1}> ()
  end = Constant <value = int64[1] {9223372036854775807}> ()
  cut = Slice (s1, first, end, axes)
  sum = Add (s1, other)
  joined = Concat <axis = 1> (s1, s1)
  shape = Constant <value = int64[2] {-1, 4}> ()
  flat = Reshape (s1, shape)
  w = Constant <value = float[4, 4] {0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0}> ()
  proj = MatMul (s1, w)
  branch = If (cond) <then_branch = t () => (float[seq, batch, 4] inner) {
    inner = Relu (s1)
  }, else_branch = e () => (float[seq, batch, 4] inner2) {
    mid = Neg (s1)
    inner2 = Relu (mid)
  }>
})";

struct Fixture {
  onnx::ModelProto model = ParseModel(kChains);
  ModelIndex index{model};
  AxisChainRoots roots{index};
  std::string Root(const std::string& value, int64_t axis, const GraphPath& path = {}) {
    const AxisRoot root = roots.Find(path, value, axis);
    return std::to_string(root.graph.size()) + ":" + root.value + ":" + std::to_string(root.axis);
  }
};

TEST(AxisChain, FollowsTheBatchUpRecurrentOperatorsAndShapeKeepingOperators) {
  Fixture f;
  EXPECT_EQ(f.Root("y2", 2), "0:x:1");  // Y's batch is X's; Relu, Squeeze, then the first LSTM's Y
  EXPECT_EQ(f.Root("h2", 1), "0:x:1");  // Y_h's batch too
  EXPECT_EQ(f.Root("moved", 0), "0:x:1");  // Transpose moves the batch to axis 0
  EXPECT_EQ(f.Root("back", 0), "0:x:1");   // Unsqueeze at axis 1 keeps axis 0
  EXPECT_EQ(f.Root("x", 1), "0:x:1");      // a graph input is its own root
}

TEST(AxisChain, StopsAtAnAxisThatMayNotKeepItsLength) {
  Fixture f;
  EXPECT_EQ(f.Root("y2", 3), "0:y2:3");      // the hidden axis comes from the weights, not X
  EXPECT_EQ(f.Root("cut", 1), "0:cut:1");    // Slice may cut it
  EXPECT_EQ(f.Root("sum", 1), "0:sum:1");    // a broadcast may take it from either operand
  EXPECT_EQ(f.Root("joined", 1), "0:joined:1");
  EXPECT_EQ(f.Root("flat", 0), "0:flat:0");  // Reshape regroups
  EXPECT_EQ(f.Root("proj", 1), "0:proj:1");  // MatMul broadcasts its leading axes
}

TEST(AxisChain, StaysInTheGraphThatDefinesTheValue) {
  Fixture f;
  // Inside a branch, a chain reaching an outer-scope value stops there; the root is the branch's own value.
  const GraphPath then_branch{GraphStep{static_cast<int>(f.model.graph().node_size()) - 1, "then_branch"}};
  EXPECT_EQ(f.Root("inner", 1, then_branch), "1:inner:1");
  // An outer-scope name seen from the branch is rooted in its own graph.
  EXPECT_EQ(f.Root("s1", 1, then_branch), "0:x:1");
}

TEST(AxisChain, FollowsAChainInsideABranch) {
  Fixture f;
  const GraphPath else_branch{GraphStep{static_cast<int>(f.model.graph().node_size()) - 1, "else_branch"}};
  // Relu, then Neg, inside the branch; Neg's operand is the main graph's: the root is the branch's `mid`,
  // whichever of the two is asked first and however often.
  EXPECT_EQ(f.Root("inner2", 1, else_branch), "1:mid:1");
  EXPECT_EQ(f.Root("mid", 1, else_branch), "1:mid:1");
  EXPECT_EQ(f.Root("inner2", 1, else_branch), "1:mid:1");
  // The main graph's chain is remembered apart from the branch's.
  EXPECT_EQ(f.Root("s1", 1), "0:x:1");
  EXPECT_EQ(f.Root("s1", 1, else_branch), "0:x:1");
}

TEST(AxisChain, ARootIsTheSameWhicheverValueOfItsChainIsAskedFirst) {
  Fixture deep_first;
  Fixture shallow_first;
  EXPECT_EQ(deep_first.Root("y2", 2), "0:x:1");
  EXPECT_EQ(deep_first.Root("r1", 1), "0:x:1");
  EXPECT_EQ(shallow_first.Root("r1", 1), "0:x:1");
  EXPECT_EQ(shallow_first.Root("y2", 2), "0:x:1");
}

}  // namespace
}  // namespace rnnstate::axis_chain_test
