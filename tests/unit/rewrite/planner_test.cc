// Tests at the plan seam: what MakePlan decides, as data (which default, which names, which skip
// reason), without applying anything.

#include "rewrite/planner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "find/analysis.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::planner_test {
namespace {

using namespace test_names;

const char* kHeader = R"(<ir_version: 8, opset_import: ["" : 14]>
)";

/// The plan of a model given as ONNX text (graph only).
struct Planned {
  onnx::ModelProto model;
  Plan plan;
};

Planned PlanOf(const std::string& graph, PlanOptions options = {},
               const std::function<void(onnx::GraphProto&)>& add = nullptr) {
  Planned out{ParseModel(kHeader + graph), {}};
  if (add) add(*out.model.mutable_graph());
  ModelIndex index(out.model);
  out.plan = MakePlan(index, Analyze(index), options);
  return out;
}

const StateEdit& OnlyEdit(const Plan& plan) {
  if (plan.edits.size() != 1) throw std::runtime_error("expected one edit, got " + std::to_string(plan.edits.size()));
  return plan.edits[0];
}

TEST(Planner, AbsentStateOfDynamicBatchBroadcastsZerosFromTheBatchOfX) {
  Planned p = PlanOf(R"(g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, batch, 3] Y) {
  Y = GRU <hidden_size = 3> (X, W, R)
})");
  const StateEdit& edit = OnlyEdit(p.plan);
  EXPECT_EQ(edit.key, (StateKey{{}, 0, 5}));
  EXPECT_EQ(edit.kind, "h");
  EXPECT_EQ(edit.input, "GRU_0.h_in");
  EXPECT_EQ(ShapeText(edit.shape), "[1,batch,3]");
  const auto& input = std::get<NewInput>(edit.input_edit);
  const auto& zeros = std::get<BroadcastZerosDefault>(input.default_value);
  EXPECT_THAT(zeros.dims, ElementsAre(1, 1, 3));
  EXPECT_EQ(input.slot_value, "GRU_0.h_in.expanded");
  ASSERT_EQ(p.plan.broadcasts.size(), 1u);
  const BroadcastShapeNames& b = p.plan.broadcasts[zeros.broadcast];
  EXPECT_EQ(b.x, "X");
  EXPECT_EQ(b.batch_axis, 1);
  EXPECT_EQ(b.batch_position, 1);
  EXPECT_THAT(b.fixed_dims, ElementsAre(std::pair<int64_t, std::string>(1, "GRU_0.num_directions"),
                                        std::pair<int64_t, std::string>(3, "GRU_0.hidden_size")));
  EXPECT_TRUE(std::holds_alternative<NameSlot>(edit.output_edit));
  EXPECT_EQ(edit.output, "GRU_0.h_out");
  EXPECT_EQ(p.plan.node_names.size(), 1u);  // the unnamed GRU gets its label as its name
  ASSERT_EQ(p.plan.pairs.size(), 1u);
  EXPECT_EQ(p.plan.pairs[0].input, "GRU_0.h_in");
}

TEST(Planner, AbsentStateOfFixedBatchGetsAFullZeroInitializer) {
  Planned p = PlanOf(R"(g (float[5, 2, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[5, 1, 2, 3] Y) {
  Y = GRU <hidden_size = 3> (X, W, R)
})");
  const auto& input = std::get<NewInput>(OnlyEdit(p.plan).input_edit);
  EXPECT_THAT(std::get<ZerosDefault>(input.default_value).dims, ElementsAre(1, 2, 3));
  EXPECT_EQ(input.slot_value, "GRU_0.h_in");
  EXPECT_TRUE(p.plan.broadcasts.empty());
}

TEST(Planner, RequiredModeAddsNoDefault) {
  PlanOptions options;
  options.mode = StateInputMode::kRequired;
  Planned p = PlanOf(R"(g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, batch, 3] Y) {
  Y = GRU <hidden_size = 3> (X, W, R)
})",
                     options);
  const StateEdit& edit = OnlyEdit(p.plan);
  EXPECT_TRUE(std::holds_alternative<NoDefault>(std::get<NewInput>(edit.input_edit).default_value));
  EXPECT_FALSE(edit.optional);
}

