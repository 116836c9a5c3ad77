// Structural tests of recurrent nodes inside Loop, If and Scan subgraphs: finding them, tracing their
// state across scopes and through loop-carried variables, and threading final states out.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "loop_text.h"
#include "pipeline_stages.h"
#include "rnnstate/error.h"
#include "rnnstate/metadata.h"
#include "rules/structure_rules.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::pipeline_subgraph_test {
namespace {

using namespace test_names;
using testing::Producer;

onnx::ModelProto Model(const std::string& graph, int opset = 14) {
  onnx::ModelProto model = ParseModel("<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) + "]>\n" + graph);
  auto* g = model.mutable_graph();
  testing::AddFloatInitializer(*g, "W", {1, 12, 2}, {0.1f, -0.2f});
  testing::AddFloatInitializer(*g, "R", {1, 12, 3}, {0.3f});
  testing::AddFloatInitializer(*g, "Wg", {1, 9, 2}, {0.1f});
  testing::AddFloatInitializer(*g, "Rg", {1, 9, 3}, {0.2f});
  return model;
}

RewriteOutcome Rewrite(onnx::ModelProto& model, StateInputMode mode = StateInputMode::kDefaults) {
  PlanOptions options;
  options.mode = mode;
  return RewriteModel(model, options, /*strict=*/false);
}

/// A graph whose If runs `recurrent` (a node giving [seq, 1, batch, 3] from X) in its then branch and passes Z
/// through in its else branch.
std::string IfRunning(const std::string& recurrent) {
  return "g (float[seq, batch, 2] X, bool cond, float[seq, 1, batch, 3] Z) => (float[seq, 1, batch, 3] Y) {\n"
         "  Y = If (cond) <\n    then_branch = t () => (float[seq, 1, batch, 3] a) { a = " +
         recurrent + " },\n    else_branch = e () => (float[seq, 1, batch, 3] b) { b = Identity (Z) }>\n}";
}

const onnx::GraphProto& Attr(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& a : node.attribute()) {
    if (a.name() == name) return a.g();
  }
  throw std::runtime_error("no attribute " + name);
}

TEST(Subgraph, IfBranchStateIsThreadedOutThroughBothBranches) {
  // An LSTM in the then-branch, weights and X from the main graph, no initial state.
  onnx::ModelProto model = Model(IfRunning("LSTM <hidden_size = 3> (X, W, R)"));
  auto outcome = Rewrite(model);
  const auto& g = model.graph();
  auto pairs = RecordedPairs(model);
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0].graph, "main/If_0:then_branch");
  EXPECT_EQ(pairs[0].node, "LSTM_0");
  EXPECT_THAT(OutputNames(g), ElementsAre("Y", "LSTM_0.h_out", "LSTM_0.c_out"));
  const onnx::NodeProto& select = NodeOfType(g, "If");
  EXPECT_THAT(select.output(), ElementsAre("Y", "LSTM_0.h_out", "LSTM_0.c_out"));
  const auto& then_branch = Attr(select, "then_branch");
  const auto& else_branch = Attr(select, "else_branch");
  EXPECT_EQ(then_branch.output_size(), 3);
  EXPECT_EQ(else_branch.output_size(), 3);
  // The node reads the new main-graph input, broadcast to the batch of X in the main graph (where X
  // is defined), and the branch without the node passes that same effective state through.
  const onnx::NodeProto& lstm = NodeOfType(then_branch, "LSTM");
  EXPECT_EQ(lstm.input(5), "LSTM_0.h_in.expanded");
  EXPECT_EQ(Producer(g, "LSTM_0.h_in.expanded")->op_type(), "Expand");
  EXPECT_EQ(Producer(g, "LSTM_0.h_in.expanded")->input(0), "LSTM_0.h_in");
  const onnx::NodeProto* passed = Producer(else_branch, else_branch.output(1).name());
  ASSERT_NE(passed, nullptr);
  EXPECT_EQ(passed->op_type(), "Identity");
  EXPECT_EQ(passed->input(0), "LSTM_0.h_in.expanded");
  EXPECT_THAT(InputNames(g), ElementsAre("X", "cond", "Z", "LSTM_0.h_in", "LSTM_0.c_in"));
  EXPECT_EQ(StructuralProblem(model), "");
}

