// What `--time-axis` must change outside the loops in an export of fixed length (rewrite/fixed_length.h):
// a Reshape target holding the length where time lands, a Slice along time to the length (written "to the
// end"), declared shapes holding it (symbolic where time is alone, unknown elsewhere); and the refusals: no
// recurrence along the axis, a constant of the whole length no input explains. Models as ONNX text.

#include "rewrite/fixed_length.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "graph/model_index.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::fixed_length_test {
namespace {

using namespace test_names;

/// x [1, 20, 3] (time on axis 1, length 20) sliced to its length, reshaped time-major as tf2onnx writes
/// Keras's transpose at batch 1, then a GRU; `extra` adds nodes and outputs after it.
std::string Fixed(const std::string& extra_outputs = "", const std::string& extra_nodes = "") {
  return std::string(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[1, 20, 3] x, float[1, 9, 3] W, float[1, 9, 3] R) => (float[20, 1, 1, 3] Y)") +
         extra_outputs + R"() {
  zero = Constant <value = int64[1] {0}> ()
  twenty = Constant <value = int64[1] {20}> ()
  one = Constant <value = int64[1] {1}> ()
  head = Slice (x, zero, twenty, one)
  shape = Constant <value = int64[3] {20, 1, 3}> ()
  t = Reshape (head, shape)
  Y = GRU <hidden_size = 3> (t, W, R)
)" + extra_nodes +
         "}";
}

TEST(FindFixedLength, FindsTheShapesSlicesAndDeclarationsHoldingTheLength) {
  onnx::ModelProto model = ParseModel(Fixed());
  *model.mutable_graph()->add_value_info() = model.graph().input(0);
  model.mutable_graph()->mutable_value_info(0)->set_name("head");
  const ModelIndex index(model);
  const FixedLengthEdits edits = FindFixedLength(index, TimeRef{"x", 1}, 20);
  EXPECT_EQ(edits.refusal, "");
  ASSERT_EQ(edits.shapes.size(), 1u);
  EXPECT_EQ(edits.shapes[0].value.name, "shape");
  EXPECT_EQ(edits.shapes[0].position, 0);
  ASSERT_EQ(edits.slices.size(), 1u);
  EXPECT_EQ(edits.slices[0].node, 3);
  EXPECT_THAT(edits.slices[0].ends, ElementsAre(std::numeric_limits<int64_t>::max()));
  ASSERT_EQ(edits.declared.size(), 2u);
  EXPECT_EQ(edits.declared[0].value, "Y");
  EXPECT_TRUE(edits.declared[0].output);
  EXPECT_EQ(edits.declared[0].axis, 0);
  EXPECT_TRUE(edits.declared[0].symbolic);
  EXPECT_EQ(edits.declared[1].value, "head");
  EXPECT_FALSE(edits.declared[1].output);
  EXPECT_EQ(edits.declared[1].axis, 1);
}

TEST(FindFixedLength, LeavesASliceThatStopsShortAndAShapeOfAnotherLength) {
  const onnx::ModelProto model =
      ParseModel(Fixed(", float[?, ?, ?] part", R"(  five = Constant <value = int64[1] {5}> ()
  part = Slice (x, zero, five, one)
)"));
  const ModelIndex index(model);
  const FixedLengthEdits edits = FindFixedLength(index, TimeRef{"x", 1}, 20);
  ASSERT_EQ(edits.slices.size(), 1u);  // `head` only
  EXPECT_EQ(edits.slices[0].node, 3);
  // Another length: nothing holds it.
  const FixedLengthEdits other = FindFixedLength(index, TimeRef{"x", 1}, 7);
  EXPECT_THAT(other.shapes, IsEmpty());
  EXPECT_THAT(other.slices, ElementsAre(::testing::Field(&SliceToEnd::node, 3)));  // 20 >= 7: to the end too
}

TEST(FindFixedLength, RefusesAnAxisNoRecurrenceRunsAlong) {
  const onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[1, 20, 3] x) => (float[1, 20, 3] y) {
  y = Relu (x)
})");
  const ModelIndex index(model);
  EXPECT_EQ(FindFixedLength(index, TimeRef{"x", 1}, 20).refusal,
            "no recurrent node or loop runs along x:1: it is no time axis to open");
}

TEST(FindFixedLength, RefusesAConstantOfTheWholeLength) {
  onnx::ModelProto model = ParseModel(Fixed(", float[1, 20, 3] z", "  z = Add (x, positions)\n"));
  AddFloatInitializer(*model.mutable_graph(), "positions", {1, 20, 3}, {0.5f, 1.5f});
  const ModelIndex index(model);
  const FixedLengthEdits edits = FindFixedLength(index, TimeRef{"x", 1}, 20);
  EXPECT_THAT(edits.refusal, HasSubstr("the model holds the whole length 20 in a constant ("));
  EXPECT_THAT(edits.refusal, HasSubstr("no input's length explains it, so the axis stays fixed"));
}

}  // namespace
}  // namespace rnnstate::fixed_length_test
