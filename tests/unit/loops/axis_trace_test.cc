// Where the length of an axis comes from (axis_trace: SourceAxis, TraceAxis, TraceShapeElement,
// VectorLength): through the operators that keep an axis and through the shape computations exporters
// write for a loop's initial state (ConstantOfShape / Expand of Concat, Gather, Slice of Shape(x)); and
// not through an axis an operator cuts, joins or contracts, nor to a constant. Models as ONNX text.

#include "loops/axis_trace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "graph/model_index.h"
#include "loop_text.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::axis_trace_test {
namespace {

using namespace test_names;

const std::string kShapes = R"(<ir_version: 8, opset_import: ["" : 15]>
g (float[seq, batch, 3] x, float[seq, batch, 3, 5] x2, float[batch, 5] v, float[batch, 1] xa) => (float[batch, 4] zeros) {
)" + BatchZerosText("x", 1, 4) +
                            R"(
  s2 = Shape (x2)
  start = Constant <value = int64[1] {1}> ()
  end = Constant <value = int64[1] {3}> ()
  middle = Slice (s2, start, end)
  s0 = ConstantOfShape (middle)
  last = Constant <value = int64[1] {-1}> ()
  picked = Gather <axis = 0> (s2, last)
  tail = Shape <start = -2> (x2)
  tail_zeros = ConstantOfShape (tail)
  cast = Cast <to = 7> (dims)
  row = Constant <value = float[1, 4] {0, 0, 0, 0}> ()
  bshape = Concat <axis = 0> (b, four)
  expanded = Expand (row, bshape)
  seven = Constant <value = int64[1] {7}> ()
  tgt = Concat <axis = 0> (b, seven)
  ve = Expand (xa, tgt)
  vb = Unsqueeze (v, one)
  vexpanded = Expand (vb, s2)
  t = Transpose <perm = [1, 0, 2]> (x)
  n = Neg (t)
  bias = Constant <value = float[1, 1, 3] {1, 2, 3}> ()
  sum = Add (n, bias)
  wide = Constant <value = float[3, 9] {0,0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0,0}> ()
  proj = MatMul (x, wide)
  joined = Concat <axis = 0> (x, x)
  rows = Gather <axis = 0> (x, one)
  unknown = NonZero (v)
})";

struct Fixture {
  onnx::ModelProto model = ParseModel(kShapes);
  ModelIndex index{model};
  std::optional<InputAxis> Trace(const std::string& value, int64_t axis) const {
    return TraceAxis(index, {}, value, axis);
  }
};

std::string Text(const std::optional<InputAxis>& axis) {
  return axis ? axis->input + ":" + std::to_string(axis->axis) : "none";
}

TEST(AxisTrace, ConstantOfShapeTakesEachAxisFromItsShapeVector) {
  Fixture f;
  EXPECT_EQ(Text(f.Trace("zeros", 0)), "x:1");
  EXPECT_EQ(Text(f.Trace("zeros", 1)), "none");  // the constant 4
  EXPECT_EQ(Text(f.Trace("s0", 0)), "x2:1");
  EXPECT_EQ(Text(f.Trace("s0", 1)), "x2:2");
  EXPECT_EQ(Text(f.Trace("tail_zeros", 0)), "x2:2");  // Shape's negative start counts from the rank
  EXPECT_EQ(Text(f.Trace("tail_zeros", 1)), "x2:3");
  EXPECT_EQ(Text(f.Trace("zeros", -1)), "none");  // no negative axes here
}

TEST(AxisTrace, ExpandTakesTheShapeElementOrTheDataAxis) {
  Fixture f;
  EXPECT_EQ(Text(f.Trace("expanded", 0)), "x:1");
  EXPECT_EQ(Text(f.Trace("expanded", 1)), "none");  // four, and row has 4 there (a constant)
  // v [batch, 5] unsqueezed to [batch, 1, 5], expanded to x2's shape [seq, batch, 3, 5]: right-aligned,
  // axis 1 is the shape's element 1 (x2's batch) before it is v's.
  EXPECT_EQ(Text(f.Trace("vexpanded", 1)), "x2:1");
  EXPECT_EQ(Text(f.Trace("vexpanded", 0)), "x2:0");
  // xa [batch, 1] expanded to [x's batch, 7]: axis 1 is the constant 7, not xa's unit axis.
  EXPECT_EQ(Text(f.Trace("ve", 0)), "x:1");
  EXPECT_EQ(Text(f.Trace("ve", 1)), "none");
}