TEST(Planner, ZeroInitializerServingOneStateIsMovedOneSharedIsCopied) {
  const char* graph = R"(g (float[seq, 2, 2] X, float[1, 12, 2] W, float[1, 12, 3] R) => (float[seq, 1, 2, 3] Y) {
  Y = LSTM <hidden_size = 3> (X, W, R, , , h0, c0)
})";
  auto own = [](onnx::GraphProto& g) {
    testing::AddFloatInitializer(g, "h0", {1, 2, 3}, {0.0f});
    testing::AddFloatInitializer(g, "c0", {1, 2, 3}, {0.0f});
  };
  Planned p = PlanOf(graph, {}, own);
  ASSERT_EQ(p.plan.edits.size(), 2u);
  for (const StateEdit& edit : p.plan.edits) {
    const auto& d = std::get<InitializerDefault>(std::get<NewInput>(edit.input_edit).default_value);
    EXPECT_TRUE(d.move) << edit.kind;
    EXPECT_THAT(d.dims, ElementsAre(1, 2, 3));
  }
  std::string shared_graph = graph;
  shared_graph.replace(shared_graph.find("h0, c0"), 6, "h0, h0");
  Planned shared =
      PlanOf(shared_graph, {}, [](onnx::GraphProto& g) { testing::AddFloatInitializer(g, "h0", {1, 2, 3}, {0.0f}); });
  ASSERT_EQ(shared.plan.edits.size(), 2u);
  for (const StateEdit& edit : shared.plan.edits) {
    EXPECT_FALSE(std::get<InitializerDefault>(std::get<NewInput>(edit.input_edit).default_value).move) << edit.kind;
  }
}

TEST(Planner, LearnedInitialStateIsSelectedInBothModesOnlyDefaultsModeHasTheEmptyDefault) {
  const char* graph = R"(g (float[seq, 2, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, 2, 3] Y) {
  Y = GRU <hidden_size = 3> (X, W, R, , , h0)
})";
  auto learned = [](onnx::GraphProto& g) { testing::AddFloatInitializer(g, "h0", {1, 2, 3}, {0.5f}); };
  for (StateInputMode mode : {StateInputMode::kDefaults, StateInputMode::kRequired}) {
    PlanOptions options;
    options.mode = mode;
    Planned p = PlanOf(graph, options, learned);
    const StateEdit& edit = OnlyEdit(p.plan);
    const auto& select = std::get<SelectOriginalDefault>(std::get<NewInput>(edit.input_edit).default_value);
    EXPECT_EQ(select.empty_default, mode == StateInputMode::kDefaults);
    EXPECT_THAT(select.dims, ElementsAre(1, 0, 3));
    EXPECT_EQ(edit.init, kInitEmpty);
    EXPECT_EQ(ShapeText(edit.shape), "[1,batch,3]");
    ASSERT_EQ(p.plan.pairs.size(), 1u);
    EXPECT_EQ(p.plan.pairs[0].shape, (std::vector<MetaDim>{{1, ""}, {2, ""}, {3, ""}})) << "the data's batch";
  }
}

TEST(Planner, ComputedNonZeroStateSelectsTheOriginalWhenTheInputIsEmpty) {
  Planned p = PlanOf(R"(g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R, float[1, batch, 3] a)
    => (float[seq, 1, batch, 3] Y) {
  h0 = Tanh (a)
  Y = GRU <hidden_size = 3> (X, W, R, , , h0)
})");
  const StateEdit& edit = OnlyEdit(p.plan);
  EXPECT_EQ(edit.original, "h0");
  const auto& input = std::get<NewInput>(edit.input_edit);
  const auto& select = std::get<SelectOriginalDefault>(input.default_value);
  EXPECT_THAT(select.dims, ElementsAre(1, 0, 3));
  EXPECT_EQ(select.is_empty_value, "GRU_1.h_in.is_empty");
  EXPECT_EQ(select.then_value, "GRU_1.h_in.original");
  EXPECT_EQ(input.slot_value, "GRU_1.h_in.selected");
  EXPECT_EQ(ShapeText(edit.shape), "[1,batch,3]");
}

TEST(Planner, FinalStateAlreadyAnOutputIsReusedOneUsedInsideGetsAnIdentity) {
  Planned reused = PlanOf(R"(g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[1, batch, 3] hn) {
  Y, hn = GRU <hidden_size = 3> (X, W, R)
})");
  EXPECT_TRUE(std::holds_alternative<ReuseOutput>(OnlyEdit(reused.plan).output_edit));
  EXPECT_EQ(OnlyEdit(reused.plan).output, "hn");
  Planned consumed = PlanOf(R"(g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[1, batch, 3] o) {
  Y, hn = GRU <hidden_size = 3> (X, W, R)
  o = Relu (hn)
})");
  EXPECT_TRUE(std::holds_alternative<IdentityOutput>(OnlyEdit(consumed.plan).output_edit));
  EXPECT_EQ(OnlyEdit(consumed.plan).final_value, "hn");
  EXPECT_EQ(OnlyEdit(consumed.plan).output, "GRU_0.h_out");
}

