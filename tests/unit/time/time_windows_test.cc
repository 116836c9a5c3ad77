// The time rules of contractions and windows (time_windows.cc, declared in time/time_rules.h) called
// directly on one node with the facts of its inputs: MatMul and Gemm keep the frames of a row axis where
// the output has it and mix them when they contract the time axis (transposed operands included); Conv and
// pooling keep each frame to itself with a kernel of one frame, slide an inexact window with a longer one,
// and mix frames when time is not a spatial axis.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "test_models.h"
#include "test_names.h"
#include "time/time_rules.h"

namespace rnnstate::time_windows_test {
namespace {

using namespace test_names;
using ::testing::StartsWith;

/// The one node of `graph` (ONNX text after the header, opset 14), its first input with `x_fact`, the
/// others steady, through `rule`.
std::string Through(TimeFact (*rule)(const NodeTime&), const std::string& graph, const TimeFact& x_fact) {
  const onnx::ModelProto model = ParseModel("<ir_version: 8, opset_import: [\"\" : 14]>\n" + graph);
  const ModelIndex index(model);
  const GraphPath main_graph;
  const TimeFact steady = TimeFact::Steady();
  const onnx::NodeProto& node = model.graph().node(0);
  NodeTime n{index, main_graph, 0, node, {}};
  for (int slot = 0; slot < node.input_size(); ++slot) n.in.push_back(slot == 0 ? &x_fact : &steady);
  return TimeFactText(rule(n));
}

const char* const kMatMul = R"(g (float[seq, batch, 4] x, float[4, 5] w) => (float[seq, batch, 5] y) {
  y = MatMul (x, w)
})";

TEST(ContractionTime, KeepsTheFramesOfARowAxis) {
  EXPECT_EQ(Through(ContractionTime, kMatMul, TimeFact::Frames(0)), "frames on axis 0");
  EXPECT_EQ(Through(ContractionTime, kMatMul, TimeFact::Frames(1)), "frames on axis 1");
}

TEST(ContractionTime, MixesFramesWhenItContractsTime) {
  EXPECT_THAT(Through(ContractionTime, kMatMul, TimeFact::Frames(2)), StartsWith("mixed"));
}

TEST(ContractionTime, FollowsGemmsTransposedOperand) {
  const std::string gemm = R"(g (float[seq, 4] x, float[4, 5] w) => (float[seq, 5] y) {
  y = Gemm (x, w)
})";
  EXPECT_EQ(Through(ContractionTime, gemm, TimeFact::Frames(0)), "frames on axis 0");
  const std::string transposed = R"(g (float[4, seq] x, float[4, 5] w) => (float[seq, 5] y) {
  y = Gemm <transA = 1> (x, w)
})";
  EXPECT_EQ(Through(ContractionTime, transposed, TimeFact::Frames(1)), "frames on axis 0");
  EXPECT_THAT(Through(ContractionTime, transposed, TimeFact::Frames(0)), StartsWith("mixed"));
}

TEST(WindowTime, AKernelOfOneFrameKeepsEachFrameToItself) {
  const std::string conv = R"(g (float[batch, 2, seq] x, float[3, 2, 1] w) => (float[batch, 3, seq] y) {
  y = Conv (x, w)
})";
  EXPECT_EQ(Through(WindowTime, conv, TimeFact::Frames(2)), "frames on axis 2");
}

TEST(WindowTime, ALongerKernelSlidesAWindowOverTime) {
  const std::string conv = R"(g (float[batch, 2, seq] x, float[3, 2, 5] w) => (float[batch, 3, seq] y) {
  y = Conv <pads = [2, 2]> (x, w)
})";
  EXPECT_EQ(Through(WindowTime, conv, TimeFact::Frames(2)), "frames on axis 2, inexact");
  const std::string pool = R"(g (float[batch, 2, seq] x) => (float[batch, 2, ?] y) {
  y = MaxPool <kernel_shape = [2], strides = [2]> (x)
})";
  EXPECT_THAT(Through(WindowTime, pool, TimeFact::Frames(2)), StartsWith("frames on axis 2"));
}

TEST(WindowTime, MixesFramesWhenTimeIsNotASpatialAxis) {
  const std::string conv = R"(g (float[batch, seq, 6] x, float[3, 2, 1] w) => (float[batch, 3, 6] y) {
  y = Conv (x, w)
})";
  EXPECT_THAT(Through(WindowTime, conv, TimeFact::Frames(1)), StartsWith("mixed"));
}

}  // namespace
}  // namespace rnnstate::time_windows_test