TEST(AxisTrace, ThroughOperatorsThatKeepAnAxis) {
  Fixture f;
  EXPECT_EQ(Text(f.Trace("x", 2)), "x:2");
  EXPECT_EQ(Text(f.Trace("t", 0)), "x:1");  // Transpose
  EXPECT_EQ(Text(f.Trace("n", 1)), "x:0");  // elementwise
  // Broadcasting: the axis comes from the operand of the output's rank whose size there is not 1.
  EXPECT_EQ(Text(f.Trace("sum", 0)), "x:1");
  EXPECT_EQ(Text(f.Trace("proj", 1)), "x:1");     // MatMul keeps the rows
  EXPECT_EQ(Text(f.Trace("proj", 2)), "none");    // ... not the contracted axis
  EXPECT_EQ(Text(f.Trace("joined", 1)), "x:1");   // Concat keeps the other axes
  EXPECT_EQ(Text(f.Trace("joined", 0)), "none");  // ... not the one it joins
  EXPECT_EQ(Text(f.Trace("rows", 2)), "x:2");     // Gather with [1] indices keeps the axes after
  EXPECT_EQ(Text(f.Trace("rows", 0)), "none");    // ... not the one it picks from
  EXPECT_EQ(Text(f.Trace("unknown", 0)), "none");
  EXPECT_EQ(Text(f.Trace("wide", 0)), "none");
}

TEST(AxisTrace, SourceAxisOfOneNode) {
  Fixture f;
  const onnx::NodeProto& transpose = NodeOfType(f.model.graph(), "Transpose");
  EXPECT_EQ(SourceAxis(f.index, {}, transpose, 0, 0), std::make_pair(0, int64_t{1}));
  EXPECT_EQ(SourceAxis(f.index, {}, transpose, 0, 2), std::make_pair(0, int64_t{2}));
  const onnx::NodeProto& concat = NodeOfType(f.model.graph(), "Concat", 3);  // joined
  ASSERT_EQ(concat.output(0), "joined");
  EXPECT_FALSE(SourceAxis(f.index, {}, concat, 0, 0).has_value());
  EXPECT_EQ(SourceAxis(f.index, {}, concat, 0, 2), std::make_pair(0, int64_t{2}));
  const onnx::NodeProto& matmul = NodeOfType(f.model.graph(), "MatMul");
  EXPECT_EQ(SourceAxis(f.index, {}, matmul, 0, 0), std::make_pair(0, int64_t{0}));
  EXPECT_FALSE(SourceAxis(f.index, {}, matmul, 0, 2).has_value());
  EXPECT_FALSE(SourceAxis(f.index, {}, NodeOfType(f.model.graph(), "NonZero"), 0, 0).has_value());
}

TEST(AxisTrace, SourceAxisOfARecurrentOperatorIsTheBatchOfX) {
  const onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 3] x, float[1, 16, 3] W, float[1, 16, 4] R) => (float[seq, 1, batch, 4] y, float[1, batch, 4] h) {
  y, h, c = LSTM <hidden_size = 4> (x, W, R)
})");
  ModelIndex index(model);
  const onnx::NodeProto& lstm = model.graph().node(0);
  EXPECT_EQ(SourceAxis(index, {}, lstm, 0, 2), std::make_pair(0, int64_t{1}));  // Y [seq, D, batch, H]
  EXPECT_EQ(SourceAxis(index, {}, lstm, 1, 1), std::make_pair(0, int64_t{1}));  // Y_h [D, batch, H]
  EXPECT_EQ(SourceAxis(index, {}, lstm, 2, 1), std::make_pair(0, int64_t{1}));  // Y_c
  EXPECT_FALSE(SourceAxis(index, {}, lstm, 1, 2).has_value());                  // H: the hidden size
  EXPECT_FALSE(SourceAxis(index, {}, lstm, 0, 0).has_value());
  EXPECT_EQ(Text(TraceAxis(index, {}, "h", 1)), "x:1");
}

TEST(AxisTrace, ShapeElementsAndVectorLengths) {
  Fixture f;
  EXPECT_EQ(Text(TraceShapeElement(f.index, {}, "dims", 0)), "x:1");
  EXPECT_EQ(Text(TraceShapeElement(f.index, {}, "cast", 0)), "x:1");  // through a Cast
  EXPECT_EQ(Text(TraceShapeElement(f.index, {}, "dims", 1)), "none");
  EXPECT_EQ(Text(TraceShapeElement(f.index, {}, "dims", 2)), "none");    // past its end
  EXPECT_EQ(Text(TraceShapeElement(f.index, {}, "picked", 0)), "x2:3");  // Gather(Shape, -1)
  EXPECT_EQ(Text(TraceShapeElement(f.index, {}, "shape", -1)), "none");
  EXPECT_EQ(VectorLength(f.index, {}, "shape"), 3);
  EXPECT_EQ(VectorLength(f.index, {}, "s2"), 4);
  EXPECT_EQ(VectorLength(f.index, {}, "middle"), 2);
  EXPECT_EQ(VectorLength(f.index, {}, "tail"), 2);
  EXPECT_EQ(VectorLength(f.index, {}, "dims"), 2);
  EXPECT_EQ(VectorLength(f.index, {}, "four"), 1);
  EXPECT_EQ(VectorLength(f.index, {}, "unknown"), std::nullopt);
}

}  // namespace