/// An autoregressive decoder: the LSTM's state is carried by the Loop and fed back every step.
TEST(Subgraph, LoopCarriedStateIsPromotedAtTheLoopWithoutASecondCarriedCopy) {
  onnx::ModelProto model = Model(
      R"(g (float[batch, 2] context, int64 steps) => (float[1, batch, 3] h_n) {
)" + LoopLstmOverContextText(/*each_step=*/true));
  auto outcome = Rewrite(model);
  ASSERT_EQ(outcome.analysis.nodes.size(), 1u);
  EXPECT_TRUE(outcome.analysis.states[0].site.carried);
  const auto& g = model.graph();
  const onnx::NodeProto& loop = NodeOfType(g, "Loop");
  EXPECT_EQ(loop.input_size(), 4) << "no extra carried variable";
  EXPECT_EQ(Attr(loop, "body").input_size(), 4);
  // Each carried variable gets its own input, although both started from one h0.
  EXPECT_EQ(Producer(g, loop.input(2))->op_type(), "If");
  EXPECT_EQ(Producer(g, loop.input(3))->op_type(), "If");
  EXPECT_NE(loop.input(2), loop.input(3));
  auto pairs = RecordedPairs(model);
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0].input, "LSTM_1.h_in");
  EXPECT_EQ(pairs[0].output, "h_n") << "the Loop's final value, already a graph output";
  EXPECT_EQ(pairs[1].output, "LSTM_1.c_out");
  EXPECT_EQ(Producer(g, "LSTM_1.c_out")->op_type(), "Identity");
  EXPECT_EQ(Producer(g, "LSTM_1.c_out")->input(0), "c_n");
  EXPECT_EQ(pairs[0].graph, "main/Loop_7:body");
}

/// The decoder above, with a dynamic batch: defaults mode can only select the original zeros when the
/// fed state is empty (a carried site has no X to broadcast zeros to). Required mode does the same, so
/// that `rewrite ORIG --state-inputs required` and `rewrite DEFAULTS --state-inputs required` give one
/// model: the same inputs, the same metadata, the same first feed ("empty").
TEST(Subgraph, CarriedZeroStateGivesTheSameRequiredModelOnBothRoutes) {
  const std::string text =
      R"(g (float[batch, 2] context, int64 steps) => (float[1, batch, 3] h_n) {
)" + LoopLstmOverContextText();
  onnx::ModelProto direct = Model(text);
  Rewrite(direct, StateInputMode::kRequired);
  onnx::ModelProto via_defaults = Model(text);
  Rewrite(via_defaults);
  Rewrite(via_defaults, StateInputMode::kRequired);
  EXPECT_TRUE(Bytes(direct) == Bytes(via_defaults)) << "the two routes give different models";
  auto pairs = RecordedPairs(direct);
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0].init, kInitZeros) << "the original zeros (selected when the fed state is empty): fed zeros are the same";
  EXPECT_EQ(Producer(direct.graph(), NodeOfType(direct.graph(), "Loop").input(2))->op_type(), "If");
  EXPECT_EQ(StructuralProblem(direct), "");
}

/// TorchScript's loop over time: X is a Slice of the outer x in the body, where onnx's inference keeps no
/// shapes. The batch is still traced to x's own dimension, so the state's shape names it ("batch"), not
/// a name onnx made up for the carried variable.
TEST(Subgraph, BatchIsTracedThroughASliceInALoopBody) {
  onnx::ModelProto model = Model(R"(g (float[seq, batch, 2] x) => (float[1, batch, 3] h_n) {
  shape = Shape (x)
  zero = Constant <value = int64[1] {0}> ()
  one = Constant <value = int64[1] {1}> ()
  trip = Gather <axis = 0> (shape, zero)
  trips = Squeeze (trip)
  b = Gather <axis = 0> (shape, one)
  three = Constant <value = int64[1] {3}> ()
  dims = Concat <axis = 0> (one, b, three)
  h0 = ConstantOfShape (dims)
  h_n, c_n = Loop (trips, , h0, h0) <body = body (int64 t, bool cond, float[1, h_dim, 3] h_prev, float[1, h_dim, 3] c_prev)
      => (bool cond_out, float[1, h_dim, 3] h_next, float[1, h_dim, 3] c_next) {
    start = Unsqueeze (t, zero)
    end = Add (start, one)
    xt = Slice (x, start, end, zero)
    Y, h_next, c_next = LSTM <hidden_size = 3> (xt, W, R, , , h_prev, c_prev)
    cond_out = Identity (cond)
  }>
})");
  Rewrite(model, StateInputMode::kRequired);
  auto pairs = RecordedPairs(model);
  ASSERT_EQ(pairs.size(), 2u);
  ASSERT_EQ(pairs[0].shape.size(), 3u);
  EXPECT_EQ(pairs[0].shape[1].symbol, "batch");
  EXPECT_EQ(StructuralProblem(model), "");
}

