// `rnnstate check`: models built as ONNX text, rewritten by the library, then edited the way a later
// tool or a hand edit might break them; one test per problem kind, plus the walk across subgraphs.

#include "views/check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>

#include "find/analysis.h"
#include "graph/model_index.h"
#include "loop_text.h"
#include "pipeline_stages.h"
#include "rnnstate/metadata.h"
#include "test_models.h"
#include "test_names.h"
#include "time/stream_verdict.h"

namespace rnnstate::check_test {
namespace {

using namespace test_names;

/// Two GRUs over the same X, without initial states: unnamed, they become GRU_0 and GRU_1.
const char* kTwoGrus = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, batch, 3] A, float[seq, 1, batch, 3] B) {
  A = GRU <hidden_size = 3> (X, W, R)
  B = GRU <hidden_size = 3> (X, W, R)
})";

/// An LSTM inside a Loop body whose state the Loop carries from step to step.
const std::string kLoopLstm =
    R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, 2] context, int64 steps, float[1, 12, 2] W, float[1, 12, 3] R) => (float[1, batch, 3] h_n, float[1, batch, 3] c_n) {
)" + LoopLstmOverContextText();

/// A GRU stepping inside a Scan body; the Scan carries h.
const char* kScanGru = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] x, float[1, batch, 3] h0, float[1, 9, 2] W, float[1, 9, 3] R) => (float[1, batch, 3] h_n, float[seq, batch, 3] ys) {
  h_n, ys = Scan <num_scan_inputs = 1, body = body (float[1, batch, 3] h_prev, float[batch, 2] x_t)
      => (float[1, batch, 3] h_next, float[batch, 3] y_t) {
    axes = Constant <value = int64[1] {0}> ()
    x1 = Unsqueeze (x_t, axes)
    Y, h_next = GRU <hidden_size = 3> (x1, W, R, , , h_prev)
    y_t = Squeeze (h_next, axes)
  }> (h0, x)
})";

onnx::ModelProto Rewritten(const std::string& text, StateInputMode mode = StateInputMode::kDefaults) {
  onnx::ModelProto model = ParseModel(text);
  PlanOptions options;
  options.mode = mode;
  RewriteModel(model, options, /*strict=*/false);
  return model;
}

std::vector<CheckProblem> Problems(const onnx::ModelProto& model) {
  ModelIndex index(model);
  Analysis analysis = Analyze(index);
  JudgeStream(index, analysis);  // as every command: the whole model's verdict
  return CheckModel(index, analysis);
}

std::vector<std::string> Kinds(const onnx::ModelProto& model) {
  std::vector<std::string> kinds;
  for (const auto& problem : Problems(model)) kinds.push_back(CheckProblemKindName(problem.kind));
  return kinds;
}

std::vector<StatePair> Pairs(const onnx::ModelProto& model) {
  std::string error;
  return ReadStatePairs(model, &error);
}

/// Edits the recorded pairs with `edit` and writes them back.
template <typename Edit>
void EditPairs(onnx::ModelProto& model, Edit edit) {
  std::vector<StatePair> pairs = Pairs(model);
  edit(pairs);
  WriteStatePairs(model, pairs);
}

void RemoveValueInfo(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& list, const std::string& name) {
  for (int i = 0; i < list.size(); ++i) {
    if (list.Get(i).name() == name) {
      list.erase(list.begin() + i);
      return;
    }
  }
  throw std::runtime_error("no value " + name);
}

TEST(Check, OriginalModelFailsForEveryUnexposedState) {
  onnx::ModelProto model = ParseModel(kLstm);
  EXPECT_THAT(Kinds(model), ElementsAre("not_exposed", "not_exposed"));
  EXPECT_THAT(Problems(model)[1].message, ::testing::HasSubstr("state c is not exposed"));
}

TEST(Check, ModelWithoutRecurrentNodesPasses) {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[2] x) => (float[2] y) { y = Relu (x) })");
  EXPECT_THAT(Kinds(model), IsEmpty());
}

TEST(Check, RewrittenModelsPass) {
  EXPECT_THAT(Kinds(Rewritten(kTwoGrus)), IsEmpty());
  EXPECT_THAT(Kinds(Rewritten(kLstm)), IsEmpty());
  EXPECT_THAT(Kinds(Rewritten(kLstm, StateInputMode::kRequired)), IsEmpty());
  EXPECT_THAT(Kinds(Rewritten(kReverseGru)), IsEmpty());
}

