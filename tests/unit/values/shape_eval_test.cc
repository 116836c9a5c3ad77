// Shapes and the small integer vectors exporters compute from them (values/shape_eval.h): a value's shape
// (inference's invented names unknown, a Loop's scan output from its body), the value of Shape/Gather/
// Slice/Concat/Range/arithmetic chains, the shape a ConstantOfShape or Expand fills, integer values with
// their signs, conditions shapes decide, and two partial shapes merged. Negative controls: what is not such
// a value (a data operator, a division by zero, a negative size, an index out of range) is unknown. A shape
// vector has one axis, which a valid Gather or Slice reads whatever axis it names; values of another rank (a
// 2-D constant) are not evaluated as if flattened.

#include "values/shape_eval.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "graph/model_index.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::shape_eval_test {
namespace {

using namespace test_names;

/// `text` (a graph) at opset `opset`, parsed and indexed.
struct Indexed {
  explicit Indexed(const std::string& text, int opset = 14)
      : model(ParseModel("<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) + "]>\n" + text)),
        index(model) {}
  onnx::ModelProto model;
  ModelIndex index;
};

/// "[1,batch,?]" for a shape, "none" for nullopt.
std::string Text(const std::optional<SymShape>& shape) {
  if (!shape) return "none";
  std::string out = "[";
  for (size_t i = 0; i < shape->size(); ++i) {
    const SymDim& d = (*shape)[i];
    out += (i ? "," : "") + (d.fixed() ? std::to_string(d.value) : d.name.empty() ? "?" : d.name);
  }
  return out + "]";
}

/// PyTorch's shape computations on cache [1, batch, 4] and x [seq, batch, 2].
const char* kShapes = R"(g (float[1, batch, 4] cache, float[seq, batch, 2] x, float[unk__3, 2] odd)
    => (float[?] y) {
  shape = Shape (cache)
  one = Constant <value = int64[1] {1}> ()
  big = Constant <value = int64[1] {9223372036854775807}> ()
  rest = Slice (shape, one, big)
  target = Concat <axis = 0> (one, rest)
  minus_one = Constant <value = int64[1] {-1}> ()
  last = Gather (shape, minus_one)
  zero = Constant <value = int64 {0}> ()
  first = Gather (shape, zero)
  first_1d = Unsqueeze <axes = [0]> (first)
  as_float = Cast <to = 1> (shape)
  xs = Shape (x)
  seq_len = Gather (xs, zero)
  two = Constant <value = int64[1] {2}> ()
  half = Div (last, two)
  bound = Mul (two, half)
  top = Max (last, two, one)
  five = Constant <value = int64 {5}> ()
  range = Range (zero, five, one)
  range_len = Shape (range)
  y = Relu (x)
  zero_1d = Constant <value = int64[1] {0}> ()
  no_div = Div (last, zero_1d)
  negative = Sub (one, two)
  out_of_range = Gather (shape, five)
  huge = Constant <value = int64 {9223372036854775807}> ()
  minus_two = Constant <value = int64 {-2}> ()
  endless = Range (minus_two, huge, one)
  near_max = Constant <value = int64 {9223372036854775797}> ()
  big_step = Range (near_max, huge, huge)
})";

TEST(ShapeOf, IsTheDeclaredOrInferredShapeWithInventedNamesUnknown) {
  const Indexed m(kShapes);
  EXPECT_EQ(Text(ShapeOf(m.index, {}, "cache")), "[1,batch,4]");
  EXPECT_EQ(Text(ShapeOf(m.index, {}, "odd")), "[?,2]");
  EXPECT_EQ(Text(ShapeOf(m.index, {}, "y")), "[?]");  // declared
  EXPECT_EQ(Text(ShapeOf(m.index, {}, "nothing")), "none");
}

TEST(ShapeOf, IsTheInferredShapeWhereNothingIsDeclared) {
  const Indexed m(R"(g (float[seq, batch, 2] x) => (int64[3] y) {
  inner = Neg (x)
  y = Shape (inner)
})");
  EXPECT_EQ(m.index.inference_error(), "");
  EXPECT_EQ(Text(ShapeOf(m.index, {}, "inner")), "[seq,batch,2]");
  EXPECT_EQ(Text(ShapeValue(m.index, {}, "y")), "[seq,batch,2]");
}

