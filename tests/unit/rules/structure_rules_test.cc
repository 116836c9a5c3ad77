// The structure every model must have (rules/structure_rules.h), judged by StructuralProblem: names read
// before they are defined (nothing defines them, or a later node does: out of order or a cycle), names
// defined twice in one scope (a subgraph may shadow an outer name, and its names are gone after it), duplicate
// graph inputs and main-graph outputs (a subgraph may return one value twice), outputs nothing defines, each
// problem named with the graph it is in.

#include "rules/structure_rules.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "test_models.h"
#include "test_names.h"

namespace rnnstate::structure_rules_test {
namespace {

using namespace test_names;
using ::testing::StartsWith;

/// Two Relus in a row: a = Relu(x), y = Relu(a).
const char* const kTwoRelus = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[2] x) => (float[2] y) {
  a = Relu (x)
  y = Relu (a)
})";

/// An If whose branches read the outer `a` and define `t` (then) or shadow `a` (else); `t` is read after.
std::string IfModel(const std::string& after) {
  return R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[2] x, bool c) => (float[2] y) {
  a = Relu (x)
  z = If (c) <then_branch = g1 () => (float[2] t) {
      t = Relu (a)
    }, else_branch = g2 () => (float[2] a) {
      a = Neg (x)
    }>
  y = )" +
         after + R"(
})";
}

TEST(StructuralProblem, AcceptsAWellFormedModelAndShadowingInASubgraph) {
  EXPECT_EQ(StructuralProblem(ParseModel(kTwoRelus)), "");
  EXPECT_EQ(StructuralProblem(ParseModel(kGru)), "");
  EXPECT_EQ(StructuralProblem(ParseModel(IfModel("Add (z, a)"))), "");
}

TEST(StructuralProblem, NamesAReadOfANameNothingDefines) {
  onnx::ModelProto model = ParseModel(kTwoRelus);
  model.mutable_graph()->mutable_node(1)->set_input(0, "b");
  EXPECT_EQ(StructuralProblem(model), "main: Relu 'Relu_1' reads 'b', which nothing before it defines");
}

TEST(StructuralProblem, TellsNodesOutOfOrderFromUndefinedNames) {
  onnx::ModelProto model = ParseModel(kTwoRelus);
  model.mutable_graph()->mutable_node()->SwapElements(0, 1);
  EXPECT_THAT(StructuralProblem(model),
              AllOf(StartsWith("main: Relu 'Relu_0' reads 'a', which a later node, Relu 'Relu_1', defines"),
                    HasSubstr("nodes must be sorted")));
}

TEST(StructuralProblem, ForgetsASubgraphsNamesAfterIt) {
  EXPECT_EQ(StructuralProblem(ParseModel(IfModel("Add (z, t)"))),
            "main: Add 'Add_2' reads 't', which nothing before it defines");
}

TEST(StructuralProblem, NamesTheSubgraphOfAProblemInIt) {
  onnx::ModelProto model = ParseModel(IfModel("Add (z, a)"));
  model.mutable_graph()->mutable_node(1)->mutable_attribute(0)->mutable_g()->mutable_node(0)->set_input(0, "q");
  const std::string branch = model.graph().node(1).attribute(0).name();
  EXPECT_EQ(StructuralProblem(model),
            "main/If_1:" + branch + ": Relu 'Relu_0' reads 'q', which nothing before it defines");
}

TEST(StructuralProblem, RefusesANameDefinedTwiceInOneScope) {
  onnx::ModelProto model = ParseModel(kTwoRelus);
  model.mutable_graph()->mutable_node(1)->set_output(0, "a");
  model.mutable_graph()->mutable_output(0)->set_name("a");
  EXPECT_EQ(StructuralProblem(model), "main: 'a' is defined twice (an output of Relu 'Relu_1')");
  onnx::ModelProto input_again = ParseModel(kTwoRelus);
  input_again.mutable_graph()->mutable_node(0)->set_output(0, "x");
  input_again.mutable_graph()->mutable_node(1)->set_input(0, "x");
  EXPECT_EQ(StructuralProblem(input_again), "main: 'x' is defined twice (an output of Relu 'Relu_0')");
}

TEST(StructuralProblem, RefusesDuplicateOrUndefinedGraphInputsAndOutputs) {
  onnx::ModelProto inputs = ParseModel(kTwoRelus);
  *inputs.mutable_graph()->add_input() = inputs.graph().input(0);
  EXPECT_EQ(StructuralProblem(inputs), "main: duplicate graph input 'x'");
  onnx::ModelProto outputs = ParseModel(kTwoRelus);
  *outputs.mutable_graph()->add_output() = outputs.graph().output(0);
  EXPECT_EQ(StructuralProblem(outputs), "main: duplicate graph output 'y'");
  onnx::ModelProto undefined = ParseModel(kTwoRelus);
  undefined.mutable_graph()->mutable_output(0)->set_name("w");
  EXPECT_EQ(StructuralProblem(undefined), "main: graph output 'w' is never defined");
}

TEST(StructuralProblem, LetsASubgraphReturnOneValueTwice) {
  onnx::ModelProto model = ParseModel(IfModel("Add (z, a)"));
  auto* then_branch = model.mutable_graph()->mutable_node(1)->mutable_attribute(0)->mutable_g();
  *then_branch->add_output() = then_branch->output(0);
  // The If now returns two values per branch: give it and the else branch a second output too.
  model.mutable_graph()->mutable_node(1)->add_output("z2");
  auto* else_branch = model.mutable_graph()->mutable_node(1)->mutable_attribute(1)->mutable_g();
  *else_branch->add_output() = else_branch->output(0);
  EXPECT_EQ(StructuralProblem(model), "");
}

}  // namespace
}  // namespace rnnstate::structure_rules_test