/// A streaming model's own state (`cache` -> `cache_out`, rows of a cache) beside a bidirectional GRU
/// that starts from zeros on every call (GTCRN's GRU over frequency inside a frame).
const char* kAuthorsStateBesideIntraFrameGru = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, 1, 2] X, float[2, 1, 3] cache, float[1, 9, 2] W, float[1, 9, 3] R, float[2, 9, 2] Wb, float[2, 9, 3] Rb)
    => (float[seq, 1, 1, 3] Y, float[2, 1, 3] cache_out, float[seq, 2, 1, 3] Z) {
  zero = Constant <value = int64[1] {0}> ()
  one = Constant <value = int64[1] {1}> ()
  two = Constant <value = int64[1] {2}> ()
  h0 = Slice (cache, zero, one, zero)
  kept = Slice (cache, one, two, zero)
  Y, h_n = GRU <hidden_size = 3> (X, W, R, , , h0)
  cache_out = Concat <axis = 0> (h_n, kept)
  Z = GRU <hidden_size = 3, direction = "bidirectional"> (X, Wb, Rb)
})";

TEST(Check, AStateThatRunsWithinOneCallBesideTheAuthorsStatePasses) {
  onnx::ModelProto model = ParseModel(kAuthorsStateBesideIntraFrameGru);
  ModelIndex index(model);
  const Analysis analysis = Analyze(index);
  ASSERT_EQ(analysis.states.size(), 2u);  // the GRUs' h (both directions in one tensor)
  EXPECT_TRUE(analysis.states[0].exposed);
  EXPECT_THAT(analysis.states[1].within_call, ::testing::HasSubstr("runs within one call"));
  EXPECT_THAT(Kinds(model), IsEmpty());
  // The rewrite leaves it too (no input added), and its output passes.
  const onnx::ModelProto rewritten = Rewritten(kAuthorsStateBesideIntraFrameGru);
  EXPECT_EQ(rewritten.graph().input_size(), model.graph().input_size());
  EXPECT_THAT(Kinds(rewritten), IsEmpty());
  // Packed, the authors' state is known by the region its recorded pair keeps: still left, still passing.
  for (PackKind pack : {PackKind::kTensor, PackKind::kSequence}) {
    onnx::ModelProto packed = ParseModel(kAuthorsStateBesideIntraFrameGru);
    PlanOptions options;
    options.pack = pack;
    RewriteModel(packed, options, /*strict=*/false);
    ModelIndex packed_index(packed);
    const Analysis packed_analysis = Analyze(packed_index);
    ASSERT_EQ(packed_analysis.states.size(), 2u);
    EXPECT_THAT(packed_analysis.states[1].within_call, ::testing::HasSubstr("runs within one call"));
    EXPECT_THAT(Kinds(packed), IsEmpty());
  }
}

TEST(Check, WithoutTheAuthorsStateABidirectionalGruIsNotLeftWithinOneCall) {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, 1, 2] X, float[2, 9, 2] Wb, float[2, 9, 3] Rb) => (float[seq, 2, 1, 3] Z) {
  Z = GRU <hidden_size = 3, direction = "bidirectional"> (X, Wb, Rb)
})");
  EXPECT_THAT(Kinds(model), ElementsAre("not_exposed"));
}

TEST(Check, StateCarriedByALoopIsTracedThroughTheLoop) {
  onnx::ModelProto model = Rewritten(kLoopLstm);
  ASSERT_EQ(Pairs(model).size(), 2u);
  EXPECT_THAT(Kinds(model), IsEmpty());
}

TEST(Check, StateCarriedByAScanIsTracedThroughTheScan) {
  onnx::ModelProto model = Rewritten(kScanGru);
  ASSERT_EQ(Pairs(model).size(), 1u);
  EXPECT_THAT(Kinds(model), IsEmpty());
}

TEST(Check, SwappedLoopOutputsAreNotComputedFromTheirStates) {
  onnx::ModelProto model = Rewritten(kLoopLstm);
  EditPairs(model, [](std::vector<StatePair>& pairs) { std::swap(pairs[0].output, pairs[1].output); });
  EXPECT_THAT(Kinds(model), ElementsAre("output_not_wired", "output_not_wired"));
}

TEST(Check, MalformedMetadata) {
  onnx::ModelProto model = Rewritten(kTwoGrus);
  model.mutable_metadata_props(0)->set_value(R"({"version":1,"states":[{"input":"x"}]})");
  EXPECT_THAT(Kinds(model), Contains("bad_metadata"));
}