TEST(ShapeOf, OfALoopsScanOutputIsAnUnknownAxisThenTheBodysOutput) {
  const Indexed m(R"(g (float[batch, 3] x, int64 trip, bool cond) => (float[batch, 3] h, float[?, ?, ?] ys) {
  h, ys = Loop (trip, cond, x) <body = body (int64 i, bool c_in, float[batch, 3] v) => (bool c_out,
      float[batch, 3] w, float[batch, 3] step) {
    c_out = Identity (c_in)
    w = Neg (v)
    step = Identity (w)
  }>
})");
  // The declared [?, ?, ?] is the model's; clear it to see what the body says.
  onnx::ModelProto model = m.model;
  model.mutable_graph()->mutable_output(1)->mutable_type()->mutable_tensor_type()->clear_shape();
  const ModelIndex index(model);
  EXPECT_EQ(Text(ShapeOf(index, {}, "ys")), "[?,batch,3]");
  EXPECT_EQ(Text(ShapeOf(index, {}, "h")), "[batch,3]");
}

TEST(ShapeValue, EvaluatesTheShapeComputationsExportersWrite) {
  const Indexed m(kShapes);
  EXPECT_EQ(Text(ShapeValue(m.index, {}, "shape")), "[1,batch,4]");
  EXPECT_EQ(Text(ShapeValue(m.index, {}, "rest")), "[batch,4]");
  EXPECT_EQ(Text(ShapeValue(m.index, {}, "target")), "[1,batch,4]");
  EXPECT_EQ(Text(ShapeValue(m.index, {}, "last")), "[4]");
  EXPECT_EQ(Text(ShapeValue(m.index, {}, "first_1d")), "[1]");
  EXPECT_EQ(Text(ShapeValue(m.index, {}, "as_float")), "[1,batch,4]");
  EXPECT_EQ(Text(ShapeValue(m.index, {}, "seq_len")), "[seq]");
  EXPECT_EQ(Text(ShapeValue(m.index, {}, "bound")), "[4]");
  EXPECT_EQ(Text(ShapeValue(m.index, {}, "top")), "[4]");
  EXPECT_EQ(Text(ShapeValue(m.index, {}, "range")), "[0,1,2,3,4]");
  EXPECT_EQ(Text(ShapeValue(m.index, {}, "range_len")), "[5]");
}

TEST(ShapeValue, IsUnknownForWhatIsNoSuchValue) {
  const Indexed m(kShapes);
  EXPECT_EQ(Text(ShapeValue(m.index, {}, "y")), "none");             // data
  EXPECT_EQ(Text(ShapeValue(m.index, {}, "no_div")), "none");        // a division by zero
  EXPECT_EQ(Text(ShapeValue(m.index, {}, "negative")), "none");      // a size below 0
  EXPECT_EQ(Text(ShapeValue(m.index, {}, "out_of_range")), "none");  // Gather past the end
  EXPECT_EQ(Text(ShapeValue(m.index, {}, "x")), "none");
  EXPECT_EQ(Text(ShapeValue(m.index, {}, "nothing")), "none");
}

TEST(ShapeValue, ARangeTooLongIsUnknownEvenWhereItsLengthOverflows) {
  const Indexed m(kShapes);
  EXPECT_EQ(Text(ShapeValue(m.index, {}, "endless")), "none");
}

TEST(ShapeValue, ARangesStepPastItsLimitEndsItEvenNearTheLargestInteger) {
  const Indexed m(kShapes);
  EXPECT_EQ(Text(ShapeValue(m.index, {}, "big_step")), "[9223372036854775797]");
}

TEST(ShapeValue, ShapeReadsItsStartAndEndFromOpsetFifteen) {
  const Indexed m(R"(g (float[1, batch, 4] cache) => (int64[2] tail, int64[1] middle) {
  tail = Shape <start = -2> (cache)
  middle = Shape <start = 1, end = -1> (cache)
})",
                  15);
  EXPECT_EQ(Text(ShapeValue(m.index, {}, "tail")), "[batch,4]");
  EXPECT_EQ(Text(ShapeValue(m.index, {}, "middle")), "[batch]");
}

