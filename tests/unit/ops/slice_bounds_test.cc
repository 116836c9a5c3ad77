// A Slice's bounds as constants (ops/slice_bounds.h): read from inputs (opset 10 on) or attributes (before),
// absent ones empty, shape-computed ones read, folded chains only when asked; a given operand that is not a
// constant makes the whole unknown. The computed operands onnx's inference cannot read (torch.chunk's), and
// the ones it can or that are not fixed, which are not listed. Models as ONNX text.

#include "ops/slice_bounds.h"

#include <gtest/gtest.h>

#include "graph/model_index.h"
#include "test_models.h"

namespace rnnstate::slice_bounds_test {
namespace {

using testing::ParseModel;
using Ints = std::vector<int64_t>;

/// The bounds of the model's last node (a Slice).
std::optional<SliceBounds> BoundsOfLast(const onnx::ModelProto& model,
                                        BoundReading reading = BoundReading::kConstants) {
  const ModelIndex index(model);
  const onnx::GraphProto& graph = model.graph();
  return ConstantSliceBounds(index, {}, graph.node(graph.node_size() - 1), reading);
}

/// BoundsOfLast as text: "starts [-3] ends [9] axes [1] steps []" ("unknown" for nullopt).
std::string BoundsTextOfLast(const onnx::ModelProto& model, BoundReading reading = BoundReading::kConstants) {
  const std::optional<SliceBounds> bounds = BoundsOfLast(model, reading);
  if (!bounds) return "unknown";
  const auto list = [](const Ints& values) {
    std::string text = "[";
    for (size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + std::to_string(values[i]);
    return text + "]";
  };
  return "starts " + list(bounds->starts) + " ends " + list(bounds->ends) + " axes " + list(bounds->axes) + " steps " +
         list(bounds->steps);
}

TEST(SliceBounds, InputsSinceOpset10AbsentOnesEmpty) {
  const onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1, 9, 4] x) => (float[1, 3, 4] y) {
    starts = Constant <value = int64[1] {-3}> ()
    ends = Constant <value = int64[1] {9223372036854775807}> ()
    axes = Constant <value = int64[1] {1}> ()
    y = Slice (x, starts, ends, axes)
})");
  EXPECT_EQ(BoundsTextOfLast(model), "starts [-3] ends [9223372036854775807] axes [1] steps []");
}

TEST(SliceBounds, AttributesBeforeOpset10) {
  const onnx::ModelProto model = ParseModel(R"(<ir_version: 4, opset_import: ["" : 9]>
g (float[1, 9, 4] x) => (float[1, 9, 2] y) {
    y = Slice <starts = [0], ends = [2], axes = [2]> (x)
})");
  EXPECT_EQ(BoundsTextOfLast(model), "starts [0] ends [2] axes [2] steps []");
}

TEST(SliceBounds, AnEndComputedFromAFixedShapeIsRead) {
  const onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1, 9, 4] x) => (float[1, 9, 4] y) {
    shape = Shape (x)
    one = Constant <value = int64[1] {1}> ()
    two = Constant <value = int64[1] {2}> ()
    ends = Slice (shape, one, two)
    starts = Constant <value = int64[1] {0}> ()
    y = Slice (x, starts, ends, one)
})");
  EXPECT_EQ(BoundsTextOfLast(model), "starts [0] ends [9] axes [1] steps []");
}

TEST(SliceBounds, AGivenOperandThatIsNoConstantMakesTheWholeUnknown) {
  // The negative controls: an end fed by the graph (data), then steps fed by the graph with constant bounds.
  const onnx::ModelProto fed_end = ParseModel(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1, 9, 4] x, int64[1] end) => (float[1, ?, 4] y) {
    starts = Constant <value = int64[1] {0}> ()
    axes = Constant <value = int64[1] {1}> ()
    y = Slice (x, starts, end, axes)
})");
  EXPECT_FALSE(BoundsOfLast(fed_end));
  EXPECT_FALSE(BoundsOfLast(fed_end, BoundReading::kFolded));
  const onnx::ModelProto fed_steps = ParseModel(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1, 9, 4] x, int64[1] steps) => (float[1, ?, 4] y) {
    starts = Constant <value = int64[1] {0}> ()
    ends = Constant <value = int64[1] {4}> ()
    axes = Constant <value = int64[1] {1}> ()
    y = Slice (x, starts, ends, axes, steps)
})");
  EXPECT_FALSE(BoundsOfLast(fed_steps));
}

TEST(SliceBounds, AFoldedChainOnlyWhenAsked) {
  // starts [2, 0] written as PyTorch writes small constants: the pairs reversed by a Slice of step -1 (which
  // shape_eval does not evaluate; int_fold does).
  const onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1, 9, 4] x) => (float[1, 7, 4] y) {
    given = Constant <value = int64[2] {0, 2}> ()
    start = Constant <value = int64[1] {-1}> ()
    end = Constant <value = int64[1] {-9223372036854775807}> ()
    zero = Constant <value = int64[1] {0}> ()
    step = Constant <value = int64[1] {-1}> ()
    starts = Slice (given, start, end, zero, step)
    ends = Constant <value = int64[2] {9, 4}> ()
    axes = Constant <value = int64[2] {1, 2}> ()
    y = Slice (x, starts, ends, axes)
})");
  EXPECT_EQ(BoundsTextOfLast(model), "unknown");
  EXPECT_EQ(BoundsTextOfLast(model, BoundReading::kFolded), "starts [2, 0] ends [9, 4] axes [1, 2] steps []");
}

/// The output names of the nodes ComputedSliceOperands lists, with their values.
std::vector<std::pair<std::string, Ints>> Computed(const onnx::ModelProto& model) {
  const ModelIndex index(model);
  std::vector<std::pair<std::string, Ints>> named;
  for (const KnownValue& value : ComputedSliceOperands(index)) {
    named.emplace_back(model.graph().node(value.node).output(0), value.values);
  }
  return named;
}

TEST(ComputedSliceOperands, TorchChunksBoundsOfAFixedAxisOncePerNode) {
  const std::vector<std::pair<std::string, Ints>> expected = {{"end0", {4}}, {"end1", {8}}};
  EXPECT_EQ(Computed(testing::TorchChunk("float[b, 8, t, 6]")), expected);
  const onnx::ModelProto model = testing::TorchChunk("float[b, 8, t, 6]");
  const ModelIndex index(model);
  EXPECT_EQ(ComputedSliceOperands(index).front().element_type, onnx::TensorProto::INT64);
}

TEST(ComputedSliceOperands, NoneWhereTheAxisIsNotFixedOrTheBoundsAreConstantsOrFed) {
  // The negative controls: a symbolic channel count (the bounds change with the input), constant bounds
  // (onnx reads them itself), and an end fed by the graph.
  EXPECT_TRUE(Computed(testing::TorchChunk("float[b, c, t, 6]")).empty());
  EXPECT_TRUE(Computed(ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[b, 8, t, 6] x) => (float[b, 4, t, 6] y) {
    zero = Constant <value = int64[1] {0}> ()
    four = Constant <value = int64[1] {4}> ()
    axis = Constant <value = int64[1] {1}> ()
    y = Slice (x, zero, four, axis)
})"))
                  .empty());
  EXPECT_TRUE(Computed(ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[b, 8, t, 6] x, int64[1] end) => (float[b, ?, t, 6] y) {
    zero = Constant <value = int64[1] {0}> ()
    axis = Constant <value = int64[1] {1}> ()
    doubled = Add (end, end)
    y = Slice (x, zero, doubled, axis)
})"))
                  .empty());
}

}  // namespace
}  // namespace rnnstate::slice_bounds_test