TEST(Check, PairNamingARenamedNode) {
  onnx::ModelProto model = Rewritten(kTwoGrus);
  NodeOfType(*model.mutable_graph(), "GRU", 1).set_name("renamed");
  std::vector<CheckProblem> problems = Problems(model);
  EXPECT_THAT(Kinds(model), ElementsAre("no_such_node"));
  // The renamed node's state lost its pair, but the graph itself still streams it: its input (through the
  // Expand of its default) feeds the slot whole, and its output is the final state whole.
  EXPECT_THAT(Kinds(model), Not(Contains("not_exposed")));
}

TEST(Check, PairNamingAStateTheNodeDoesNotHave) {
  onnx::ModelProto model = Rewritten(kTwoGrus);
  EditPairs(model, [](std::vector<StatePair>& pairs) { pairs[1].kind = "c"; });
  EXPECT_THAT(Kinds(model), ElementsAre("no_such_state"));  // the state itself is still exposed by the graph
}

TEST(Check, UnknownKindIsReadAndReportedAsNoSuchState) {
  // Readers accept any kind (a newer writer may add kinds); check says the node has no such state.
  onnx::ModelProto model = Rewritten(kTwoGrus);
  EditPairs(model, [](std::vector<StatePair>& pairs) {
    pairs[1].kind = "state";
    pairs[1].variable = "h_prev";
  });
  EXPECT_EQ(Pairs(model)[1].variable, "h_prev");  // written and read back
  // The state itself is still exposed by the graph (its input feeds the slot, its output is the final state).
  EXPECT_THAT(Kinds(model), ElementsAre("no_such_state"));
  EXPECT_THAT(Problems(model)[0].message, ::testing::HasSubstr("has no state 'state' carried as 'h_prev'"));
}

TEST(Check, PairInputThatIsNoLongerAGraphInput) {
  onnx::ModelProto model = Rewritten(kTwoGrus);
  RemoveValueInfo(*model.mutable_graph()->mutable_input(), Pairs(model)[0].input);
  EXPECT_THAT(Kinds(model), ElementsAre("not_a_graph_input"));
}

TEST(Check, PairOutputThatIsNoLongerAGraphOutput) {
  onnx::ModelProto model = Rewritten(kTwoGrus);
  RemoveValueInfo(*model.mutable_graph()->mutable_output(), Pairs(model)[1].output);
  EXPECT_THAT(Kinds(model), ElementsAre("not_a_graph_output"));
}

TEST(Check, PairInputDisconnectedFromTheSlot) {
  onnx::ModelProto model = Rewritten(kTwoGrus);
  NodeOfType(*model.mutable_graph(), "GRU", 0).set_input(5, "");
  EXPECT_THAT(Kinds(model), ElementsAre("input_not_wired"));
}

TEST(Check, SwappedPairInputs) {
  onnx::ModelProto model = Rewritten(kTwoGrus);
  EditPairs(model, [](std::vector<StatePair>& pairs) { std::swap(pairs[0].input, pairs[1].input); });
  EXPECT_THAT(Kinds(model), ElementsAre("input_not_wired", "input_not_wired"));
}

TEST(Check, SwappedPairOutputs) {
  onnx::ModelProto model = Rewritten(kTwoGrus);
  EditPairs(model, [](std::vector<StatePair>& pairs) { std::swap(pairs[0].output, pairs[1].output); });
  EXPECT_THAT(Kinds(model), ElementsAre("output_not_wired", "output_not_wired"));
}

TEST(Check, OutputFedBySomethingElse) {
  onnx::ModelProto model = Rewritten(kTwoGrus);
  // The state output now comes from X instead of the GRU's Y_h.
  onnx::GraphProto& graph = *model.mutable_graph();
  std::string output = Pairs(model)[0].output;
  NodeOfType(graph, "GRU", 0).set_output(1, "detached");
  onnx::NodeProto* identity = graph.add_node();
  identity->set_op_type("Identity");
  identity->add_input("X");
  identity->add_output(output);
  EXPECT_THAT(Kinds(model), ElementsAre("output_not_wired"));
}

TEST(Check, OptionalFlagThatContradictsTheGraph) {
  onnx::ModelProto model = Rewritten(kLstm, StateInputMode::kRequired);
  EditPairs(model, [](std::vector<StatePair>& pairs) { pairs[0].optional = true; });
  EXPECT_THAT(Kinds(model), ElementsAre("flag_mismatch"));
}