TEST(IntValues, KeepsTheSignOfConstantsAndNeedsEveryElementFixed) {
  const Indexed m(kShapes);
  EXPECT_EQ(IntValues(m.index, {}, "minus_one"), (std::vector<int64_t>{-1}));
  EXPECT_EQ(IntValues(m.index, {}, "zero"), (std::vector<int64_t>{0}));
  EXPECT_EQ(IntValues(m.index, {}, "bound"), (std::vector<int64_t>{4}));
  EXPECT_EQ(IntValues(m.index, {}, "target"), std::nullopt);  // batch is not fixed
  EXPECT_EQ(IntValues(m.index, {}, "y"), std::nullopt);
}

/// Zeros for a state as exporters size them: from the data's batch.
const char* kFilled = R"(g (float[seq, batch, 2] x, float[1, 1, 4] v, float[batch, 4] w) => (float[1, batch, 4] h) {
  xs = Shape (x)
  one = Constant <value = int64[1] {1}> ()
  four = Constant <value = int64[1] {4}> ()
  zero = Constant <value = int64[1] {0}> ()
  b = Gather (xs, one)
  dims = Concat <axis = 0> (one, b, four)
  zeros = ConstantOfShape (dims)
  cast = Cast <to = 1> (zeros)
  kept = Identity (cast)
  spread = Expand (v, dims)
  unsure = Expand (w, dims)
  relu = Relu (v)
  h = Identity (kept)
})";

TEST(FilledShape, IsTheShapeAConstantOfShapeOrExpandComputes) {
  const Indexed m(kFilled);
  EXPECT_EQ(Text(FilledShape(m.index, {}, "zeros")), "[1,batch,4]");
  EXPECT_EQ(Text(FilledShape(m.index, {}, "kept")), "[1,batch,4]");  // through Cast and Identity
  EXPECT_EQ(Text(FilledShape(m.index, {}, "spread")), "[1,batch,4]");
  // An Expand to another rank is not a form exporters write for a state: not judged.
  EXPECT_EQ(Text(FilledShape(m.index, {}, "unsure")), "none");
  EXPECT_EQ(Text(FilledShape(m.index, {}, "relu")), "none");
  EXPECT_EQ(Text(FilledShape(m.index, {}, "x")), "none");
}

TEST(FilledShape, AnExpandKeepsTheSizeATargetOfOneLeaves) {
  const Indexed m(R"(g (float[2, n, 1] v, float[seq] s) => (float[?, ?, ?] y) {
  ones = Constant <value = int64[3] {1, 1, 1}> ()
  y = Expand (v, ones)
  ss = Shape (s)
  one = Constant <value = int64[1] {1}> ()
  target = Concat <axis = 0> (one, one, ss)
  z = Expand (v, target)
})");
  EXPECT_EQ(Text(FilledShape(m.index, {}, "y")), "[2,n,1]");
  EXPECT_EQ(Text(FilledShape(m.index, {}, "z")), "[2,n,seq]");
}

TEST(KnownCondition, IsWhatConstantsAndShapesDecide) {
  const Indexed m(R"(g (float[1, batch, 4] cache, bool fed) => (bool y) {
  shape = Shape (cache)
  zero = Constant <value = int64 {0}> ()
  one = Constant <value = int64 {1}> ()
  first = Gather (shape, zero)
  second = Gather (shape, one)
  is_one = Equal (first, one)
  not_one = Not (is_one)
  less = Less (zero, first)
  not_less = GreaterOrEqual (zero, first)
  batch_one = Equal (second, one)
  no = Constant <value = bool {0}> ()
  decided = And (batch_one, no)
  either = Or (batch_one, is_one)
  open = And (batch_one, fed)
  y = Identity (open)
})");
  EXPECT_EQ(KnownCondition(m.index, {}, "is_one"), true);
  EXPECT_EQ(KnownCondition(m.index, {}, "not_one"), false);
  EXPECT_EQ(KnownCondition(m.index, {}, "less"), true);
  EXPECT_EQ(KnownCondition(m.index, {}, "not_less"), false);
  EXPECT_EQ(KnownCondition(m.index, {}, "no"), false);
  EXPECT_EQ(KnownCondition(m.index, {}, "decided"), false);  // one false operand decides an And
  EXPECT_EQ(KnownCondition(m.index, {}, "either"), true);    // one true operand decides an Or
  EXPECT_EQ(KnownCondition(m.index, {}, "batch_one"), std::nullopt);
  EXPECT_EQ(KnownCondition(m.index, {}, "open"), std::nullopt);
  EXPECT_EQ(KnownCondition(m.index, {}, "fed"), std::nullopt);
}

