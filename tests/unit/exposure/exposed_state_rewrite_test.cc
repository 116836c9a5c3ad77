// What rewrite, check and --streamable-only do with models whose states the authors already expose:
// metadata only, on any opset, idempotent; states that cannot stream left out on request.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "exposure/exposed_state.h"
#include "exposure_test_models.h"
#include "find/analysis.h"
#include "graph/model_index.h"
#include "pipeline_stages.h"
#include "rewrite/plan.h"
#include "rewrite/planner.h"
#include "rnnstate/error.h"
#include "rnnstate/metadata.h"
#include "test_models.h"
#include "test_names.h"
#include "views/check.h"

namespace rnnstate::exposed_state_rewrite_test {
namespace {

using namespace test_names;

// ---------------------------------------------------------------------------------------------------
// rewrite, check and --streamable-only on exposed models.

TEST(ExposedState, RewriteOfAnAllExposedModelOnlyAddsMetadataAndIsIdempotent) {
  for (StateInputMode mode : {StateInputMode::kDefaults, StateInputMode::kRequired}) {
    const PlanOptions options = InMode(mode);
    const onnx::ModelProto model = RewrittenMetadataOnly(PackedLstm(), options);
    const std::vector<StatePair> pairs = RecordedPairs(model);
    ASSERT_THAT(pairs, SizeIs(2));
    for (size_t k = 0; k < 2; ++k) {
      EXPECT_EQ(pairs[k].input, "state");
      EXPECT_EQ(pairs[k].output, "stateN");
      EXPECT_EQ(RegionText(pairs[k].region), k == 0 ? "[0, :, :]" : "[1, :, :]");
      EXPECT_THAT(pairs[k].axes, ElementsAre("batch", "hidden_size"));
      EXPECT_FALSE(pairs[k].optional) << "the authors' input has no default";
    }
    ExpectCheckedAndSettled(model, options, "the recorded regions match the graph");
  }
}

TEST(ExposedState, AllExposedModelAtOpset6IsRecordedWithoutNewOperators) {
  // Opset 6: Squeeze/Unsqueeze take attributes, LSTM is LSTM-1. No Expand exists yet, but none is needed.
  const std::string header = R"(<ir_version: 3, opset_import: ["" : 6]>
)";
  const std::string read = R"(
  hs = Gather <axis = 0> (state, zero)
  h0 = Unsqueeze <axes = [0]> (hs)
  cs = Gather <axis = 0> (state, one)
  c0 = Unsqueeze <axes = [0]> (cs)
)";
  const std::string write = R"(
  hq = Squeeze <axes = [0]> (Yh)
  cq = Squeeze <axes = [0]> (Yc)
  hu = Unsqueeze <axes = [0]> (hq)
  cu = Unsqueeze <axes = [0]> (cq)
  stateN = Concat <axis = 0> (hu, cu)
)";
  const onnx::ModelProto model = RewrittenMetadataOnly(PackedLstm(read, write, header));
  EXPECT_THAT(RecordedPairs(model), SizeIs(2));
  EXPECT_EQ(model.opset_import(0).version(), 6);

  // The same model with h and c swapped needs new inputs and outputs: refused at opset 6.
  std::string swapped = write;
  Replace(swapped, "(hu, cu)", "(cu, hu)");
  onnx::ModelProto needs_operators = ParseModel(PackedLstm(read, swapped, header));
  const std::string before = Bytes(needs_operators);
  try {
    RewriteModel(needs_operators, {}, /*strict=*/false);
    FAIL() << "a model needing new operators at opset 6 must be refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUnsupported);
    EXPECT_THAT(e.what(), HasSubstr("opset 6"));
  }
  EXPECT_EQ(Bytes(needs_operators), before);
}