TEST(Check, StreamableFlagThatContradictsTheNode) {
  onnx::ModelProto model = Rewritten(kReverseGru);
  EditPairs(model, [](std::vector<StatePair>& pairs) { pairs[0].streamable = true; });
  EXPECT_THAT(Kinds(model), ElementsAre("flag_mismatch"));
}

TEST(Check, DuplicateInputs) {
  onnx::ModelProto model = Rewritten(kTwoGrus);
  EditPairs(model, [](std::vector<StatePair>& pairs) { pairs[1].input = pairs[0].input; });
  EXPECT_THAT(Kinds(model), ElementsAre("input_not_wired", "duplicate_input"));
}

TEST(Check, DuplicateOutputs) {
  onnx::ModelProto model = Rewritten(kTwoGrus);
  EditPairs(model, [](std::vector<StatePair>& pairs) { pairs[1].output = pairs[0].output; });
  EXPECT_THAT(Kinds(model), ElementsAre("output_not_wired", "duplicate_output"));
}

TEST(Check, StateRecordedTwice) {
  onnx::ModelProto model = Rewritten(kTwoGrus);
  EditPairs(model, [](std::vector<StatePair>& pairs) { pairs.push_back(pairs[0]); });
  EXPECT_THAT(Kinds(model), ElementsAre("duplicate_input", "duplicate_output", "duplicate_state"));
}

// ---------------------------------------------------------------------------------------------------
// States exposed stacked, as PyTorch exports a 2-layer LSTM called with (h0, c0).

/// A 2-layer LSTM whose layers take rows of h0/c0 and whose final states are concatenated into h_n/c_n.
/// `h_parts` is the Concat's input list for h_n; `extra` adds nodes (and `extra_outputs` outputs).
std::string StackedLstm(const std::string& h_parts = "Yh0, Yh1", const std::string& extra = "",
                        const std::string& extra_outputs = "") {
  return R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[2, batch, 3] h0, float[2, batch, 3] c0, float[1, 12, 2] W0, float[1, 12, 3] R0,
   float[1, 12, 3] W1, float[1, 12, 3] R1) => (float[seq, 1, batch, 3] Y1, float[2, batch, 3] h_n, float[2, batch, 3] c_n)" +
         extra_outputs + R"() {
  zero = Constant <value = int64[1] {0}> ()
  one = Constant <value = int64[1] {1}> ()
  two = Constant <value = int64[1] {2}> ()
  h0_0 = Slice (h0, zero, one, zero)
  c0_0 = Slice (c0, zero, one, zero)
  h0_1 = Slice (h0, one, two, zero)
  c0_1 = Slice (c0, one, two, zero)
  Y0, Yh0, Yc0 = LSTM <hidden_size = 3> (X, W0, R0, , , h0_0, c0_0)
  X1 = Squeeze (Y0, one)
  Y1, Yh1, Yc1 = LSTM <hidden_size = 3> (X1, W1, R1, , , h0_1, c0_1)
  h_n = Concat <axis = 0> ()" + h_parts + R"()
  c_n = Concat <axis = 0> (Yc0, Yc1)
)" + extra + "}";
}

TEST(Check, StatesExposedStackedPassWithoutMetadata) {
  onnx::ModelProto model = ParseModel(StackedLstm());
  EXPECT_THAT(Problems(model), IsEmpty());
  ModelIndex index(model);
  Analysis analysis = Analyze(index);
  ASSERT_EQ(analysis.nodes.size(), 2u);
  for (int layer = 0; layer < 2; ++layer) {
    for (const StateAnalysis* state : analysis.StatesOf(layer)) {
      ASSERT_TRUE(state->exposure.has_value()) << layer;
      EXPECT_EQ(state->exposure->input, state->state.kind == StateKind::kHidden ? "h0" : "c0");
      EXPECT_EQ(state->exposure->output, state->state.kind == StateKind::kHidden ? "h_n" : "c_n");
      EXPECT_EQ(*state->exposure->rows, RowRange(layer, layer + 1));
    }
  }
}

TEST(Check, StackedRowsThatDoNotMatchAreNotExposed) {
  // h_n holds layer 1's state in row 0: feeding it back as h0 would start each layer from the other's.
  EXPECT_THAT(Kinds(ParseModel(StackedLstm("Yh1, Yh0"))), ElementsAre("not_exposed", "not_exposed"));
}

TEST(Check, StackedInputWithAnotherUseIsStillExposed) {
  // What else reads h0 is the authors' business: fed back h_n, every layer still starts where it ended.
  EXPECT_THAT(Kinds(ParseModel(StackedLstm("Yh0, Yh1", "  h0_copy = Identity (h0)\n", ", float[2, batch, 3] h0_copy"))),
              IsEmpty());
}

