// What each carried variable of a Loop or Scan is (carried_variables: ReadLoop, CarriedRoleName): a state,
// a pass-through, a counter with its start, step and the reads it indexes, a collector, a value recomputed
// every iteration, a recurrent operator's state, or unclassified; and where the body uses the iteration
// number. Each role has a model that must get it and a near miss that must not. Models as ONNX text.

#include "loops/carried_variables.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph/model_index.h"
#include "loop_text.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::carried_variables_test {
namespace {

using namespace test_names;

/// A Loop over axis 0 of x carrying (in this order) t (from t0 = 0), U (weights), h (from zeros) and `extra`
/// (from e0); `body` computes the body outputs t_next, U_out, h_next, e_next and `uses` adds more.
std::string LoopModel(const std::string& body, const std::string& e_type = "float[batch, 4]",
                      const std::string& e0 = "e0 = Identity (hb)") {
  return R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 3] x, float[3, 4] W, float[4, 4] U0, float[batch, 4] hb) => (float[batch, 4] h_n, float[seq, batch, 4] ys) {
  shape = Shape (x)
  zero = Constant <value = int64 {0}> ()
  trip = Gather <axis = 0> (shape, zero)
  t0 = Constant <value = int64 {0}> ()
  )" + e0 +
         R"(
  t_n, U_n, h_n, e_n, ys = Loop (trip, , t0, U0, hb, e0) <body = body (int64 i, bool cond, int64 t, float[4, 4] U, float[batch, 4] h, )" +
         e_type + R"( e) => (bool cond_out, int64 t_next, float[4, 4] U_out, float[batch, 4] h_next, )" + e_type +
         R"( e_next, float[batch, 4] y) {
    )" + body +
         R"(
    y = Identity (h_next)
    cond_out = Identity (cond)
  }>
})";
}

/// The usual cell's h' = tanh(x[t] W + h U) at the counter t, the sum named `cell`.
TanhCell UsualTanh() { return TanhCell().At("t").Sum("cell"); }

/// The usual cell: h' = `tanh`, t' = t + 1, U passed through; `e_next` is given separately.
std::string Cell(const std::string& e_next, const std::string& t_next = "t_next = Add (t, step)",
                 const TanhCell& tanh = UsualTanh()) {
  return tanh.Text() + "    step = Constant <value = int64 {1}> ()\n    " + t_next +
         "\n    U_out = Identity (U)\n    " + e_next;
}

int LoopNode(const onnx::ModelProto& model) {
  for (int n = 0; n < model.graph().node_size(); ++n) {
    if (model.graph().node(n).op_type() == "Loop" || model.graph().node(n).op_type() == "Scan") return n;
  }
  throw std::runtime_error("no Loop");
}

/// Makes LoopModel's e a sequence of float tensors (onnx 1.12's text syntax has no sequence types).
void MakeESequence(onnx::ModelProto& model) {
  onnx::GraphProto& body = *model.mutable_graph()->mutable_node(LoopNode(model))->mutable_attribute(0)->mutable_g();
  for (auto* value : {body.mutable_input(5), body.mutable_output(4)}) {
    onnx::TypeProto type;
    type.mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    *value->mutable_type() = type;
  }
}

/// Reads the model's Loop; `op_slots` marks Loop input slots as recurrent operators' states.
LoopAnatomy ReadText(const std::string& text, std::vector<int> op_slots = {}, bool e_sequence = false) {
  onnx::ModelProto model = ParseModel(text);  // a LoopAnatomy holds names and paths, no pointers
  if (e_sequence) MakeESequence(model);
  ModelIndex index(model);
  CarrierSlots carriers;
  for (int slot : op_slots) carriers.insert({GraphPath{}, LoopNode(model), slot});
  std::optional<LoopAnatomy> loop = ReadLoop(index, GraphPath{}, LoopNode(model), carriers);
  if (!loop) throw std::runtime_error("ReadLoop refused the Loop");
  return *loop;
}