TEST(Planner, ExposedStateIsKeptAndRequiredModeDropsItsDefault) {
  const char* graph = R"(g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R, float[1, batch, 3] h0)
    => (float[1, batch, 3] hn) {
  Y, hn = GRU <hidden_size = 3> (X, W, R, , , h0)
})";
  Planned p = PlanOf(graph);
  EXPECT_TRUE(std::holds_alternative<ReuseInput>(OnlyEdit(p.plan).input_edit));
  EXPECT_TRUE(std::holds_alternative<ReuseOutput>(OnlyEdit(p.plan).output_edit));
  PlanOptions required;
  required.mode = StateInputMode::kRequired;
  Planned with_default = PlanOf(graph, required, [](onnx::GraphProto& g) {
    testing::AddFloatInitializer(g, "h0", {1, 1, 3}, {0.0f});
  });
  EXPECT_TRUE(std::holds_alternative<DropDefault>(OnlyEdit(with_default.plan).input_edit));
  EXPECT_FALSE(OnlyEdit(with_default.plan).optional);
}

TEST(Planner, StateInALoopBodyIsThreadedOutAsACarriedVariable) {
  Planned p = PlanOf(R"(g (float[seq, batch, 2] X, int64 n, bool c, float[1, 9, 2] W, float[1, 9, 3] R)
    => (float[n, seq, 1, batch, 3] ys) {
  ys = Loop (n, c) <body = b (int64 i, bool ci) => (bool co, float[seq, 1, batch, 3] y) {
    co = Identity (ci)
    y = GRU <hidden_size = 3> (X, W, R)
  }>
})");
  const StateEdit& edit = OnlyEdit(p.plan);
  const auto& threaded = std::get<ThreadedOutput>(edit.output_edit);
  ASSERT_EQ(threaded.steps.size(), 1u);
  EXPECT_EQ(threaded.steps[0].level.kind, ContainerKind::kLoop);
  EXPECT_EQ(threaded.steps[0].outer_value, edit.output);
  EXPECT_FALSE(threaded.steps[0].carried_input.empty());
  EXPECT_TRUE(threaded.steps[0].other_value.empty());
  EXPECT_EQ(threaded.site_value, "GRU_1.h_out.final");  // the empty Y_h slot gets a name
  EXPECT_EQ(edit.graph_name, "main/Loop_0:body");
}

TEST(Planner, SkipsAreKeyedLikeEditsAndSayWhy) {
  Planned p = PlanOf(R"(g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, batch, 3] Y) {
  Y = GRU <hidden_size = 3, direction = "sideways"> (X, W, R)
})");
  EXPECT_TRUE(p.plan.edits.empty());
  ASSERT_EQ(p.plan.skipped.size(), 1u);
  const SkippedState& skip = p.plan.skipped[0];
  EXPECT_EQ(skip.key, (StateKey{{}, 0, -1}));  // the whole owner
  EXPECT_EQ(skip.kind, "");
  EXPECT_THAT(skip.reason, HasSubstr("unknown direction 'sideways'"));
  EXPECT_EQ(p.plan.FindSkip(StateKey{{}, 0, 5}), &skip);
  EXPECT_EQ(p.plan.FindEdit(StateKey{{}, 0, 5}), nullptr);
  EXPECT_FALSE(p.plan.ChangesModel());
}

TEST(Planner, NodeFilterLeavesOtherStatesAlone) {
  const char* two_grus =
      R"(g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, batch, 3] Y, float[seq, 1, batch, 3] Z) {
  Y = GRU <hidden_size = 3> (X, W, R)
  Z = GRU <hidden_size = 3> (X, W, R)
})";
  PlanOptions options;
  options.node_filter = NodePattern("^second$");
  Planned p = PlanOf(two_grus, options);
  EXPECT_TRUE(p.plan.edits.empty());  // neither node is named "second"
  options.node_filter = NodePattern("GRU_1");
  Planned q = PlanOf(two_grus, options);
  ASSERT_EQ(q.plan.edits.size(), 1u);
  EXPECT_EQ(q.plan.edits[0].key, (StateKey{{}, 1, 5}));
}

}  // namespace
}  // namespace rnnstate::planner_test

namespace rnnstate::planner_test {
namespace {

TEST(Planner, AnUnnamedDataBatchGetsANameTheStateShapesReferTo) {
  // X's batch reaches the GRU through a Relu: onnx's inference names it "unk__...", which no caller sees.
  Planned p = PlanOf(R"(g (float[seq, ?, 2] x, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, ?, 3] Y) {
  X = Relu (x)
  Y = GRU <hidden_size = 3> (X, W, R)
})");
  ASSERT_EQ(p.plan.input_dim_names.size(), 1u);
  EXPECT_EQ(p.plan.input_dim_names[0], std::make_tuple(std::string("x"), 1, std::string("batch")));
  const StateEdit& edit = OnlyEdit(p.plan);
  EXPECT_EQ(ShapeText(edit.shape), "[1,batch,3]");
  EXPECT_EQ(p.plan.pairs[0].shape, (std::vector<MetaDim>{{1, ""}, {-1, "batch"}, {3, ""}}));
}

TEST(Planner, ADataBatchNamedByTheInputKeepsItsName) {
  Planned p = PlanOf(R"(g (float[seq, N, 2] x, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, N, 3] Y) {
  X = Transpose <perm = [0, 1, 2]> (x)
  Y = GRU <hidden_size = 3> (X, W, R)
})");
  EXPECT_TRUE(p.plan.input_dim_names.empty());
  EXPECT_EQ(p.plan.pairs[0].shape, (std::vector<MetaDim>{{1, ""}, {-1, "N"}, {3, ""}}));
}

