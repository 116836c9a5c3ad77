// Shape vectors evaluated (values/shape_eval.h) through Gather and Slice: a vector has one axis, which a
// valid Gather or Slice reads whatever axis it names (0 or -1), so the evaluation reads none; values of
// another rank (a 2-D constant) are not evaluated as if flattened (negative controls). ONNX text.

#include "values/shape_eval.h"

#include <gtest/gtest.h>

#include "graph/model_index.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::shape_eval_test {
namespace {

using namespace test_names;

/// "batch,3,seq" for a vector of dims, "unknown" when there is none.
std::string Text(const std::optional<SymShape>& value) {
  if (!value) return "unknown";
  std::string text;
  for (const SymDim& d : *value) text += (text.empty() ? "" : ",") + (d.fixed() ? std::to_string(d.value) : d.name);
  return text;
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
  EXPECT_EQ(Text(ShapeValue(index, {}, "first")), "batch");
  EXPECT_EQ(Text(ShapeValue(index, {}, "last")), "seq");
  EXPECT_EQ(Text(ShapeValue(index, {}, "mid")), "3,seq");
  EXPECT_EQ(Text(ShapeValue(index, {}, "head")), "batch");
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
  EXPECT_EQ(Text(ShapeValue(index, {}, "row")), "unknown");
  EXPECT_EQ(Text(ShapeValue(index, {}, "column")), "unknown");
  EXPECT_EQ(Text(ShapeValue(index, {}, "cut")), "unknown");
}

}  // namespace
}  // namespace rnnstate::shape_eval_test