TEST(Subgraph, FreshStatePerIterationIsThreadedOutAsANewCarriedVariable) {
  // Each iteration runs the GRU over one window from a zero state; windows' final states are scanned out.
  onnx::ModelProto model = Model(R"(g (float[windows, len, batch, 2] x) => (float[windows, 1, batch, 3] finals) {
  shape = Shape (x)
  zero = Constant <value = int64[1] {0}> ()
  n = Gather <axis = 0> (shape, zero)
  trip = Squeeze (n, zero)
  finals = Loop (trip, ) <body = body (int64 i, bool cond) => (bool cond_out, float[1, batch, 3] last) {
    w = Gather <axis = 0> (x, i)
    Y, last = GRU <hidden_size = 3> (w, Wg, Rg)
    cond_out = Identity (cond)
  }>
})");
  Rewrite(model);
  const auto& g = model.graph();
  const onnx::NodeProto& loop = NodeOfType(g, "Loop");
  ASSERT_EQ(loop.input_size(), 3);
  EXPECT_EQ(loop.input(2), "GRU_1.h_in") << "the new carried variable starts from the state input";
  EXPECT_THAT(loop.output(), ElementsAre("GRU_1.h_out", "finals")) << "carried finals come before scan outputs";
  const auto& body = Attr(loop, "body");
  EXPECT_EQ(body.input_size(), 3);
  EXPECT_EQ(body.output_size(), 3);
  EXPECT_EQ(body.output(1).name(), Producer(body, body.output(1).name())->output(0));
  EXPECT_EQ(Producer(body, body.output(1).name())->input(0), "last");
  EXPECT_EQ(body.output(2).name(), "last") << "the scan output stays last";
  // The GRU reads the state input from the main graph (broadcast inside the body).
  const onnx::NodeProto& gru = NodeOfType(body, "GRU");
  EXPECT_EQ(Producer(body, gru.input(5))->input(0), "GRU_1.h_in");
  EXPECT_EQ(StructuralProblem(model), "");
}

TEST(Subgraph, ScanStateVariableIsThePromotionSite) {
  onnx::ModelProto model = Model(R"(g (float[seq, batch, 2] x, float[1, batch, 3] h0) => (float[1, batch, 3] h_n, float[seq, 1, batch, 3] ys) {
  h_n, ys = Scan (h0, x) <num_scan_inputs = 1, body = body (float[1, batch, 3] h_prev, float[batch, 2] x_t)
      => (float[1, batch, 3] h_next, float[1, batch, 3] y_t) {
    zero = Constant <value = int64[1] {0}> ()
    x1 = Unsqueeze (x_t, zero)
    Y, h_next = GRU <hidden_size = 3> (x1, Wg, Rg, , , h_prev)
    y_t = Identity (h_next)
  }>
})");
  auto outcome = Rewrite(model);
  ASSERT_EQ(outcome.analysis.nodes.size(), 1u);
  const auto& state = outcome.analysis.states[0];
  EXPECT_TRUE(state.site.carried);
  EXPECT_TRUE(state.exposed) << "h0 is a graph input used only by the Scan, h_n a graph output";
  auto pairs = RecordedPairs(model);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].input, "h0");
  EXPECT_EQ(pairs[0].output, "h_n");
  EXPECT_EQ(NodeOfType(model.graph(), "Scan").input_size(), 2);
}

/// Loop -> If -> LSTM whose state starts from zeros each time it runs (not carried).
const char* kLoopIfFreshLstm = R"(g (float[seq, batch, 2] x, bool flag, int64 trip) => (float[seq, batch, 2] ys) {
  ys = Loop (trip, ) <body = body (int64 i, bool cond) => (bool cond_out, float[batch, 2] x_t) {
    x_t = Gather <axis = 0> (x, i)
    zero = Constant <value = int64[1] {0}> ()
    x1 = Unsqueeze (x_t, zero)
    r = If (flag) <
      then_branch = t () => (float[1, 1, batch, 3] a) { a = LSTM <hidden_size = 3> (x1, W, R) },
      else_branch = e () => (float[1, 1, batch, 3] b) { b = Identity (x1) }>
    cond_out = Identity (cond)
  }>
})";

