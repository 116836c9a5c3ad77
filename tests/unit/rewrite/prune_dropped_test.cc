// The computations of replaced initial states removed once unused (rewrite/prune_dropped.h): followed back
// from the replaced values only, through nodes and initializers nothing else reads; what is still read (by
// a node, a subgraph, a graph output), graph inputs and dead code the model already had stay.

#include "rewrite/prune_dropped.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_models.h"
#include "test_names.h"

namespace rnnstate::prune_dropped_test {
namespace {

using namespace test_names;

/// The first output of every node of `graph`, in order.
std::vector<std::string> NodeOutputs(const onnx::GraphProto& graph) {
  std::vector<std::string> outputs;
  for (const auto& node : graph.node()) outputs.push_back(node.output(0));
  return outputs;
}

/// PyTorch's zeros for h0 sized from x's batch; the GRU reads h0 until a rewrite replaces it by `h_in`
/// (done here by hand); `dead` was already unused in the model.
onnx::ModelProto Replaced(const std::string& extra_output = "") {
  onnx::ModelProto model = ParseModel(std::string(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R, float[1, batch, 3] h_in)
    => (float[seq, 1, batch, 3] Y)" + extra_output +
                                                  R"() {
  shape = Shape (X)
  one = Constant <value = int64[1] {1}> ()
  b = Gather (shape, one)
  dims = Concat <axis = 0> (one, b, three)
  h0 = ConstantOfShape (dims)
  dead = Neg (X)
  Y, Yh = GRU <hidden_size = 3> (X, W, R, , , h_in)
})"));
  AddFloatInitializer(*model.mutable_graph(), "three", {1}, {3.0f});
  model.mutable_graph()->mutable_initializer(0)->set_data_type(onnx::TensorProto::INT64);
  model.mutable_graph()->mutable_initializer(0)->clear_float_data();
  model.mutable_graph()->mutable_initializer(0)->add_int64_data(3);
  return model;
}

TEST(PruneDropped, RemovesTheComputationOfAReplacedStateAndItsInitializers) {
  onnx::ModelProto model = Replaced();
  PruneDropped(*model.mutable_graph(), {"h0"});
  EXPECT_THAT(NodeOutputs(model.graph()), ElementsAre("dead", "Y"));
  EXPECT_THAT(InitializerNames(model.graph()), IsEmpty());
  EXPECT_THAT(InputNames(model.graph()), ElementsAre("X", "W", "R", "h_in"));
}

TEST(PruneDropped, KeepsWhatIsStillReadAndTheDeadCodeItDidNotMake) {
  onnx::ModelProto model = Replaced();
  // The batch is read by another node too: Shape and Gather stay, the rest goes.
  onnx::NodeProto* reader = model.mutable_graph()->add_node();
  reader->set_op_type("Identity");
  reader->add_input("b");
  reader->add_output("batch_out");
  *model.mutable_graph()->add_output() = model.graph().input(0);
  model.mutable_graph()->mutable_output(1)->set_name("batch_out");
  PruneDropped(*model.mutable_graph(), {"h0"});
  EXPECT_THAT(NodeOutputs(model.graph()), ElementsAre("shape", "one", "b", "dead", "Y", "batch_out"));
  EXPECT_THAT(InitializerNames(model.graph()), IsEmpty());
}

TEST(PruneDropped, KeepsAValueAGraphOutputOrASubgraphReads) {
  onnx::ModelProto as_output = Replaced(", int64[3] dims");
  PruneDropped(*as_output.mutable_graph(), {"h0"});
  EXPECT_THAT(NodeOutputs(as_output.graph()), ElementsAre("shape", "one", "b", "dims", "dead", "Y"));
  EXPECT_THAT(InitializerNames(as_output.graph()), ElementsAre("three"));

  onnx::ModelProto in_branch = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[2] x, bool c) => (float[2] y) {
  s = Neg (x)
  h0 = Relu (s)
  y = If (c) <then_branch = t () => (float[2] a) { a = Identity (s) },
              else_branch = e () => (float[2] e_out) { e_out = Identity (x) }>
})");
  PruneDropped(*in_branch.mutable_graph(), {"h0"});
  EXPECT_THAT(NodeOutputs(in_branch.graph()), ElementsAre("s", "y"));
}

TEST(PruneDropped, ARemovedNodeReleasesWhatItsSubgraphsRead) {
  // h0 comes from an If whose branches read s and an initializer from the outer scope: all go with it,
  // the initializer once (both branches read it); what the outer graph still reads stays.
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[2] x, bool c) => (float[2] y) {
  s = Neg (x)
  h0 = If (c) <then_branch = t () => (float[2] a) { a = Add (s, w) },
               else_branch = e () => (float[2] e_out) { e_out = Mul (w, x) }>
  y = Relu (x)
})");
  AddFloatInitializer(*model.mutable_graph(), "w", {2}, {1.0f, 2.0f});
  PruneDropped(*model.mutable_graph(), {"h0"});
  EXPECT_THAT(NodeOutputs(model.graph()), ElementsAre("y"));
  EXPECT_THAT(InitializerNames(model.graph()), IsEmpty());
}

TEST(PruneDropped, ANodeWithAnotherOutputStillReadStays) {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[4] x) => (float[2] y) {
  h0, y = Split (x)
})");
  PruneDropped(*model.mutable_graph(), {"h0"});
  EXPECT_THAT(NodeOutputs(model.graph()), ElementsAre("h0"));
}

TEST(PruneDropped, NeverRemovesAGraphInputOrItsDefault) {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[2] x, float[2] d) => (float[2] y) {
  h0 = Add (x, d)
  y = Neg (x)
})");
  AddFloatInitializer(*model.mutable_graph(), "d", {2}, {0.0f});
  PruneDropped(*model.mutable_graph(), {"h0"});
  EXPECT_THAT(NodeOutputs(model.graph()), ElementsAre("y"));
  EXPECT_THAT(InputNames(model.graph()), ElementsAre("x", "d"));
  EXPECT_THAT(InitializerNames(model.graph()), ElementsAre("d"));
}

TEST(PruneDropped, NothingDroppedChangesNothing) {
  onnx::ModelProto model = Replaced();
  const std::string before = Bytes(model);
  PruneDropped(*model.mutable_graph(), {});
  EXPECT_EQ(Bytes(model), before);
  PruneDropped(*model.mutable_graph(), {"Y"});  // still a graph output
  EXPECT_EQ(Bytes(model), before);
}

}  // namespace
}  // namespace rnnstate::prune_dropped_test