const CarriedInfo& Var(const LoopAnatomy& loop, const std::string& body_input) {
  for (const CarriedInfo& c : loop.carried) {
    if (c.body_input == body_input) return c;
  }
  throw std::runtime_error("no carried " + body_input);
}

TEST(CarriedVariables, ReadsEachRoleOfTheUsualCell) {
  const LoopAnatomy loop = ReadText(LoopModel(Cell("e_next = Identity (e)")));
  EXPECT_EQ(loop.kind, ContainerKind::kLoop);
  EXPECT_EQ(loop.node, 5);
  ASSERT_EQ(loop.body.size(), 1u);
  EXPECT_EQ(loop.body[0].attribute, kBody);
  ASSERT_EQ(loop.carried.size(), 4u);
  EXPECT_EQ(Var(loop, "h").role, CarriedRole::kState);
  EXPECT_EQ(Var(loop, "h").body_output, "h_next");
  EXPECT_EQ(Var(loop, "h").slots.node_input, 4);
  EXPECT_EQ(Var(loop, "h").slots.node_output, 2);
  EXPECT_EQ(Var(loop, "U").role, CarriedRole::kPassThrough);
  EXPECT_EQ(Var(loop, "e").role, CarriedRole::kPassThrough);
  const CarriedInfo& t = Var(loop, "t");
  EXPECT_EQ(t.role, CarriedRole::kCounter) << t.why;
  EXPECT_EQ(t.start, 0);
  EXPECT_EQ(t.step, 1);
  ASSERT_EQ(t.uses.reads.size(), 1u);
  EXPECT_EQ(t.uses.reads[0].data, "x");
  EXPECT_EQ(t.uses.reads[0].axis, 0);
  EXPECT_THAT(t.uses.other_uses, IsEmpty());
  // The iteration number is not used at all.
  EXPECT_THAT(loop.iteration.reads, IsEmpty());
  EXPECT_THAT(loop.iteration.other_uses, IsEmpty());
}

TEST(CarriedVariables, ACounterStepsByItsConstantAndCountsDown) {
  LoopAnatomy loop = ReadText(
      LoopModel(Cell("e_next = Identity (e)", "three = Constant <value = int64 {3}> ()\n    t_next = Sub (t, three)")));
  EXPECT_EQ(Var(loop, "t").role, CarriedRole::kCounter);
  EXPECT_EQ(Var(loop, "t").step, -3);
  // c - t is no counter: it flips around c every step.
  loop = ReadText(
      LoopModel(Cell("e_next = Identity (e)", "three = Constant <value = int64 {3}> ()\n    t_next = Sub (three, t)")));
  EXPECT_EQ(Var(loop, "t").role, CarriedRole::kState);
}

TEST(CarriedVariables, ACounterUsedForMoreThanIndexingIsAState) {
  // t also scales h: its value carries from one chunk to the next.
  const LoopAnatomy loop =
      ReadText(LoopModel(Cell("e_next = Identity (e)", "t_next = Add (t, step)",
                              UsualTanh().Then("tf = Cast <to = 1> (t)\n    scaled = Mul (cell, tf)", "scaled"))));
  const CarriedInfo& t = Var(loop, "t");
  EXPECT_EQ(t.role, CarriedRole::kState);
  EXPECT_EQ(t.step, 1);
  EXPECT_THAT(t.uses.other_uses, ElementsAre(HasSubstr("Mul")));
}

