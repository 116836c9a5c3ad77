// The index of every scope of a model (graph/model_index.h): each value's producer by kind, its uses (a
// subgraph's read from the outer scope counted on the node holding it), names resolved up through the
// enclosing graphs, types declared first and inferred where nothing is declared, every name in use, and
// what is known when onnx's inference fails.

#include "graph/model_index.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "graph/proto_access.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::model_index_test {
namespace {

using namespace test_names;

/// Main graph: x (fed), w (an initializer), d (an input with a default), r = Relu(x) (node 0) and the Loop
/// "loop" (node 1) whose body reads r and w from the main graph, defines s (node 1 of the body) and has an
/// If (node 2 of the body) whose then branch reads s and w.
onnx::ModelProto Scopes() {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
main (float[batch, 2] x, float[2] d, int64 trip, bool cond) => (float[batch, 2] y) {
  r = Relu (x)
  y = Loop (trip, cond, x) <body = body (int64 i, bool c_in, float[n, 2] v) => (bool c_out, float[n, 2] o) {
    c_out = Identity (c_in)
    s = Add (v, r)
    o = If (c_in) <then_branch = t () => (float[n, 2] a) { a = Mul (s, w) },
                   else_branch = e () => (float[n, 2] b) { b = Add (s, d) }>
  }>
})");
  model.mutable_graph()->mutable_node(1)->set_name("loop");
  AddFloatInitializer(*model.mutable_graph(), "w", {2}, {1.0f});
  AddFloatInitializer(*model.mutable_graph(), "d", {2}, {0.0f});
  return model;
}

const GraphPath kBody = {GraphStep{1, "body", -1}};
const GraphPath kThen = {GraphStep{1, "body", -1}, GraphStep{2, "then_branch", -1}};

std::string KindOf(const Producer& producer) {
  switch (producer.kind) {
    case Producer::Kind::kGraphInput:
      return "input " + std::to_string(producer.index);
    case Producer::Kind::kInitializer:
      return "initializer " + std::to_string(producer.index);
    case Producer::Kind::kDefaultedInput:
      return "defaulted input " + std::to_string(producer.index);
    case Producer::Kind::kNode:
      return "node " + std::to_string(producer.index) + ":" + std::to_string(producer.slot);
    case Producer::Kind::kOuterScope:
      return "outer";
  }
  return "";
}

/// The declared or inferred type of `name` seen from `path`, as "FLOAT[batch,2]" ("" when unknown).
std::string TypeText(const ModelIndex& index, const GraphPath& path, const std::string& name) {
  const onnx::TypeProto* type = index.TypeOf(path, name);
  if (type == nullptr || !type->has_tensor_type()) return "";
  return DataTypeName(type->tensor_type().elem_type()) + ShapeText(type->tensor_type().shape());
}

TEST(GraphIndex, KnowsEachValuesProducerByKind) {
  const onnx::ModelProto model = Scopes();
  const ModelIndex index(model);
  const GraphIndex& main = index.graph({});
  EXPECT_EQ(KindOf(main.ProducerOf("x")), "input 0");
  EXPECT_EQ(KindOf(main.ProducerOf("d")), "defaulted input 1");
  EXPECT_EQ(KindOf(main.ProducerOf("w")), "initializer 0");
  EXPECT_EQ(KindOf(main.ProducerOf("r")), "node 0:0");
  EXPECT_EQ(KindOf(main.ProducerOf("y")), "node 1:0");
  EXPECT_EQ(KindOf(main.ProducerOf("s")), "outer");  // the body's, not the main graph's
  EXPECT_FALSE(main.Defines("nothing"));
  EXPECT_TRUE(main.Defines("d"));
  const GraphIndex& body = index.graph(kBody);
  EXPECT_EQ(KindOf(body.ProducerOf("v")), "input 2");
  EXPECT_EQ(KindOf(body.ProducerOf("s")), "node 1:0");
  EXPECT_EQ(KindOf(body.ProducerOf("r")), "outer");
  EXPECT_EQ(main.inputs.at("trip"), 2);
  EXPECT_EQ(main.outputs.at("y"), 0);
  EXPECT_EQ(main.initializers.at("d"), 1);
  EXPECT_EQ(body.parent, std::optional<GraphPath>(GraphPath{}));
  EXPECT_EQ(body.parent_index, &main);
  EXPECT_EQ(body.proto, GraphAttribute(model.graph().node(1), "body"));
  EXPECT_EQ(main.parent, std::nullopt);
}

TEST(GraphIndex, CountsASubgraphsReadOnTheNodeHoldingIt) {
  const onnx::ModelProto model = Scopes();
  const ModelIndex index(model);
  const GraphIndex& main = index.graph({});
  auto uses = [](const Consumers& consumers) {
    std::vector<std::string> texts;
    for (const Consumer& c : consumers) texts.push_back(std::to_string(c.node) + ":" + std::to_string(c.slot));
    return texts;
  };
  EXPECT_THAT(uses(main.ConsumersOf("x")), ElementsAre("0:0", "1:2"));
  EXPECT_THAT(uses(main.ConsumersOf("r")), ElementsAre("1:-1"));
  EXPECT_THAT(uses(main.ConsumersOf("w")), ElementsAre("1:-1"));  // read two levels down
  EXPECT_THAT(uses(main.ConsumersOf("y")), IsEmpty());
  EXPECT_THAT(uses(main.ConsumersOf("nothing")), IsEmpty());
  EXPECT_THAT(main.outer_references.at(1), ElementsAre("d", "r", "w"));
  const GraphIndex& body = index.graph(kBody);
  EXPECT_THAT(uses(body.ConsumersOf("s")), ElementsAre("2:-1"));
  EXPECT_THAT(uses(body.ConsumersOf("r")), ElementsAre("1:1"));
  EXPECT_THAT(body.outer_references.at(2), ElementsAre("d", "s", "w"));
}