TEST(Check, StatesTakingTheSameStackedRowsAreNotExposed) {
  // Both layers start from h0[0:1], and each final state is row 0 of some output (h_n for layer 0,
  // h_swapped for layer 1): h0 cannot be fed from both, so neither h is exposed.
  std::string text = StackedLstm("Yh0, Yh1", "  h_swapped = Concat <axis = 0> (Yh1, Yh0)\n", ", float[2, batch, 3] h_swapped");
  const std::string from = "h0_1 = Slice (h0, one, two, zero)", to = "h0_1 = Slice (h0, zero, one, zero)";
  text.replace(text.find(from), from.size(), to);
  EXPECT_THAT(Kinds(ParseModel(text)), ElementsAre("not_exposed", "not_exposed"));
}

TEST(Check, OneStackedInputPairedWithTwoOutputsIsNotExposed) {
  // h0 feeds both layers, but layer 1's final state is row 1 of another output than layer 0's: a runner
  // would have two tensors to feed h0 from.
  std::string text = StackedLstm("Yh0, Yh0", "  h_other = Concat <axis = 0> (Yh1, Yh1)\n", ", float[2, batch, 3] h_other");
  EXPECT_THAT(Kinds(ParseModel(text)), ElementsAre("not_exposed", "not_exposed"));
}

TEST(Check, OfTwoOutputsTheOneAllStatesOfAnInputLandInIsChosen) {
  // Layer 0 lands in rows 0 of h_n and of h_other, layer 1 only in h_other: h_other is the output to feed.
  std::string text = StackedLstm("Yh0, Yh0", "  h_other = Concat <axis = 0> (Yh0, Yh1)\n", ", float[2, batch, 3] h_other");
  onnx::ModelProto model = ParseModel(text);
  EXPECT_THAT(Kinds(model), IsEmpty());
  ModelIndex index(model);
  Analysis analysis = Analyze(index);
  for (const auto& state : analysis.states) {
    if (state.state.kind != StateKind::kHidden) continue;
    ASSERT_TRUE(state.exposure.has_value());
    EXPECT_EQ(state.exposure->output, "h_other");
  }
}

TEST(Check, AStateWhoseRowsAnotherLayerReadsIsNotExposed) {
  // Layer 1 reads h0[0:1] but ends in h_n[1:2]: it is not exposed. Layer 0 (h0[0:1] -> h_n[0:1]) is not
  // either: fed back h_n, layer 1 would start from layer 0's final state (the rows overlap).
  std::string text = StackedLstm();
  const std::string from = "h0_1 = Slice (h0, one, two, zero)", to = "h0_1 = Slice (h0, zero, one, zero)";
  text.replace(text.find(from), from.size(), to);
  std::vector<CheckProblem> problems = Problems(ParseModel(text));
  ASSERT_EQ(problems.size(), 2u);
  for (const auto& problem : problems) EXPECT_THAT(problem.message, ::testing::HasSubstr("state h is not exposed"));
}

TEST(Check, SliceWithoutDataIsNotAStackedState) {
  // Malformed (found by reading, not by a crash): an opset-9 Slice with its bounds but no data input.
  onnx::ModelProto model = ParseModel(R"(<ir_version: 7, opset_import: ["" : 9]>
g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, batch, 3] Y, float[1, batch, 3] h_n) {
  h = Slice <starts = [0], ends = [1], axes = [0]> ()
  Y, Yh = GRU <hidden_size = 3> (X, W, R, , , h)
  h_n = Concat <axis = 0> (Yh)
})");
  EXPECT_THAT(Kinds(model), ElementsAre("not_exposed"));
}

TEST(Check, StackedStatesOfOpset9SliceAttributesPass) {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 7, opset_import: ["" : 9]>
g (float[seq, batch, 2] X, float[2, batch, 3] h0, float[1, 9, 2] W0, float[1, 9, 3] R0, float[1, 9, 3] W1,
   float[1, 9, 3] R1) => (float[seq, 1, batch, 3] Y1, float[2, batch, 3] h_n) {
  h0_0 = Slice <starts = [0], ends = [1], axes = [0]> (h0)
  h0_1 = Slice <starts = [1], ends = [2], axes = [0]> (h0)
  Y0, Yh0 = GRU <hidden_size = 3> (X, W0, R0, , , h0_0)
  X1 = Squeeze <axes = [1]> (Y0)
  Y1, Yh1 = GRU <hidden_size = 3> (X1, W1, R1, , , h0_1)
  h_n = Concat <axis = 0> (Yh0, Yh1)
})");
  EXPECT_THAT(Problems(model), IsEmpty());
}

