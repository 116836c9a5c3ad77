// States a model's authors already expose in their own tensors (docs/guide.md, "States the model already
// exposes"): one small hand-written model per form, following the exporters' operator chains
// (models/exposed/README.md), and one per negative control, each with a single defect. Each test reads
// what the analysis found (FindExposure through Analyze), what `check` says, what the planner records,
// or what `rewrite` does to the model.

#include "exposure/exposed_state.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "exposure/default_path.h"
#include "exposure/exposure.h"
#include "exposure_test_models.h"
#include "find/analysis.h"
#include "graph/model_index.h"
#include "pipeline_stages.h"
#include "rewrite/plan.h"
#include "rnnstate/json.h"
#include "rnnstate/metadata.h"
#include "test_models.h"
#include "test_names.h"
#include "views/check.h"

namespace rnnstate::exposed_state_test {
namespace {

using namespace test_names;

// ---------------------------------------------------------------------------------------------------
// Form 1: h and c of one LSTM in one tensor state [2, batch, 3] (Silero v5's chain).

TEST(ExposedState, HAndCPackedInOneTensorAreExposedAtTheirIndex) {
  Analyzed a(PackedLstm());
  const char* expected[] = {"region [0, :, :] of input 'state' -> region [0, :, :] of output 'stateN'",
                            "region [1, :, :] of input 'state' -> region [1, :, :] of output 'stateN'"};
  int k = 0;
  for (const char* kind : {"h", "c"}) {
    const StateAnalysis& state = a.State(0, kind);
    const Exposure& exposure = ExposureOf(state);
    EXPECT_TRUE(state.exposed) << kind;
    EXPECT_EQ(exposure.input, "state");
    EXPECT_EQ(exposure.output, "stateN");
    EXPECT_EQ(Region(exposure), k == 0 ? "[0, :, :]" : "[1, :, :]");
    EXPECT_THAT(exposure.axes, ElementsAre("batch", "hidden_size")) << "num_directions (size 1) is dropped";
    EXPECT_EQ(exposure.rows, std::nullopt) << "an index on axis 0 is not the rows form";
    EXPECT_EQ(ExposureText(exposure), expected[k]);
    EXPECT_EQ(state.finding.why_not, "");
    ++k;
  }
  EXPECT_THAT(a.Problems(), IsEmpty());
}

TEST(ExposedState, TraceReadAndTraceWriteFindTheSameElements) {
  Analyzed a(PackedLstm());
  const RecurrentState& c = a.State(0, "c").state;
  const ReadTrace read = TraceRead(*a.index, c);
  ASSERT_TRUE(read.place.has_value()) << read.broken;
  EXPECT_EQ(read.place->tensor, "state");
  EXPECT_EQ(read.place->map.offset(0), 1);
  EXPECT_TRUE(read.place->map.IsConstant(0));
  const WriteTrace write = TraceWrite(*a.index, c);
  ASSERT_THAT(write.places, SizeIs(1)) << write.broken;
  EXPECT_EQ(write.places[0].tensor, "stateN");
  EXPECT_TRUE(write.places[0].map.SamePlaces(read.place->map));
  EXPECT_FALSE(write.places[0].map.SamePlaces(TraceRead(*a.index, a.State(0, "h").state).place->map));
}

TEST(ExposedState, RowsOfAStackedTensorAreTheRowsForm) {
  Analyzed a(StackedGrus());
  for (int64_t layer = 0; layer < 2; ++layer) {
    const Exposure& exposure = ExposureOf(a.State(layer, "h"));
    EXPECT_EQ(exposure.rows, RowRange(layer, layer + 1));
    EXPECT_EQ(Region(exposure), layer == 0 ? "[0:1, :, :]" : "[1:2, :, :]");
    EXPECT_THAT(exposure.axes, ElementsAre("num_directions", "batch", "hidden_size"));
  }
  EXPECT_EQ(ExposureText(ExposureOf(a.State(1, "h"))),
            "rows [1:2] of input 'h0', axis 0 -> rows [1:2] of output 'h_n'");
}

// ---------------------------------------------------------------------------------------------------
// Form 2: states read inside If branches from outer scope; the authors' "empty means start from zeros".

TEST(ExposedState, StatesReadInsideIfBranchesFromOuterScopeAreExposed) {
  Analyzed a(BranchedLstm("flag", "fed"));
  ASSERT_EQ(a.analysis.nodes.size(), 2u);
  for (size_t node = 0; node < 2; ++node) {
    for (const char* kind : {"h", "c"}) {
      const Exposure& exposure = ExposureOf(a.State(node, kind));
      EXPECT_EQ(exposure.input, "state");
      EXPECT_EQ(exposure.output, "stateN");
      EXPECT_EQ(Region(exposure), kind == std::string("h") ? "[0, :, :]" : "[1, :, :]");
      EXPECT_EQ(exposure.default_path_of, "");
    }
  }
  // The two branches never run in the same call: their equal claims do not conflict.
  EXPECT_TRUE(Exclusive(a.State(0, "h").state, a.State(1, "h").state));
  EXPECT_FALSE(Exclusive(a.State(0, "h").state, a.State(0, "c").state));
  EXPECT_THAT(a.Problems(), IsEmpty());
}

TEST(ExposedState, ZeroStateBranchTakenWhenTheStateIsEmptyIsTheDefaultPath) {
  Analyzed a(BranchedLstm("empty", "zeros"));
  const size_t then = a.InBranch("then_branch"), other = a.InBranch("else_branch");
  const StateAnalysis& fed = a.State(other, "h");
  const StateAnalysis& zeros = a.State(then, "h");
  ASSERT_TRUE(zeros.origin.zero);
  const Exposure& exposure = ExposureOf(zeros);
  EXPECT_EQ(exposure.default_path_of, fed.state.Label());
  EXPECT_EQ(exposure.input, ExposureOf(fed).input);
  EXPECT_EQ(exposure.output, ExposureOf(fed).output);
  EXPECT_EQ(exposure.region, ExposureOf(fed).region);
  EXPECT_THAT(ExposureText(exposure), HasSubstr("(the default path of " + fed.state.Label() + ")"));
  EXPECT_EQ(ExposureOf(a.State(then, "c")).default_path_of, a.State(other, "c").state.Label());
  EXPECT_THAT(a.Problems(), IsEmpty());
  // Both get the same pair (the branches are exclusive: no duplicate for check either).
  Plan plan = a.PlanWith();
  ASSERT_THAT(plan.pairs, SizeIs(4));
  for (const StatePair& pair : plan.pairs) {
    EXPECT_EQ(pair.input, "state") << pair.node;
    EXPECT_EQ(pair.output, "stateN") << pair.node;
    EXPECT_EQ(RegionText(pair.region), pair.kind == "h" ? "[0, :, :]" : "[1, :, :]") << pair.node;
  }
}

TEST(ExposedState, PackedDefaultPathStatesPassCheckThroughTheirValue) {
  // Packed, `state` is a value inside the graph: the zero-state branch still reads nothing from it, and
  // is checked as the default path of the fed branch's pair of the same kind and region.
  onnx::ModelProto model = ParseModel(BranchedLstm("empty", "zeros"));
  PlanOptions options;
  options.pack = PackKind::kTensor;
  RewriteModel(model, options, /*strict=*/true);
  {
    const ModelIndex index(model);
    const Analysis analysis = Analyze(index);
    ASSERT_TRUE(analysis.packed.has_value());
    EXPECT_THAT(Kinds(CheckModel(index, analysis, false)), IsEmpty());
  }
  // The zero branch's h pair claiming c's region has no fed pair to be the default path of.
  for (auto& prop : *model.mutable_metadata_props()) {
    if (prop.key() != kMetadataKey) continue;
    Json doc = ParseJson(prop.value());
    for (Json& pair : doc["states"]) {
      const bool zero_h = pair["kind"] == "h" && pair["path"].dump().find("then_branch") != std::string::npos;
      if (zero_h) pair["region"] = Json::array({1, nullptr, nullptr});
    }
    prop.set_value(DumpJson(doc));
  }
  const ModelIndex index(model);
  const Analysis analysis = Analyze(index);
  EXPECT_THAT(Kinds(CheckModel(index, analysis, false)), Contains("input_not_wired"));
}

TEST(ExposedState, RunsOnlyWhenEmptyEvaluatesTheConditionOnTheStatesShape) {
  Analyzed a(BranchedLstm("empty", "zeros"));
  const GraphPath main;
  int select = -1;
  for (int i = 0; i < a.model.graph().node_size(); ++i) {
    if (a.model.graph().node(i).op_type() == "If") select = i;
  }
  ASSERT_GE(select, 0);
  const std::map<std::string, size_t> state_inputs{{"state", 1}};
  EXPECT_TRUE(RunsOnlyWhenEmpty(*a.index, main, select, "then_branch", state_inputs));
  EXPECT_FALSE(RunsOnlyWhenEmpty(*a.index, main, select, "else_branch", state_inputs));
  EXPECT_FALSE(RunsOnlyWhenEmpty(*a.index, main, select, "then_branch", {})) << "no state input: undecidable";
  EXPECT_FALSE(RunsOnlyWhenEmpty(*a.index, main, select, "then_branch", {{"state", 0}}))
      << "axis 0 (size 2) is never empty: the condition does not follow it";
}

TEST(ExposedState, ZeroStateBranchOnAnotherConditionIsNotADefaultPath) {
  // The zeros branch runs when `flag` says so, whatever the fed state: feeding stateN back would not stream.
  Analyzed a(BranchedLstm("flag", "zeros"));
  const size_t then = a.InBranch("then_branch"), other = a.InBranch("else_branch");
  EXPECT_TRUE(a.State(other, "h").exposed);
  EXPECT_FALSE(a.State(then, "h").exposure.has_value());
  EXPECT_FALSE(a.State(then, "h").exposed);
  EXPECT_THAT(Kinds(a.Problems()), ElementsAre("not_exposed", "not_exposed"));
}

// ---------------------------------------------------------------------------------------------------
// Form 3: several axes at once.

/// Two LSTM layers, state_in [batch, layer, hidden, h/c] (keras2onnx's `stack`, DTLN): layer l's h is
/// Unsqueeze(Squeeze(Slice(state_in, [0, l, 0, k] .. [MAX, l+1, MAX, k+1]), [1, 3])), written back by
/// Concat(-1) of Unsqueeze(-1)(Concat(1) of Unsqueeze(1)(Squeeze(0)(Y_h))).
std::string KerasStack() {
  std::string text =
      kHeader + std::string(R"(g (float[seq, batch, 2] X, float[batch, 2, 3, 2] state_in, float[1, 12, 2] W0,
     float[1, 12, 3] R0, float[1, 12, 3] W1, float[1, 12, 3] R1) => (float[seq, 1, batch, 3] Y1, float[batch, 2, 3, 2] state_out) {
  all = Constant <value = int64[4] {0, 1, 2, 3}> ()
  steps = Constant <value = int64[4] {1, 1, 1, 1}> ()
  inner = Constant <value = int64[2] {1, 3}> ()
  u0 = Constant <value = int64[1] {0}> ()
  u1 = Constant <value = int64[1] {1}> ()
  ulast = Constant <value = int64[1] {-1}> ()
)");
  const char* kinds[] = {"h", "c"};
  for (int l = 0; l < 2; ++l) {
    for (int k = 0; k < 2; ++k) {
      const std::string s = std::string(kinds[k]) + std::to_string(l), L = std::to_string(l), K = std::to_string(k);
      text += "  s_" + s + " = Constant <value = int64[4] {0, " + L + ", 0, " + K + "}> ()\n";
      text += "  e_" + s + " = Constant <value = int64[4] {9223372036854775807, " + std::to_string(l + 1) +
              ", 9223372036854775807, " + std::to_string(k + 1) + "}> ()\n";
      text += "  p_" + s + " = Slice (state_in, s_" + s + ", e_" + s + ", all, steps)\n";
      text += "  q_" + s + " = Squeeze (p_" + s + ", inner)\n";
      text += "  " + s + "_0 = Unsqueeze (q_" + s + ", u0)\n";
    }
  }
  text += R"(
  Y0, Yh0, Yc0 = LSTM <hidden_size = 3> (X, W0, R0, , , h0_0, c0_0)
  X1 = Squeeze (Y0, u1)
  Y1, Yh1, Yc1 = LSTM <hidden_size = 3> (X1, W1, R1, , , h1_0, c1_0)
)";
  for (const char* k : {"h", "c"}) {
    const std::string K(k);
    for (const char* l : {"0", "1"}) {
      text += "  a" + K + l + " = Squeeze (Y" + K + l + ", u0)\n";
      text += "  b" + K + l + " = Unsqueeze (a" + K + l + ", u1)\n";
    }
    text += "  s" + K + " = Concat <axis = 1> (b" + K + "0, b" + K + "1)\n";
    text += "  t" + K + " = Unsqueeze (s" + K + ", ulast)\n";
  }
  return text + "  state_out = Concat <axis = -1> (th, tc)\n}";
}

TEST(ExposedState, SeveralAxesAtOnceKerasStack) {
  Analyzed a(KerasStack());
  const char* regions[2][2] = {{"[:, 0, :, 0]", "[:, 0, :, 1]"}, {"[:, 1, :, 0]", "[:, 1, :, 1]"}};
  for (size_t layer = 0; layer < 2; ++layer) {
    for (int k = 0; k < 2; ++k) {
      const Exposure& exposure = ExposureOf(a.State(layer, k == 0 ? "h" : "c"));
      EXPECT_EQ(exposure.input, "state_in");
      EXPECT_EQ(exposure.output, "state_out");
      EXPECT_EQ(Region(exposure), regions[layer][k]);
      EXPECT_THAT(exposure.axes, ElementsAre("batch", "hidden_size"));
    }
  }
  EXPECT_THAT(a.Problems(), IsEmpty());
}

TEST(ExposedState, PlannedPairDescribesTheAuthorsTensorWithItsOwnBatchAxis) {
  // Regression: the pair's batch_axis was the state's (1), not state_in's (0).
  Analyzed a(KerasStack());
  Plan plan = a.PlanWith();
  ASSERT_THAT(plan.pairs, SizeIs(4));
  const std::vector<MetaDim> declared{{-1, "batch"}, {2, ""}, {3, ""}, {2, ""}};
  for (const StatePair& pair : plan.pairs) {
    EXPECT_EQ(pair.batch_axis, 0) << pair.node << " " << pair.kind;
    EXPECT_EQ(pair.shape, declared) << pair.node << " " << pair.kind;
    EXPECT_EQ(pair.rows, std::nullopt);
    EXPECT_THAT(pair.axes, ElementsAre("batch", "hidden_size"));
  }
  for (const StateEdit& edit : plan.edits) {
    EXPECT_FALSE(edit.Changes()) << edit.owner_name << " " << edit.kind;
  }
  // Form 1 ([2, batch, 3]): the batch is axis 1 of the authors' tensor.
  Plan packed = Analyzed(PackedLstm()).PlanWith();
  ASSERT_THAT(packed.pairs, SizeIs(2));
  EXPECT_EQ(packed.pairs[0].batch_axis, 1);
  EXPECT_EQ(packed.pairs[0].shape, (std::vector<MetaDim>{{2, ""}, {-1, "batch"}, {3, ""}}));
}

/// Two LSTM layers (hidden 4) in a flat state [batch, 16] = [batch, h/c, layer, hidden]:
/// Transpose(Reshape(state, [-1, 2, 2, 4]), [1, 2, 0, 3]), Gather h/c, Slice the layer; back through
/// Transpose and Reshape [-1, 16].
const char* kFlatState = R"(g (float[seq, batch, 2] X, float[batch, 16] state, float[1, 16, 2] W0, float[1, 16, 4] R0,
     float[1, 16, 4] W1, float[1, 16, 4] R1) => (float[seq, 1, batch, 4] Y1, float[batch, 16] stateN) {
  zero = Constant <value = int64 {0}> ()
  one = Constant <value = int64 {1}> ()
  z1 = Constant <value = int64[1] {0}> ()
  o1 = Constant <value = int64[1] {1}> ()
  t1 = Constant <value = int64[1] {2}> ()
  split = Constant <value = int64[4] {-1, 2, 2, 4}> ()
  r = Reshape (state, split)
  t = Transpose <perm = [1, 2, 0, 3]> (r)
  hh = Gather <axis = 0> (t, zero)
  cc = Gather <axis = 0> (t, one)
  h0_0 = Slice (hh, z1, o1, z1)
  h0_1 = Slice (hh, o1, t1, z1)
  c0_0 = Slice (cc, z1, o1, z1)
  c0_1 = Slice (cc, o1, t1, z1)
  Y0, Yh0, Yc0 = LSTM <hidden_size = 4> (X, W0, R0, , , h0_0, c0_0)
  X1 = Squeeze (Y0, o1)
  Y1, Yh1, Yc1 = LSTM <hidden_size = 4> (X1, W1, R1, , , h0_1, c0_1)
  h_n = Concat <axis = 0> (Yh0, Yh1)
  c_n = Concat <axis = 0> (Yc0, Yc1)
  hu = Unsqueeze (h_n, z1)
  cu = Unsqueeze (c_n, z1)
  s = Concat <axis = 0> (hu, cu)
  st = Transpose <perm = [2, 0, 1, 3]> (s)
  flat = Constant <value = int64[2] {-1, 16}> ()
  stateN = Reshape (st, flat)
})";

