// TraceInitialState (state_origin.h): what a state's initial value is, and — only when asked, for
// report — the inputs and initializers a computed one comes from.

#include "states/state_origin.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "find/analysis.h"
#include "graph/model_index.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::state_origin_test {
namespace {

using namespace test_names;

/// PyTorch's default state: zeros shaped [1, batch of X, 3], the batch read through Shape and Gather.
onnx::ModelProto BatchSizedZeros() {
  return ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[1, batch, 3] H) {
  shape = Shape (X)
  one = Constant <value = int64[1] {1}> ()
  batch = Gather <axis = 0> (shape, one)
  hidden = Constant <value = int64[1] {3}> ()
  dims = Concat <axis = 0> (one, batch, hidden)
  h0 = ConstantOfShape (dims)
  Y, H = GRU <hidden_size = 3> (X, W, R, , , h0)
})");
}

TEST(TraceInitialState, AComputedStateWithAndWithoutItsSources) {
  const onnx::ModelProto model = BatchSizedZeros();
  const ModelIndex index(model);
  const StateSite site{{}, 6, 5, 1, false};
  const StateOrigin full = TraceInitialState(index, site);
  EXPECT_EQ(full.kind, StateOrigin::Kind::kComputed);
  EXPECT_TRUE(full.zero);
  EXPECT_THAT(full.from_inputs, ElementsAre("X"));
  EXPECT_THAT(full.from_initializers, IsEmpty());
  // Without the walk to its sources, everything else is the same.
  const StateOrigin lean = TraceInitialState(index, site, /*with_sources=*/false);
  EXPECT_EQ(lean.kind, full.kind);
  EXPECT_EQ(lean.zero, full.zero);
  EXPECT_EQ(lean.value, full.value);
  EXPECT_EQ(lean.computed_by, full.computed_by);
  EXPECT_EQ(lean.other_consumers, full.other_consumers);
  EXPECT_THAT(lean.from_inputs, IsEmpty());
  EXPECT_THAT(lean.from_initializers, IsEmpty());
}

TEST(TraceInitialState, TheAnalysisWalksToSourcesOnlyWhenAsked) {
  const onnx::ModelProto model = BatchSizedZeros();
  const ModelIndex index(model);
  const Analysis shown = Analyze(index);
  AnalysisOptions options;
  options.origin_sources = false;
  const Analysis lean = Analyze(index, options);
  ASSERT_EQ(shown.states.size(), 1u);
  ASSERT_EQ(lean.states.size(), 1u);
  EXPECT_THAT(shown.states[0].origin.from_inputs, ElementsAre("X"));
  EXPECT_THAT(lean.states[0].origin.from_inputs, IsEmpty());
  EXPECT_EQ(lean.states[0].origin.zero, shown.states[0].origin.zero);
  EXPECT_EQ(lean.states[0].state.streamable, shown.states[0].state.streamable);
}

}  // namespace
}  // namespace rnnstate::state_origin_test
