// Whether a value is the same in every chunk of a streamed run (chunk_dependence: ChunkDependence::Of):
// the chunked input and everything computed from its values or from the length of its time axis differ;
// the lengths of its other axes, weights, constants and other inputs do not; the first frames do on the
// first call only; an autoregressive loop's trip count and the loop's own outputs differ; an If depends on
// its condition and on what its branches compute. Models as ONNX text.

#include "loops/chunk_dependence.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph/control_flow.h"
#include "graph/model_index.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::chunk_dependence_test {
namespace {

using namespace test_names;

const char* kAround = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 3] x, float[batch, 4] hb, int64 M, float[3, 4] W, bool flag) => (float[batch, 4] after) {
  shape = Shape (x)
  zero = Constant <value = int64 {0}> ()
  one = Constant <value = int64 {1}> ()
  len = Gather <axis = 0> (shape, zero)
  lenf = Cast <to = 1> (len)
  bat = Gather <axis = 0> (shape, one)
  size = Size (x)
  s1 = Constant <value = int64[1] {1}> ()
  e3 = Constant <value = int64[1] {3}> ()
  s0 = Constant <value = int64[1] {0}> ()
  tail = Slice (shape, s1, e3)
  head = Slice (shape, s0, s1)
  first = Gather <axis = 0> (x, zero)
  minus_one = Constant <value = int64 {-1}> ()
  last = Gather <axis = 0> (x, minus_one)
  mean = ReduceMean <axes = [0]> (x)
  wsum = Add (W, W)
  sel_ok = If (flag) <then_branch = then_ok () => (float[3, 4] o1) { o1 = Identity (W) },
                      else_branch = else_ok () => (float[3, 4] o2) { o2 = Neg (W) }>
  sel_len = If (flag) <then_branch = then_len () => (float[3, 4] o3) { o3 = Identity (W) },
                       else_branch = else_len () => (float[3, 4] o4) { o4 = Mul (W, lenf) }>
  h_n, ys = Loop (M, , hb) <body = body (int64 i, bool c, float[batch, 4] h) => (bool c_out, float[batch, 4] h_next, float[batch, 4] y) {
    x_t = Gather <axis = 0> (x, i)
    xw = MatMul (x_t, W)
    s = Add (xw, h)
    h_next = Tanh (s)
    y = Identity (h_next)
    c_out = Identity (c)
  }>
  after = Identity (h_n)
})";

int LoopNode(const onnx::ModelProto& model) {
  for (int n = 0; n < model.graph().node_size(); ++n) {
    if (model.graph().node(n).op_type() == "Loop") return n;
  }
  throw std::runtime_error("no Loop");
}

struct Fixture {
  explicit Fixture(ChunkedInputs inputs, bool first_chunk = false)
      : chunked(std::move(inputs)), dependence(index, {}, LoopNode(model), chunked, first_chunk) {}
  onnx::ModelProto model = ParseModel(kAround);
  ModelIndex index{model};
  ChunkedInputs chunked;
  ChunkDependence dependence;
  GraphPath Body() const { return GraphPath{GraphStep{LoopNode(model), kBody, -1}}; }
};

ChunkedInputs TimeOfX() { return ChunkedInputs{{{"x", 0}}, ""}; }

TEST(ChunkDependence, TheChunkedInputAndItsValuesDiffer) {
  Fixture f(TimeOfX());
  EXPECT_EQ(f.dependence.Of({}, "x"), "'x' (cut into chunks along axis 0)");
  EXPECT_EQ(f.dependence.Of({}, "mean"), "'x' (cut into chunks along axis 0)");
  // The last frame differs per chunk; the first does too, unless only the first call reads it.
  EXPECT_EQ(f.dependence.Of({}, "last"), "'x' (cut into chunks along axis 0)");
  EXPECT_EQ(f.dependence.Of({}, "first"), "'x' (cut into chunks along axis 0)");
}

TEST(ChunkDependence, TheFirstFramesAreTheSameOnTheFirstCall) {
  Fixture f(TimeOfX(), /*first_chunk=*/true);
  EXPECT_EQ(f.dependence.Of({}, "first"), "");
  EXPECT_EQ(f.dependence.Of({}, "last"), "'x' (cut into chunks along axis 0)");  // -1: the chunk's last
  EXPECT_EQ(f.dependence.Of({}, "mean"), "'x' (cut into chunks along axis 0)");
}

TEST(ChunkDependence, TheLengthOfTheTimeAxisDiffersTheOtherAxesDoNot) {
  Fixture f(TimeOfX());
  const std::string length = "the length of 'x' (axis 0, cut into chunks)";
  EXPECT_EQ(f.dependence.Of({}, "len"), length);
  EXPECT_EQ(f.dependence.Of({}, "lenf"), length);
  EXPECT_EQ(f.dependence.Of({}, "size"), length);
  EXPECT_EQ(f.dependence.Of({}, "head"), length);
  EXPECT_EQ(f.dependence.Of({}, "shape"), length);
  EXPECT_EQ(f.dependence.Of({}, "bat"), "");
  EXPECT_EQ(f.dependence.Of({}, "tail"), "");
}

TEST(ChunkDependence, WeightsConstantsAndOtherInputsAreTheSame) {
  Fixture f(TimeOfX());
  for (const char* name : {"W", "hb", "M", "zero", "wsum", "sel_ok", ""}) {
    EXPECT_EQ(f.dependence.Of({}, name), "") << name;
  }
  // Cut along another axis, x's length along axis 0 is the same in every chunk; its batch is not.
  Fixture batch(ChunkedInputs{{{"x", 1}}, ""});
  EXPECT_EQ(batch.dependence.Of({}, "len"), "");
  EXPECT_EQ(batch.dependence.Of({}, "bat"), "the length of 'x' (axis 1, cut into chunks)");
}

TEST(ChunkDependence, AnIfDependsOnWhatItsBranchesCompute) {
  Fixture f(TimeOfX());
  EXPECT_EQ(f.dependence.Of({}, "sel_ok"), "");
  EXPECT_EQ(f.dependence.Of({}, "sel_len"), "the length of 'x' (axis 0, cut into chunks)");
}

TEST(ChunkDependence, TheTripCountGivenPerCallAndTheLoopsOwnOutputsDiffer) {
  Fixture none(ChunkedInputs{});
  EXPECT_EQ(none.dependence.Of({}, "M"), "");
  EXPECT_EQ(none.dependence.Of({}, "x"), "");  // nothing cut: the same in every chunk
  EXPECT_EQ(none.dependence.Of({}, "after"), "the loop's own output 'h_n'");
  Fixture trip(ChunkedInputs{{}, "M"});
  EXPECT_EQ(trip.dependence.Of({}, "M"), "'M' (the trip count, given per call)");
}

TEST(ChunkDependence, InsideTheBody) {
  Fixture f(TimeOfX());
  EXPECT_EQ(f.dependence.Of(f.Body(), "h"), "'h' (an input of an enclosing subgraph)");
  EXPECT_EQ(f.dependence.Of(f.Body(), "x_t"), "'x' (cut into chunks along axis 0)");
  EXPECT_EQ(f.dependence.Of(f.Body(), "W"), "");  // an outer value, resolved where it is defined
}

}  // namespace
}  // namespace rnnstate::chunk_dependence_test