TEST(ExposedState, FlattenedByReshapeAndTransposeIsARangeOnTheLastAxis) {
  Analyzed a(kHeader + std::string(kFlatState));
  // Column 8k + 4l: h/c k, layer l.
  EXPECT_EQ(Region(ExposureOf(a.State(0, "h"))), "[:, 0:4]");
  EXPECT_EQ(Region(ExposureOf(a.State(1, "h"))), "[:, 4:8]");
  EXPECT_EQ(Region(ExposureOf(a.State(0, "c"))), "[:, 8:12]");
  EXPECT_EQ(Region(ExposureOf(a.State(1, "c"))), "[:, 12:16]");
  EXPECT_THAT(ExposureOf(a.State(1, "c")).axes, ElementsAre("batch", "hidden_size"));
  EXPECT_EQ(ExposureOf(a.State(1, "c")).rows, std::nullopt) << "a range on the last axis is not rows";
  Plan plan = a.PlanWith();
  ASSERT_THAT(plan.pairs, SizeIs(4));
  EXPECT_EQ(plan.pairs[0].batch_axis, 0);
  EXPECT_EQ(plan.pairs[0].shape, (std::vector<MetaDim>{{-1, "batch"}, {16, ""}}));
}

TEST(ExposedState, ReshapeMixingTheBatchWithAnotherAxisIsNotProvable) {
  // state [6, batch] read as [2, batch, 3]: row-major, batch rows interleave with the hidden axis.
  std::string text = PackedLstm();
  Replace(text, "float[2, batch, 3] state,", "float[6, batch] state,");
  Replace(text, "hs = Gather <axis = 0> (state, zero)", R"(mixed_shape = Constant <value = int64[3] {2, -1, 3}> ()
  mixed = Reshape (state, mixed_shape)
  hs = Gather <axis = 0> (mixed, zero))");
  Replace(text, "cs = Gather <axis = 0> (state, one)", "cs = Gather <axis = 0> (mixed, one)");
  Analyzed a(text);
  for (const char* kind : {"h", "c"}) {
    const StateAnalysis& state = a.State(0, kind);
    EXPECT_FALSE(state.exposed) << kind;
    EXPECT_THAT(state.finding.why_not, HasSubstr("its initial value is not a view of a graph input"));
    EXPECT_THAT(state.finding.why_not, HasSubstr("Reshape"));
    EXPECT_THAT(state.finding.why_not, HasSubstr("not a split or merge of axes"));
  }
}

}  // namespace
}  // namespace rnnstate::exposed_state_test