TEST(Subgraph, LoopIfLstmWithFreshStateIsThreadedThroughIfThenLoop) {
  onnx::ModelProto model = Model(kLoopIfFreshLstm);
  auto outcome = Rewrite(model);
  const auto& state = outcome.analysis.states[0];
  ASSERT_EQ(state.levels.size(), 2u);
  EXPECT_STREQ(ThreadLevelOp(state.levels[0]), "If");
  EXPECT_STREQ(ThreadLevelOp(state.levels[1]), "Loop");
  const auto& g = model.graph();
  EXPECT_THAT(OutputNames(g), ElementsAre("ys", "LSTM_0.h_out", "LSTM_0.c_out"));
  const onnx::NodeProto& loop = NodeOfType(g, "Loop");
  EXPECT_THAT(loop.output(), ElementsAre("LSTM_0.h_out", "LSTM_0.c_out", "ys"));
  EXPECT_EQ(loop.input_size(), 4);
  EXPECT_EQ(NodeOfType(Attr(loop, "body"), "If").output_size(), 3);
  EXPECT_EQ(StructuralProblem(model), "");
  EXPECT_EQ(RecordedPairs(model)[0].graph, "main/Loop_0:body/If_3:then_branch");
}

TEST(Subgraph, TraceStopsAtStateComputedFromDataInsideTheBody) {
  // The initial state is computed from each element: not carried, not zero; the original
  // computation is selected inside the body when the input is not fed.
  onnx::ModelProto model = Model(R"(g (float[seq, batch, 3] x, int64 trip) => (float[seq, 1, batch, 3] ys) {
  ys = Loop (trip, ) <body = body (int64 i, bool cond) => (bool cond_out, float[1, batch, 3] y_t) {
    x_t = Gather <axis = 0> (x, i)
    zero = Constant <value = int64[1] {0}> ()
    x1 = Unsqueeze (x_t, zero)
    h = Tanh (x1)
    Y, y_t = GRU <hidden_size = 3> (x1, Wg3, Rg, , , h)
    cond_out = Identity (cond)
  }>
})");
  testing::AddFloatInitializer(*model.mutable_graph(), "Wg3", {1, 9, 3}, {0.1f});
  auto outcome = Rewrite(model);
  const auto& state = outcome.analysis.states[0];
  EXPECT_FALSE(state.site.carried);
  EXPECT_EQ(state.origin.kind, StateOrigin::Kind::kComputed);
  EXPECT_FALSE(state.origin.zero);
  const auto& body = Attr(NodeOfType(model.graph(), "Loop"), "body");
  const onnx::NodeProto& gru = NodeOfType(body, "GRU");
  EXPECT_EQ(Producer(body, gru.input(5))->op_type(), "If");
  EXPECT_EQ(NodeOfType(model.graph(), "Loop").input_size(), 3) << "a new carried variable threads the final state out";
  EXPECT_EQ(StructuralProblem(model), "");
}

TEST(Subgraph, ScanStateWhoseDefaultIsOnlyKnownInsideTheBodyNeedsRequiredMode) {
  // A Scan keeps its state variables at one shape, so a threaded state must enter at its full shape;
  // this default (the original computation, selected inside the body) cannot give it at the Scan.
  const char* text = R"(g (float[seq, batch, 3] x) => (float[seq, 1, batch, 3] ys) {
  ys = Scan (x) <num_scan_inputs = 1, body = body (float[batch, 3] x_t) => (float[1, batch, 3] y_t) {
    zero = Constant <value = int64[1] {0}> ()
    x1 = Unsqueeze (x_t, zero)
    h = Tanh (x1)
    Y, y_t = GRU <hidden_size = 3> (x1, Wg3, Rg, , , h)
  }>
})";
  onnx::ModelProto model = Model(text);
  testing::AddFloatInitializer(*model.mutable_graph(), "Wg3", {1, 9, 3}, {0.1f});
  auto outcome = Rewrite(model);
  ASSERT_EQ(outcome.plan.skipped.size(), 1u);
  EXPECT_THAT(outcome.plan.skipped[0].reason, HasSubstr("fixed shape"));
  EXPECT_FALSE(outcome.changed);

  // Required mode cannot drop the original (non-zero) value either: feeding zeros would change the model.
  outcome = Rewrite(model, StateInputMode::kRequired);
  ASSERT_EQ(outcome.plan.skipped.size(), 1u);
  EXPECT_THAT(outcome.plan.skipped[0].reason, HasSubstr("non-zero"));
  EXPECT_FALSE(outcome.changed);
}