/// Two LSTMs of hidden size 4 on X [seq, batch, 2], the first one's Y squeezed and passed through
/// `between` (text defining T1 from S1) into the second; `hidden2` is the second's hidden size.
std::string TwoLayers(const std::string& between, int hidden2 = 4) {
  const std::string h2 = std::to_string(hidden2), gates2 = std::to_string(4 * hidden2);
  return R"(g (float[seq, batch, 2] X, float[1, 16, 2] W1, float[1, 16, 4] R1, float[1, )" + gates2 + R"(, 4] W2,
   float[1, )" + gates2 + R"(, )" + h2 + R"(] R2) => (float[seq, 1, batch, )" + h2 + R"(] Y2) {
  axes = Constant <value = int64[1] {1}> ()
  Y1 = LSTM <hidden_size = 4> (X, W1, R1)
  S1 = Squeeze (Y1, axes)
  )" + between + R"(
  Y2 = LSTM <hidden_size = )" + h2 + R"(> (T1, W2, R2)
})";
}

/// The broadcast index of every edit's default, in edit order.
std::vector<int> BroadcastsOf(const Plan& plan) {
  std::vector<int> ids;
  for (const auto& edit : plan.edits) {
    ids.push_back(std::get<BroadcastZerosDefault>(std::get<NewInput>(edit.input_edit).default_value).broadcast);
  }
  return ids;
}

TEST(Planner, OwnersWhoseBatchIsOneValuesShareOneShapeComputation) {
  // Layer 2's batch is X's, through the LSTM, the Squeeze and the Relu: one Shape of X serves all four
  // states, placed before the first LSTM (node 1).
  Planned p = PlanOf(TwoLayers("T1 = Relu (S1)"));
  ASSERT_EQ(p.plan.edits.size(), 4u);
  EXPECT_THAT(BroadcastsOf(p.plan), ElementsAre(0, 0, 0, 0));
  ASSERT_EQ(p.plan.broadcasts.size(), 1u);
  const BroadcastShapeNames& b = p.plan.broadcasts[0];
  EXPECT_EQ(b.x, "X");
  EXPECT_EQ(b.batch_axis, 1);
  EXPECT_EQ(b.anchor, 1);
  EXPECT_EQ(b.state_shape, "LSTM_1.state_shape");
  // Each state keeps its own input and zeros.
  EXPECT_EQ(p.plan.edits[2].input, "LSTM_4.h_in");
  EXPECT_EQ(std::get<NewInput>(p.plan.edits[2].input_edit).slot_value, "LSTM_4.h_in.expanded");
}

TEST(Planner, OwnersShareNoShapeComputationWhereTheBatchMayDiffer) {
  // Operators that may cut, join or broadcast the batch between the layers, and a second layer of another
  // hidden size: the second LSTM reads its own X (or has its own dims).
  const std::vector<std::pair<std::string, int>> cases{
      {"first = Constant <value = int64[1] {1}> ()\n  end = Constant <value = int64[1] {9223372036854775807}> ()\n"
       "  T1 = Slice (S1, first, end, axes)", 4},
      {"b = Constant <value = float[1, 1, 4] {1, 2, 3, 4}> ()\n  T1 = Add (S1, b)", 4},
      {"T1 = Concat <axis = 1> (S1, S1)", 4},
      {"T1 = Relu (S1)", 5},
  };
  for (const auto& [between, hidden2] : cases) {
    SCOPED_TRACE(between + " / hidden " + std::to_string(hidden2));
    Planned p = PlanOf(TwoLayers(between, hidden2));
    ASSERT_EQ(p.plan.edits.size(), 4u);
    EXPECT_THAT(BroadcastsOf(p.plan), ElementsAre(0, 0, 1, 1));
    ASSERT_EQ(p.plan.broadcasts.size(), 2u);
    EXPECT_EQ(p.plan.broadcasts[0].x, "X");
    EXPECT_EQ(p.plan.broadcasts[1].x, "T1");
  }
}

}  // namespace
}  // namespace rnnstate::planner_test