TEST(MergeShapes, FillsUnknownAndInventedDimsFromTheOther) {
  const SymShape a = {SymDim{1, ""}, SymDim{}, SymDim{-1, "unk__7"}, SymDim{-1, "batch"}};
  const SymShape b = {SymDim{5, ""}, SymDim{3, ""}, SymDim{-1, "time"}, SymDim{2, ""}};
  // Fixed dims stay, unknown and invented ones are filled; a real name gives way to a fixed size.
  EXPECT_EQ(Text(MergeShapes(a, b)), "[1,3,time,2]");
  const SymShape named = {SymDim{-1, "batch"}};
  EXPECT_EQ(Text(MergeShapes(named, SymShape{SymDim{-1, "other"}})), "[batch]");
  EXPECT_EQ(Text(MergeShapes(a, SymShape{SymDim{5, ""}})), Text(a));  // another rank: a as it is
  EXPECT_EQ(Text(MergeShapes(std::nullopt, b)), Text(b));
  EXPECT_EQ(Text(MergeShapes(a, std::nullopt)), Text(a));
  EXPECT_EQ(Text(MergeShapes(std::nullopt, std::nullopt)), "[]");
}

TEST(ShapeEval, AGatherOrSliceOfAShapeReadsItsOneAxisWhateverAxisItNames) {
  const onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, 3, seq] x) => (int64[1] mid) {
    s = Shape (x)
    zero = Constant <value = int64 {0}> ()
    m1 = Constant <value = int64 {-1}> ()
    first = Gather (s, zero)
    last = Gather <axis = -1> (s, m1)
    starts = Constant <value = int64[1] {1}> ()
    ends = Constant <value = int64[1] {3}> ()
    axes = Constant <value = int64[1] {-1}> ()
    mid = Slice (s, starts, ends, axes)
    zero1 = Constant <value = int64[1] {0}> ()
    head = Slice (s, zero1, starts)
})");
  const ModelIndex index(model);
  EXPECT_EQ(Text(ShapeValue(index, {}, "first")), "[batch]");
  EXPECT_EQ(Text(ShapeValue(index, {}, "last")), "[seq]");
  EXPECT_EQ(Text(ShapeValue(index, {}, "mid")), "[3,seq]");
  EXPECT_EQ(Text(ShapeValue(index, {}, "head")), "[batch]");
}

TEST(ShapeEval, ValuesOfAnotherRankAreNotEvaluatedAsVectors) {
  const onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, 3, seq] x) => (int64[2] row) {
    table = Constant <value = int64[2, 2] {1, 2, 3, 4}> ()
    one = Constant <value = int64 {1}> ()
    row = Gather (table, one)
    column = Gather <axis = 1> (table, one)
    starts = Constant <value = int64[1] {1}> ()
    ends = Constant <value = int64[1] {2}> ()
    cut = Slice (table, starts, ends)
})");
  const ModelIndex index(model);
  // Flattened, the table would give 2 for row 1 and [2] for its rows 1..2: neither is their value.
  EXPECT_EQ(Text(ShapeValue(index, {}, "row")), "none");
  EXPECT_EQ(Text(ShapeValue(index, {}, "column")), "none");
  EXPECT_EQ(Text(ShapeValue(index, {}, "cut")), "none");
}

}  // namespace
}  // namespace rnnstate::shape_eval_test
