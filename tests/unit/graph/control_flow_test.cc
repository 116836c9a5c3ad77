// The layouts of Loop, Scan-8, Scan-9 and If (control_flow.h): which outer value a body input or output
// is, which containers are well formed, where a state can be threaded out.

#include "graph/control_flow.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_models.h"
#include "test_names.h"

namespace rnnstate::control_flow_test {
namespace {

using namespace test_names;

/// Loop (n, c, a0, b0) carrying a and b, with one scan output.
onnx::NodeProto LoopNode() {
  return ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (int64 n, bool c, float[2] a0, float[2] b0) => (float[2] a, float[2] b, float[3, 2] ys) {
  a, b, ys = Loop (n, c, a0, b0) <body = l (int64 i, bool ci, float[2] ai, float[2] bi) => (bool co, float[2] ao, float[2] bo, float[2] y) {
    co = Identity (ci)
    ao = Add (ai, bi)
    bo = Identity (bi)
    y = Identity (ao)
  }>
})")
      .graph()
      .node(0);
}

/// Scan-9 (s0, t0, xs): two state variables, one scan input.
onnx::NodeProto ScanNode(int opset) {
  return ParseModel(R"(<ir_version: 8, opset_import: ["" : )" + std::to_string(opset) + R"(]>
g (float[2] s0, float[2] t0, float[4, 2] xs) => (float[2] s, float[2] t, float[4, 2] ys) {
  s, t, ys = Scan <num_scan_inputs = 1, body = b (float[2] si, float[2] ti, float[2] xi) => (float[2] so, float[2] to, float[2] yo) {
    so = Add (si, xi)
    to = Identity (ti)
    yo = Identity (so)
  }> (s0, t0, xs)
})")
      .graph()
      .node(0);
}

TEST(ControlFlow, KindsByOpAndOpset) {
  EXPECT_EQ(ContainerKindOf(LoopNode(), 14), ContainerKind::kLoop);
  EXPECT_EQ(ContainerKindOf(ScanNode(14), 14), ContainerKind::kScan9);
  EXPECT_EQ(ContainerKindOf(ScanNode(14), 8), ContainerKind::kScan8);  // Scan's layout changed in opset 9
  onnx::NodeProto other = LoopNode();
  other.set_domain("com.example");
  EXPECT_EQ(ContainerKindOf(other, 14), ContainerKind::kOther);
}

TEST(ControlFlow, LoopBodyInputsMapToCarriedVariables) {
  const onnx::NodeProto loop = LoopNode();
  EXPECT_EQ(CarriedAtBodyInput(ContainerKind::kLoop, loop, 0), std::nullopt);  // iteration number
  EXPECT_EQ(CarriedAtBodyInput(ContainerKind::kLoop, loop, 1), std::nullopt);  // condition
  const std::optional<CarriedVariable> b = CarriedAtBodyInput(ContainerKind::kLoop, loop, 3);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->node_input, 3);   // b0
  EXPECT_EQ(b->node_output, 1);  // b
  EXPECT_EQ(b->body_input, 3);   // bi
  EXPECT_EQ(b->body_output, 2);  // bo: after the condition
  const BodyInputSources sources = SourcesOfBodyInput(ContainerKind::kLoop, loop, 2);
  EXPECT_THAT(sources.node_inputs, ElementsAre(2));
  EXPECT_EQ(sources.body_output, 1);                              // ao, from the previous iteration
  EXPECT_EQ(BodyOutputOfNodeOutput(ContainerKind::kLoop, 2), 3);  // ys <- y (the body's condition skipped)
}