namespace {

// An If's output is followed into its branches: PyTorch's rank test around an RNN's X (then: Unsqueeze
// for an unbatched input, a branch a call that succeeds never takes; else: Identity) keeps x's batch
// once BranchFacts rule the then-branch out. Two branches that disagree, or a branch that cannot be
// followed, stop the trace.
const char* kRankTest = R"(<ir_version: 8, opset_import: ["" : 15]>
g (float[seq, batch, 3] x, bool flag, float[1, 16, 3] W, float[1, 16, 4] R) => (float[1, batch, 4] hN) {
  rank = Constant <value = int64 {3}> ()
  ax1 = Constant <value = int64[1] {1}> ()
  xs = Shape (x)
  xr = Size (xs)
  is3 = Equal (xr, rank)
  unbatched = Not (is3)
  X = If (unbatched) <then_branch = t () => (float[seq, 1, batch, 3] xu) {
    xu = Unsqueeze (x, ax1)
  }, else_branch = e () => (float[seq, batch, 3] xi) {
    xi = Identity (x)
  }>
  Y, hN = LSTM <hidden_size = 4> (X, W, R)
  swapped = If (flag) <then_branch = t2 () => (float[batch, seq, 3] xt) {
    xt = Transpose <perm = [1, 0, 2]> (x)
  }, else_branch = e2 () => (float[seq, batch, 3] xe) {
    xe = Identity (x)
  }>
  same = If (flag) <then_branch = t3 () => (float[seq, batch, 3] xa) {
    xa = Neg (x)
  }, else_branch = e3 () => (float[seq, batch, 3] xb) {
    xb = Identity (x)
  }>
})";

TEST(AxisTrace, IfOutputsAreFollowedIntoTheBranchesThatCanRun) {
  const onnx::ModelProto model = ParseModel(kRankTest);
  const ModelIndex index(model);
  const BranchFacts facts = BranchFacts::Find(index);
  EXPECT_EQ(Text(TraceAxis(index, {}, "X", 1, &facts)), "x:1");
  EXPECT_EQ(Text(TraceAxis(index, {}, "X", 1)), "none") << "without the facts, the then-branch's axis 1 is new";
  EXPECT_EQ(Text(TraceAxis(index, {}, "same", 1, &facts)), "x:1") << "both branches agree";
  EXPECT_EQ(Text(TraceAxis(index, {}, "swapped", 1, &facts)), "none") << "the branches disagree";
}

/// A chain of `length` Neg nodes n1..nN after x [seq, batch, 3] (n0 is x), every `add_every`-th an Add of
/// a [1, 1, 3] constant instead (a step that may take the axis from either operand).
std::string NegChain(int length, int add_every) {
  std::string text = R"(<ir_version: 8, opset_import: ["" : 15]>
g (float[seq, batch, 3] n0) => (float[seq, batch, 3] n)" +
                     std::to_string(length) + R"() {
  bias = Constant <value = float[1, 1, 3] {1, 2, 3}> ()
)";
  for (int i = 1; i <= length; ++i) {
    const std::string previous = "n" + std::to_string(i - 1);
    text += "  n" + std::to_string(i) + " = " +
            (i % add_every == 0 ? "Add (" + previous + ", bias)" : "Neg (" + previous + ")") + "\n";
  }
  return text + "}";
}

TEST(AxisTraceMemo, GivesWhatATraceWithoutItGivesInAnyOrderAcrossTheDepthLimit) {
  for (const int add_every : {1000, 7}) {
    const onnx::ModelProto model = ParseModel(NegChain(150, add_every));
    const ModelIndex index(model);
    std::vector<std::string> expected(151);
    for (int i = 0; i <= 150; ++i) expected[i] = Text(TraceAxis(index, {}, "n" + std::to_string(i), 1));
    // The chain crosses the depth limit (64 calls): near x the batch is found, far from it the trace is cut.
    ASSERT_EQ(expected[10], "n0:1");
    ASSERT_EQ(expected[150], "none");
    std::vector<int> up(151), down(151), mixed;
    for (int i = 0; i <= 150; ++i) up[i] = i, down[i] = 150 - i;
    for (int i = 0; i <= 150; ++i) mixed.push_back((i * 37) % 151);  // 37 is prime to 151: a permutation
    for (const auto* order : {&up, &down, &mixed}) {
      AxisTraceMemo memo;
      for (const int i : *order) {
        const std::string name = "n" + std::to_string(i);
        EXPECT_EQ(Text(TraceAxis(index, {}, name, 1, nullptr, &memo)), expected[i])
            << name << ", an Add every " << add_every << ", order starting " << order->front();
        // Again, now from the memo's own entry.
        EXPECT_EQ(Text(TraceAxis(index, {}, name, 1, nullptr, &memo)), expected[i]) << name << " again";
      }
    }
  }
}

}  // namespace
}  // namespace rnnstate::axis_trace_test