TEST(Subgraph, ScanStateWithAZeroDefaultKnownOnlyInsideTheBodyIsRewrittenInRequiredMode) {
  const char* text = R"(g (float[seq, batch, 3] x) => (float[seq, 1, batch, 3] ys) {
  ys = Scan (x) <num_scan_inputs = 1, body = body (float[batch, 3] x_t) => (float[1, batch, 3] y_t) {
    zero = Constant <value = int64[1] {0}> ()
    x1 = Unsqueeze (x_t, zero)
    Y, y_t = GRU <hidden_size = 3> (x1, Wg3, Rg)
  }>
})";
  onnx::ModelProto model = Model(text);
  testing::AddFloatInitializer(*model.mutable_graph(), "Wg3", {1, 9, 3}, {0.1f});
  Rewrite(model, StateInputMode::kRequired);
  const onnx::NodeProto& scan = NodeOfType(model.graph(), "Scan");
  EXPECT_EQ(scan.input_size(), 2) << "a new state variable threads the final state out";
  auto pairs = RecordedPairs(model);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].init, kInitZeros);
  EXPECT_EQ(NodeOfType(Attr(scan, "body"), "GRU").input(5), pairs[0].input);
  EXPECT_EQ(StructuralProblem(model), "");
}

TEST(Subgraph, BothIfBranchesWithRecurrentNodesGetTheirOwnStates) {
  onnx::ModelProto model = Model(R"(g (float[seq, batch, 2] X, bool cond) => (float[seq, 1, batch, 3] Y) {
  Y = If (cond) <
    then_branch = t () => (float[seq, 1, batch, 3] a) { a = GRU <hidden_size = 3> (X, Wg, Rg) },
    else_branch = e () => (float[seq, 1, batch, 3] b) { b = GRU <hidden_size = 3> (X, Wg, Rg) }>
})");
  Rewrite(model);
  auto pairs = RecordedPairs(model);
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_NE(pairs[0].input, pairs[1].input);
  EXPECT_NE(pairs[0].graph, pairs[1].graph);
  const onnx::NodeProto& select = NodeOfType(model.graph(), "If");
  EXPECT_EQ(select.output_size(), 3);
  EXPECT_EQ(Attr(select, "then_branch").output_size(), 3);
  EXPECT_EQ(Attr(select, "else_branch").output_size(), 3);
  EXPECT_EQ(StructuralProblem(model), "");
}

TEST(Subgraph, Scan8IsSkippedWithAClearReason) {
  onnx::ModelProto model = Model(R"(g (float[batch, seq, 2] x, int64[batch] lens) => (float[batch, seq, 1, 1, 3] ys) {
  ys = Scan (lens, x) <num_scan_inputs = 1, body = body (float[2] x_t) => (float[1, 1, 3] y_t) {
    x1 = Unsqueeze <axes = [0, 1]> (x_t)
    Y, y_t = GRU <hidden_size = 3> (x1, Wg, Rg)
  }>
})",
                                 /*opset=*/8);
  model.mutable_graph()->mutable_node(0)->set_input(0, "");  // Scan-8's optional sequence_lens
  auto outcome = Rewrite(model);
  ASSERT_EQ(outcome.plan.skipped.size(), 1u);
  EXPECT_THAT(outcome.plan.skipped[0].reason, HasSubstr("Scan-8"));
  EXPECT_FALSE(outcome.changed);
}

TEST(Subgraph, NestedRewriteIsIdempotentAndRequiredModeWorks) {
  onnx::ModelProto model = Model(kLoopIfFreshLstm);
  Rewrite(model);
  std::string once = Bytes(model);
  EXPECT_FALSE(Rewrite(model).changed);
  EXPECT_EQ(Bytes(model), once);
  Rewrite(model, StateInputMode::kRequired);
  EXPECT_EQ(model.graph().initializer_size(), 4) << "only the weights remain";
  for (const auto& pair : RecordedPairs(model)) EXPECT_FALSE(pair.optional);
}

TEST(Subgraph, GeneratedNamesAvoidNamesOfEveryScope) {
  onnx::ModelProto model = Model(IfRunning("GRU <hidden_size = 3> (X, Wg, Rg)"));
  // A value inside the else branch already has the name the template would produce.
  auto* select = model.mutable_graph()->mutable_node(0);
  for (auto& a : *select->mutable_attribute()) {
    if (a.name() == "else_branch") {
      a.mutable_g()->mutable_node(0)->set_output(0, "GRU_0.h_in");
      a.mutable_g()->mutable_output(0)->set_name("GRU_0.h_in");
    }
  }
  Rewrite(model);
  EXPECT_EQ(RecordedPairs(model)[0].input, "GRU_0.h_in_2");
  EXPECT_EQ(StructuralProblem(model), "");
}

}  // namespace
}  // namespace rnnstate::pipeline_subgraph_test