TEST(ControlFlow, ScanStateVariablesComeBeforeScanInputs) {
  const onnx::NodeProto scan = ScanNode(14);
  EXPECT_EQ(ScanStateCount(scan), 2);
  const std::optional<CarriedVariable> t = CarriedAtBodyInput(ContainerKind::kScan9, scan, 1);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->node_input, 1);
  EXPECT_EQ(t->body_output, 1);
  EXPECT_EQ(CarriedAtBodyInput(ContainerKind::kScan9, scan, 2), std::nullopt);  // a scan element
  const BodyInputSources element = SourcesOfBodyInput(ContainerKind::kScan9, scan, 2);
  EXPECT_THAT(element.node_inputs, ElementsAre(2));
  EXPECT_EQ(element.body_output, -1);
  EXPECT_EQ(BodyOutputOfNodeOutput(ContainerKind::kScan9, 2), 2);
}

TEST(ControlFlow, Scan8CountsItsLeadingSequenceLens) {
  // Scan-8: (sequence_lens, state..., scan...); body inputs start at the first state.
  onnx::NodeProto scan = ScanNode(8);
  scan.mutable_input()->Add();
  for (int k = scan.input_size() - 1; k > 0; --k) scan.mutable_input()->SwapElements(k, k - 1);
  EXPECT_EQ(scan.input(0), "");
  EXPECT_EQ(ScanStateCount(scan), 3);  // sequence_lens and two states
  const BodyInputSources s = SourcesOfBodyInput(ContainerKind::kScan8, scan, 0);
  EXPECT_THAT(s.node_inputs, ElementsAre(1));
  EXPECT_EQ(s.body_output, 0);
  EXPECT_EQ(CarriedAtBodyInput(ContainerKind::kScan8, scan, 0), std::nullopt);  // not threaded through
}

TEST(ControlFlow, IfBranchOutputsAreTheNodesOutputs) {
  EXPECT_EQ(BodyOutputOfNodeOutput(ContainerKind::kIf, 1), 1);
  EXPECT_EQ(BodyOutputOfNodeOutput(ContainerKind::kOther, 1), -1);  // unknown: any output may be
}

TEST(ControlFlow, MalformedContainersAreNamed) {
  onnx::NodeProto loop = LoopNode();
  loop.mutable_input()->RemoveLast();
  EXPECT_EQ(ContainerRuleViolation(loop, ContainerKind::kLoop),
            "the Loop has 3 inputs, but its body carries 2 values (trip count, condition and one input per carried "
            "value)");
  EXPECT_EQ(CarriedAtBodyInput(ContainerKind::kLoop, loop, 2), std::nullopt);

  onnx::NodeProto scan = ScanNode(14);
  scan.mutable_attribute(0)->set_i(4);
  EXPECT_EQ(ContainerRuleViolation(scan, ContainerKind::kScan9),
            "the Scan's num_scan_inputs 4 is not between 1 and its 3 inputs");

  onnx::NodeProto lone;
  lone.set_op_type("If");
  EXPECT_EQ(ContainerRuleViolation(lone, ContainerKind::kIf), "the If has no then_branch");

  // A Loop that carries nothing may omit its trip count and condition: valid, but nothing threads through.
  onnx::NodeProto bare = LoopNode();
  bare.clear_input();
  bare.clear_output();
  onnx::GraphProto* body = bare.mutable_attribute(0)->mutable_g();
  body->mutable_input()->DeleteSubrange(2, 2);
  body->mutable_output()->DeleteSubrange(1, 3);
  EXPECT_EQ(ContainerRuleViolation(bare, ContainerKind::kLoop), "");
  EXPECT_EQ(MalformedContainer(bare, ContainerKind::kLoop), "the Loop lacks its trip count/condition inputs");
}

TEST(ControlFlow, StatesThreadOutOfLoopAndScan9BodiesAndIfBranches) {
  EXPECT_TRUE(CanThreadOut(ContainerKind::kLoop, "body"));
  EXPECT_TRUE(CanThreadOut(ContainerKind::kScan9, "body"));
  EXPECT_TRUE(CanThreadOut(ContainerKind::kIf, "else_branch"));
  EXPECT_FALSE(CanThreadOut(ContainerKind::kScan8, "body"));
  EXPECT_FALSE(CanThreadOut(ContainerKind::kOther, "body"));
}

}  // namespace
}  // namespace rnnstate::control_flow_test