TEST(CarriedVariables, WhereTheBodyUsesTheIterationNumber) {
  // x read at i (an exact read of an outer value) and i used by a Mul besides.
  const TanhCell drift = TanhCell().Sum("cell").Then("fi = Cast <to = 1> (i)\n    drift = Mul (cell, fi)", "drift");
  const LoopAnatomy loop = ReadText(
      LoopModel(drift.Text() + "    t_next = Identity (t)\n    U_out = Identity (U)\n    e_next = Identity (e)"));
  ASSERT_EQ(loop.iteration.reads.size(), 1u);
  EXPECT_EQ(loop.iteration.reads[0].data, "x");
  EXPECT_THAT(loop.iteration.other_uses, ElementsAre(HasSubstr("Mul")));
  // i flowing into a body output (through a Cast and an Add) is a use beyond indexing.
  const LoopAnatomy inner = ReadText(LoopModel(Cell(R"(ix = Cast <to = 1> (i)
    e_plus = Add (e, ix)
    e_next = Identity (e_plus))")));
  EXPECT_THAT(inner.iteration.reads, IsEmpty());
  EXPECT_THAT(inner.iteration.other_uses, ElementsAre(HasSubstr("body output 'e_next'")));
  // A Gather at i of a value of the body itself (not of an outer value) is no read of the time input.
  const LoopAnatomy own = ReadText(LoopModel(Cell("row = Gather <axis = 0> (e, i)\n    e_next = Identity (e)")));
  EXPECT_THAT(own.iteration.reads, IsEmpty());
  EXPECT_THAT(own.iteration.other_uses, ElementsAre(HasSubstr("Gather")));
}

TEST(CarriedVariables, ReshapedToItsOwnShapeIsPassedThrough) {
  const LoopAnatomy loop = ReadText(LoopModel(Cell("es = Shape (e)\n    e_next = Reshape (e, es)")));
  EXPECT_EQ(Var(loop, "e").role, CarriedRole::kPassThrough);
  // Reshaped to the shape of another value: not the same value.
  const LoopAnatomy other = ReadText(LoopModel(Cell("hs = Shape (h)\n    e_next = Reshape (e, hs)")));
  EXPECT_NE(Var(other, "e").role, CarriedRole::kPassThrough);
}

TEST(CarriedVariables, RecomputedEveryIterationIsIndependentUnlessTheBodyReadsIt) {
  // e' = x[t] W, e never read: recomputed from scratch.
  const LoopAnatomy independent = ReadText(LoopModel(Cell("e_next = Identity (xw)")));
  EXPECT_EQ(Var(independent, "e").role, CarriedRole::kIndependent);
  EXPECT_THAT(Var(independent, "e").why, HasSubstr("does not depend on its previous one"));
  // A delay line: e' = x[t] W, and the cell reads e (the previous step's value): a state.
  const LoopAnatomy delay = ReadText(LoopModel(Cell("e_next = Identity (xw)", "t_next = Add (t, step)",
                                                    UsualTanh().Sum("cell0").Then("cell = Add (cell0, e)", "cell"))));
  EXPECT_EQ(Var(delay, "e").role, CarriedRole::kState);
}

TEST(CarriedVariables, ASequenceCollectsOnlyWhenNothingElseReadsIt) {
  const std::string empty = "e0 = SequenceEmpty <dtype = 1> ()";
  const LoopAnatomy collector =
      ReadText(LoopModel(Cell("e_next = SequenceInsert (e, h_next)"), "float[batch, 4]", empty), {}, true);
  EXPECT_EQ(Var(collector, "e").role, CarriedRole::kCollector);
  // The body reads what it collected (TorchScript's len(ys)): it carries from step to step.
  const LoopAnatomy read = ReadText(LoopModel(Cell(R"(n = SequenceLength (e)
    e_next = SequenceInsert (e, h_next))"),
                                              "float[batch, 4]", empty),
                                    {}, true);
  EXPECT_EQ(Var(read, "e").role, CarriedRole::kUnclassified);
  EXPECT_THAT(Var(read, "e").why, HasSubstr("the body reads it"));
  // Inserting at a position is no collecting at the end.
  const LoopAnatomy positioned = ReadText(LoopModel(Cell(R"(p = Constant <value = int64 {0}> ()
    e_next = SequenceInsert (e, h_next, p))"),
                                                    "float[batch, 4]", empty),
                                          {}, true);
  EXPECT_EQ(Var(positioned, "e").role, CarriedRole::kUnclassified);
  EXPECT_THAT(Var(positioned, "e").why, HasSubstr("inserts at a position"));
}

TEST(CarriedVariables, GrowingByConcatIsUnclassified) {
  const LoopAnatomy loop = ReadText(LoopModel(Cell("e_next = Concat <axis = 0> (e, h_next)")));
  EXPECT_EQ(Var(loop, "e").role, CarriedRole::kUnclassified);
  EXPECT_THAT(Var(loop, "e").why, HasSubstr("grows every iteration"));
  // Adding to itself keeps the size: an ordinary state.
  const LoopAnatomy sum = ReadText(LoopModel(Cell("e_next = Add (e, h_next)")));
  EXPECT_EQ(Var(sum, "e").role, CarriedRole::kState);
}

TEST(CarriedVariables, ARecurrentOperatorsStateIsItsOwners) {
  // Loop input 5 (e) marked as carrying an operator's state: that wins over its own classification.
  const LoopAnatomy loop = ReadText(LoopModel(Cell("e_next = Add (e, h_next)")), {5});
  EXPECT_EQ(Var(loop, "e").role, CarriedRole::kOpState);
  EXPECT_EQ(Var(loop, "h").role, CarriedRole::kState);
}

TEST(CarriedVariables, OnlyWellFormedLoopsAndScansAreRead) {
  const onnx::ModelProto model = ParseModel(LoopModel(Cell("e_next = Identity (e)")));
  ModelIndex index(model);
  EXPECT_FALSE(ReadLoop(index, GraphPath{}, 0, {}).has_value());  // Shape
  EXPECT_TRUE(ReadLoop(index, GraphPath{}, LoopNode(model), {}).has_value());
  // A Loop whose body has fewer outputs than its carried variables need.
  onnx::ModelProto broken = model;
  auto& body_outputs =
      *broken.mutable_graph()->mutable_node(LoopNode(model))->mutable_attribute(0)->mutable_g()->mutable_output();
  body_outputs.RemoveLast();
  body_outputs.RemoveLast();
  ModelIndex broken_index(broken);
  EXPECT_FALSE(ReadLoop(broken_index, GraphPath{}, LoopNode(broken), {}).has_value());
}

TEST(CarriedVariables, AScanReadsItsStateVariables) {
  const onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 3] x, float[batch, 3] h0) => (float[batch, 3] h_n, float[seq, batch, 3] ys) {
  h_n, ys = Scan <num_scan_inputs = 1, body = body (float[batch, 3] h, float[batch, 3] x_t) => (float[batch, 3] h_next, float[batch, 3] y) {
    s = Add (h, x_t)
    h_next = Tanh (s)
    y = Identity (h_next)
  }> (h0, x)
})");
  ModelIndex index(model);
  const std::optional<LoopAnatomy> loop = ReadLoop(index, GraphPath{}, 0, {});
  ASSERT_TRUE(loop.has_value());
  EXPECT_EQ(loop->kind, ContainerKind::kScan9);
  ASSERT_EQ(loop->carried.size(), 1u);  // the scan input is no carried variable
  EXPECT_EQ(loop->carried[0].body_input, "h");
  EXPECT_EQ(loop->carried[0].role, CarriedRole::kState);
}

TEST(CarriedVariables, RoleNamesForReports) {
  EXPECT_STREQ(CarriedRoleName(CarriedRole::kState), "state");
  EXPECT_STREQ(CarriedRoleName(CarriedRole::kPassThrough), "passed through");
  EXPECT_STREQ(CarriedRoleName(CarriedRole::kCounter), "counter");
  EXPECT_STREQ(CarriedRoleName(CarriedRole::kCollector), "collector");
  EXPECT_STREQ(CarriedRoleName(CarriedRole::kIndependent), "independent");
  EXPECT_STREQ(CarriedRoleName(CarriedRole::kOpState), "recurrent operator's state");
  EXPECT_STREQ(CarriedRoleName(CarriedRole::kUnclassified), "unclassified");
}

}  // namespace
}  // namespace rnnstate::carried_variables_test