TEST(ModelIndex, ResolvesANameUpThroughTheEnclosingGraphs) {
  const onnx::ModelProto model = Scopes();
  const ModelIndex index(model);
  const ResolvedName r = index.Resolve(kThen, "r");
  EXPECT_TRUE(r.graph.empty());
  EXPECT_EQ(KindOf(r.producer), "node 0:0");
  EXPECT_EQ(r.node, &model.graph().node(0));
  EXPECT_EQ(r.index, &index.graph({}));
  const ResolvedName s = index.Resolve(kThen, "s");
  EXPECT_EQ(s.graph, kBody);
  EXPECT_EQ(s.node->op_type(), "Add");
  const ResolvedName w = index.Resolve(kThen, "w");
  EXPECT_TRUE(w.graph.empty());
  EXPECT_EQ(KindOf(w.producer), "initializer 0");
  EXPECT_EQ(w.node, nullptr);
  const ResolvedName a = index.Resolve(kThen, "a");
  EXPECT_EQ(a.graph, kThen);
  const ResolvedName unknown = index.Resolve(kThen, "nothing");
  EXPECT_TRUE(unknown.graph.empty());
  EXPECT_EQ(KindOf(unknown.producer), "outer");
  EXPECT_THROW(index.graph({GraphStep{0, "body", -1}}), std::out_of_range);
}

TEST(ModelIndex, TypesAreDeclaredFirstThenInferredThenTheInitializers) {
  onnx::ModelProto model = Scopes();
  // A declared type that differs from what inference would say is the one kept.
  *model.mutable_graph()->add_value_info() = model.graph().input(0);
  model.mutable_graph()->mutable_value_info(0)->set_name("r");
  model.mutable_graph()
      ->mutable_value_info(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_param("rows");
  const ModelIndex index(model);
  EXPECT_EQ(index.inference_error(), "");
  EXPECT_EQ(TypeText(index, {}, "r"), "FLOAT[rows,2]");
  EXPECT_EQ(TypeText(index, {}, "x"), "FLOAT[batch,2]");
  EXPECT_EQ(TypeText(index, {}, "w"), "FLOAT[2]");
  EXPECT_EQ(TypeText(index, kBody, "c_out"), "BOOL[]");      // inferred in the body
  EXPECT_EQ(TypeText(index, kThen, "x"), "FLOAT[batch,2]");  // found in the main graph
  EXPECT_EQ(TypeText(index, {}, "s"), "");
  EXPECT_THAT(index.used_dim_params(), AllOf(Contains("batch"), Contains("rows"), Contains("n")));
  EXPECT_EQ(index.onnx_opset(), 14);
  const InferredModel inferred = index.inferred();
  ASSERT_NE(inferred.model, nullptr);
  EXPECT_EQ(inferred.declared_value_infos, 1);
  // Inference appended the types of the body's values after the body's declarations (none).
  const onnx::GraphProto& body = *GraphAttribute(inferred.model->graph().node(1), "body");
  EXPECT_EQ(inferred.declared_in_subgraphs->at(&body), 0);
  EXPECT_GT(body.value_info_size(), 0);
}

TEST(ModelIndex, KeepsTheDeclaredTypesWhenInferenceFails) {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[2, 3] x, float[4, 5] w) => (float[2, 5] y) {
  h = Relu (x)
  y = Flatten <axis = "one"> (h)
})");
  const ModelIndex index(model);
  EXPECT_THAT(index.inference_error(), HasSubstr("Flatten"));
  EXPECT_EQ(TypeText(index, {}, "y"), "FLOAT[2,5]");
  EXPECT_EQ(TypeText(index, {}, "h"), "");
  EXPECT_EQ(KindOf(index.graph({}).ProducerOf("h")), "node 0:0");
}

TEST(ModelIndex, UsesEveryValueNodeAndGraphNameOfEveryScope) {
  onnx::ModelProto model = Scopes();
  *model.mutable_graph()->add_value_info() = model.graph().input(0);
  model.mutable_graph()->mutable_value_info(0)->set_name("declared_only");
  const ModelIndex index(model);
  for (const char* name : {"x", "w", "r", "y", "loop", "main", "body", "t", "s", "a", "b", "v", "declared_only"}) {
    EXPECT_TRUE(index.UsesName(name)) << name;
  }
  EXPECT_FALSE(index.UsesName("batch"));  // a dim_param, not a value
  EXPECT_FALSE(index.UsesName("nothing"));
  NameAllocator names = index.NewNames();
  EXPECT_EQ(names.Allocate("s"), "s_2");
  EXPECT_EQ(names.Allocate("loop"), "loop_2");
  EXPECT_EQ(names.Allocate("fresh"), "fresh");
}

}  // namespace
}  // namespace rnnstate::model_index_test