TEST(ExposedState, StreamableOnlyLeavesABidirectionalNodeOutOfCheckAndRewrite) {
  // A forward GRU whose state is the graph's own input and output, and a bidirectional one without state.
  const std::string text = kHeader + std::string(R"(g (float[seq, batch, 2] X, float[1, batch, 3] h0, float[1, 9, 2] W,
     float[1, 9, 3] R, float[2, 9, 2] Wb, float[2, 9, 3] Rb) => (float[seq, 2, batch, 3] Yb, float[1, batch, 3] hn) {
  Y, hn = GRU <hidden_size = 3> (X, W, R, , , h0)
  Yb = GRU <hidden_size = 3, direction = "bidirectional"> (X, Wb, Rb)
})");
  Analyzed a(text);
  EXPECT_THAT(Kinds(a.Problems()), ElementsAre("not_exposed"));
  EXPECT_THAT(a.Problems(/*streamable_only=*/true), IsEmpty());

  const onnx::ModelProto original = ParseModel(text);
  onnx::ModelProto model = original;
  PlanOptions options;
  options.streamable_only = true;
  RewriteModel(model, options, /*strict=*/false);
  EXPECT_EQ(InputNames(model.graph()), InputNames(original.graph()));
  EXPECT_EQ(OutputNames(model.graph()), OutputNames(original.graph()));
  const std::vector<StatePair> pairs = RecordedPairs(model);
  ASSERT_THAT(pairs, SizeIs(1));
  EXPECT_EQ(pairs[0].input, "h0");
  // Its recurrence carries it, but the bidirectional node left out still reads the whole sequence: chunked
  // runs of the model differ (its output Yb), which the pair says.
  EXPECT_TRUE(pairs[0].carried);
  EXPECT_FALSE(pairs[0].streamable);
  // Without the option the bidirectional node gets its pair (and the graph a new input).
  onnx::ModelProto all = original;
  RewriteModel(all, {}, /*strict=*/false);
  EXPECT_THAT(RecordedPairs(all), SizeIs(2));
  EXPECT_GT(all.graph().input_size(), original.graph().input_size());
}

TEST(ExposedState, AnExposedStateThatCannotStreamIsSaidOnceWhenItsPairIsFirstRecorded) {
  // h in rows 0:2 and c in rows 2:4 of the authors' state [4, batch, 3], of a bidirectional LSTM: the
  // model changes only in its metadata. Before, that rewrite said nothing, while the same layer fed by
  // its own h0/c0 inputs got the warning.
  const std::string text = kHeader + std::string(R"(g (float[seq, batch, 2] X, float[4, batch, 3] state, float[2, 12, 2] W,
     float[2, 12, 3] R) => (float[seq, 2, batch, 3] Y, float[4, batch, 3] stateN) {
  zero = Constant <value = int64[1] {0}> ()
  two = Constant <value = int64[1] {2}> ()
  four = Constant <value = int64[1] {4}> ()
  h0 = Slice (state, zero, two, zero)
  c0 = Slice (state, two, four, zero)
  Y, hn, cn = LSTM <hidden_size = 3, direction = "bidirectional"> (X, W, R, , , h0, c0)
  stateN = Concat <axis = 0> (hn, cn)
})");
  Analyzed a(text);
  const Plan plan = a.PlanWith();
  ASSERT_THAT(plan.edits, SizeIs(2));
  EXPECT_FALSE(plan.edits[0].Changes());
  const auto not_streamable = [](const std::vector<std::string>& notes) {
    return std::count_if(notes.begin(), notes.end(),
                         [](const std::string& n) { return n.find("'state' is not streamable") != std::string::npos; });
  };
  EXPECT_EQ(not_streamable(plan.notes), 1);  // h and c share the input: one line
  onnx::ModelProto model = ParseModel(text);
  RewriteModel(model, {}, /*strict=*/false);
  ASSERT_THAT(RecordedPairs(model), SizeIs(2));
  const ModelIndex index(model);
  const Analysis again = Analyze(index);
  EXPECT_EQ(not_streamable(MakePlan(index, again, PlanOptions{}).notes), 0);  // said when it was recorded
}

}  // namespace
}  // namespace rnnstate::exposed_state_rewrite_test
