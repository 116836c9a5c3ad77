// Keras layers tf2onnx writes as Loops (issue 22), as ONNX text: a batch-1 transpose written as a Reshape,
// the condition `And(Less(Cast(iter, FLOAT), 6.0), Less(Cast(t + 1, FLOAT), 6.0))` with its initial value
// computed from float constants, stacked layers reading the previous loop's scan output at their counter,
// and the last-step readout `Slice(ys, [-1], [INT32_MAX], [0])`.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "find/analysis.h"
#include "find/analyze_text.h"
#include "graph/model_index.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::tf2onnx_loop_test {
namespace {

using namespace test_names;

TEST(Tf2onnxLoops, StackedLayersThroughReshapesWalkTheInputsTimeAxis) {
  // Before: "the body reads 'x_tm1' at the iteration index, and it is not a graph input" (the Reshape
  // [1,6,3] -> [6,1,3] was not followed), and the float condition was not read.
  const Analysis analysis = AnalyzeText(Tf2onnxStacked());
  ASSERT_EQ(analysis.nodes.size(), 2u);
  for (const auto& loop : analysis.nodes) {
    EXPECT_FALSE(loop.streamable);
    EXPECT_THAT(loop.not_streamable_reason, HasSubstr("fixed sequence length"));
    EXPECT_THAT(loop.not_streamable_reason, HasSubstr("--time-axis x:1"));
  }
}

TEST(Tf2onnxLoops, ABoundOtherThanTheTripCountIsNoEndOfIt) {
  // Layer 2 stops after 5 of its 6 iterations: its condition ends it early.
  const Analysis analysis = AnalyzeText(Tf2onnxStacked("5.0"));
  ASSERT_EQ(analysis.nodes.size(), 2u);
  EXPECT_THAT(analysis.nodes[1].not_streamable_reason, ::testing::Not(HasSubstr("fixed sequence length")));
  EXPECT_THAT(analysis.nodes[1].not_streamable_reason, HasSubstr("condition"));
}

TEST(Tf2onnxLoops, OnlyTheLastStepIsAReadoutOfEachChunk) {
  // The second-to-last step of a chunk is not the one run's: each chunk's own.
  const Analysis analysis = AnalyzeText(Tf2onnxStacked("6.0", "-2"));
  ASSERT_EQ(analysis.nodes.size(), 2u);
  EXPECT_THAT(analysis.nodes[1].not_streamable_reason, HasSubstr("slices the time axis"));
  // Layer 1 feeds layer 2 step by step: it streams only where layer 2 does.
  EXPECT_THAT(analysis.nodes[0].not_streamable_reason, HasSubstr("is read step by step by Loop"));
  EXPECT_THAT(analysis.nodes[0].not_streamable_reason, HasSubstr("which does not stream"));
}

}  // namespace
}  // namespace rnnstate::tf2onnx_loop_test
