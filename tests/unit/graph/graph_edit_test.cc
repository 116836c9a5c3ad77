// SurroundNodes, the node-list rebuild that the --time-axis stage, layout and packing use to put nodes
// before and after a graph's own.

#include "graph/graph_edit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "test_models.h"
#include "test_names.h"

namespace rnnstate::graph_edit_test {
namespace {

using namespace test_names;

std::vector<std::string> NodeNames(const onnx::GraphProto& graph) {
  std::vector<std::string> names;
  for (const auto& node : graph.node()) names.push_back(node.name());
  return names;
}

onnx::NodeProto Named(const std::string& name) {
  onnx::NodeProto node;
  node.set_name(name);
  node.set_op_type("Identity");
  return node;
}

TEST(SetTensorInfo, MakesTheModelsOwnMessageWhatTensorInfoReturns) {
  google::protobuf::Arena arena;
  auto* graph = google::protobuf::Arena::CreateMessage<onnx::GraphProto>(&arena);
  onnx::ValueInfoProto* input = graph->add_input();
  input->set_name("old");
  input->set_doc_string("dropped with the rest");
  input->mutable_type()->mutable_sequence_type();
  const std::vector<Dim> shape = {Dim{1, ""}, Dim{-1, "batch"}, Dim{-1, ""}};
  SetTensorInfo(*input, "h_in", onnx::TensorProto::FLOAT, shape);
  EXPECT_EQ(input->SerializeAsString(), TensorInfo("h_in", onnx::TensorProto::FLOAT, shape).SerializeAsString());
  EXPECT_EQ(input->GetArena(), &arena);
  // Its own name given back: kept, not emptied by the clearing.
  SetTensorInfo(*input, input->name(), onnx::TensorProto::INT64, {MetaDim{2, ""}});
  EXPECT_EQ(input->SerializeAsString(),
            TensorInfo("h_in", onnx::TensorProto::INT64, std::vector<MetaDim>{MetaDim{2, ""}}).SerializeAsString());
}

TEST(SurroundNodes, PutsNodesBeforeAndAfterInOrderAndKeepsTheGraphsOwnOnItsArena) {
  google::protobuf::Arena arena;
  auto* model = google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
  model->CopyFrom(ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[2] x) => (float[2] z) {
  y = Relu (x)
  z = Neg (y)
})"));
  onnx::GraphProto& graph = *model->mutable_graph();
  graph.mutable_node(0)->set_name("relu");
  graph.mutable_node(1)->set_name("neg");
  const onnx::NodeProto* relu = &graph.node(0);
  const onnx::NodeProto* neg = &graph.node(1);
  SurroundNodes(graph, {Named("b1"), Named("b2")}, {Named("a1")});
  EXPECT_THAT(NodeNames(graph), ElementsAre("b1", "b2", "relu", "neg", "a1"));
  // The graph's own nodes are moved, not copied off the arena and back.
  EXPECT_EQ(&graph.node(2), relu);
  EXPECT_EQ(&graph.node(3), neg);
  for (const auto& node : graph.node()) EXPECT_EQ(node.GetArena(), &arena);
}

TEST(SurroundNodes, WorksOnAModelOnTheHeap) {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[2] x) => (float[2] y) {
  y = Relu (x)
})");
  model.mutable_graph()->mutable_node(0)->set_name("relu");
  SurroundNodes(*model.mutable_graph(), {Named("b")}, {Named("a")});
  EXPECT_THAT(NodeNames(model.graph()), ElementsAre("b", "relu", "a"));
}

}  // namespace
}  // namespace rnnstate::graph_edit_test