TEST(Check, RewriteRecordsStackedStatesWithRowsAndChangesNothingElse) {
  for (StateInputMode mode : {StateInputMode::kDefaults, StateInputMode::kRequired}) {
    onnx::ModelProto original = ParseModel(StackedLstm());
    onnx::ModelProto model = original;
    PlanOptions options;
    options.mode = mode;
    RewriteOutcome outcome = RewriteModel(model, options, /*strict=*/false);
    EXPECT_TRUE(outcome.plan.skipped.empty());
    // Only the metadata is new: the graph is the one PyTorch wrote.
    EXPECT_EQ(model.graph().SerializeAsString(), original.graph().SerializeAsString());
    std::vector<StatePair> pairs = Pairs(model);
    ASSERT_EQ(pairs.size(), 4u);
    for (const auto& pair : pairs) {
      ASSERT_TRUE(pair.rows.has_value()) << pair.node;
      EXPECT_EQ(pair.input, pair.kind == "h" ? "h0" : "c0");
      EXPECT_EQ(pair.output, pair.kind == "h" ? "h_n" : "c_n");
      EXPECT_FALSE(pair.optional);
    }
    EXPECT_EQ(pairs[0].rows, std::make_pair(int64_t{0}, int64_t{1}));
    EXPECT_EQ(pairs[2].rows, std::make_pair(int64_t{1}, int64_t{2}));
    EXPECT_THAT(Problems(model), IsEmpty());
    // A second run changes nothing.
    onnx::ModelProto again = model;
    EXPECT_FALSE(RewriteModel(again, options, /*strict=*/false).changed);
    EXPECT_EQ(again.SerializeAsString(), model.SerializeAsString());
  }
}

/// The rewritten stacked model with its metadata value edited by `edit`.
onnx::ModelProto StackedWithMetadata(const std::function<void(std::string&)>& edit) {
  onnx::ModelProto model = ParseModel(StackedLstm());
  RewriteModel(model, PlanOptions{}, /*strict=*/false);
  std::string value = model.metadata_props(0).value();
  edit(value);
  model.mutable_metadata_props(0)->set_value(value);
  return model;
}

void Replace(std::string& text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from << " in " << text;
  text.replace(at, from.size(), to);
}

TEST(Check, StackedPairWithTheWrongRowsIsNotWired) {
  // Layer 0's h pair claims layer 1's rows (which then overlap layer 1's own).
  onnx::ModelProto model = StackedWithMetadata([](std::string& v) { Replace(v, R"("rows":[0,1])", R"("rows":[1,2])"); });
  EXPECT_THAT(Kinds(model), ElementsAre("input_not_wired", "duplicate_input", "duplicate_output"));
}

TEST(Check, StackedTensorSharedWithAWholeTensorPairIsADuplicate) {
  // Layer 0's h pair loses its rows and region: it now claims all of h0 while layer 1 claims rows of it.
  onnx::ModelProto model = StackedWithMetadata([](std::string& v) {
    Replace(v, R"(,"rows":[0,1],"region":[[0,1],null,null],"axes":["num_directions","batch","hidden_size"])", "");
  });
  EXPECT_THAT(Kinds(model), Contains("duplicate_input"));
  EXPECT_THAT(Kinds(model), Contains("duplicate_output"));
}

TEST(Check, StackedPairsOfOneInputWithDifferentOutputsAreDuplicates) {
  // Layer 1's h pair names another (existing) output with the right rows.
  onnx::ModelProto model = StackedWithMetadata([](std::string& v) {
    Replace(v, R"({"input":"h0","output":"h_n","node":"LSTM_9")", R"({"input":"h0","output":"c_n","node":"LSTM_9")");
  });
  EXPECT_THAT(Kinds(model), Contains("duplicate_input"));
}

TEST(Check, MalformedRowsAreBadMetadata) {
  for (const char* rows : {R"("rows":[1,1])", R"("rows":[-1,1])", R"("rows":[0])", R"("rows":"0:1")"}) {
    onnx::ModelProto model = StackedWithMetadata([&](std::string& v) { Replace(v, R"("rows":[0,1])", rows); });
    EXPECT_THAT(Kinds(model), Contains("bad_metadata")) << rows;
  }
}

}  // namespace
}  // namespace rnnstate::check_test
