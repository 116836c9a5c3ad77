// The values held in a model (io/tensor_data.h) against their dims and type, for every tensor of the model
// wherever it lives: FirstInlineDataProblem names the first that does not fit and where it is, judges raw
// data by the length the caller gives (a payload left in the file), and leaves what it cannot judge.
// InlineDataProblem's own cases (each typed field, raw data, sizes that overflow) are in
// rules/model_rules_spec_test.cc's TensorData tests, beside the validation that runs it.

#include "io/tensor_data.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "test_models.h"
#include "test_names.h"

namespace rnnstate::tensor_data_test {
namespace {

using namespace test_names;

/// raw_data's own length.
std::optional<uint64_t> OwnLength(const onnx::TensorProto& tensor) { return tensor.raw_data().size(); }

/// x + c, where c is a Constant node's value, and an initializer `w`, all FLOAT [2] with two values.
onnx::ModelProto Model() {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[2] x) => (float[2] y) {
  c = Constant <value = float[2] {1, 2}> ()
  s = Add (x, c)
  y = Add (s, w)
})");
  AddFloatInitializer(*model.mutable_graph(), "w", {2}, {1.0f, 2.0f});
  return model;
}

TEST(FirstInlineDataProblem, AcceptsAModelWhoseValuesFit) { EXPECT_EQ(FirstInlineDataProblem(Model(), OwnLength), ""); }

TEST(FirstInlineDataProblem, NamesTheTensorAndWhereItIs) {
  onnx::ModelProto model = Model();
  model.mutable_graph()->mutable_initializer(0)->add_float_data(3.0f);
  EXPECT_EQ(FirstInlineDataProblem(model, OwnLength),
            "tensor 'w' at graph.initializer[0]: float_data has 3 values, but FLOAT [2] takes 2");
  onnx::ModelProto constant = Model();
  onnx::TensorProto& value = *constant.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_t();
  value.clear_float_data();
  value.set_raw_data(std::string(4, '\0'));
  EXPECT_THAT(FirstInlineDataProblem(constant, OwnLength),
              HasSubstr(" at graph.node[0].attribute[0].t: raw_data has 4 bytes, but FLOAT [2] takes 8 bytes"));
}

TEST(FirstInlineDataProblem, ReportsTheFirstInTheModelsOrderNodesBeforeInitializers) {
  onnx::ModelProto model = Model();
  model.mutable_graph()->mutable_initializer(0)->add_dims(3);  // [2, 3]
  onnx::TensorProto& value = *model.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_t();
  value.add_float_data(0.0f);
  EXPECT_THAT(FirstInlineDataProblem(model, OwnLength), HasSubstr(" at graph.node[0].attribute[0].t: "));
}

TEST(FirstInlineDataProblem, JudgesRawDataByTheLengthTheCallerGives) {
  onnx::ModelProto model = Model();
  onnx::TensorProto& w = *model.mutable_graph()->mutable_initializer(0);
  w.clear_float_data();
  w.set_raw_data("placeholder of 24 bytes.");  // stands for a payload left in the file
  EXPECT_THAT(FirstInlineDataProblem(model, OwnLength), HasSubstr("raw_data has 24 bytes"));
  auto in_the_file = [](const onnx::TensorProto& tensor) -> std::optional<uint64_t> {
    return tensor.name() == "w" ? std::optional<uint64_t>(8) : tensor.raw_data().size();
  };
  EXPECT_EQ(FirstInlineDataProblem(model, in_the_file), "");
  auto unknown = [](const onnx::TensorProto&) -> std::optional<uint64_t> { return std::nullopt; };
  EXPECT_EQ(FirstInlineDataProblem(model, unknown), "");
}

TEST(FirstInlineDataProblem, ChecksTheTensorsOfSubgraphsAndSparseValues) {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[2] x, bool c) => (float[2] y) {
  y = If (c) <then_branch = t () => (float[2] a) { a = Identity (x) },
              else_branch = e () => (float[2] b) { b = Neg (x) }>
})");
  onnx::GraphProto& branch = *model.mutable_graph()->mutable_node(0)->mutable_attribute(1)->mutable_g();
  AddFloatInitializer(branch, "k", {2}, {1.0f});
  EXPECT_EQ(FirstInlineDataProblem(model, OwnLength), "");
  branch.mutable_initializer(0)->add_float_data(1.0f);
  EXPECT_THAT(FirstInlineDataProblem(model, OwnLength), HasSubstr("tensor 'k' at graph.node[0].attribute[1].g"));

  onnx::ModelProto sparse = Model();
  onnx::SparseTensorProto* s = sparse.mutable_graph()->add_sparse_initializer();
  s->add_dims(4);
  s->mutable_values()->set_name("sv");
  s->mutable_values()->set_data_type(onnx::TensorProto::FLOAT);
  s->mutable_values()->add_dims(2);
  s->mutable_values()->add_float_data(1.0f);
  EXPECT_EQ(FirstInlineDataProblem(sparse, OwnLength),
            "tensor 'sv' at graph.sparse_initializer[0].values: float_data has 1 value, but FLOAT [2] takes 2");
}

TEST(FirstInlineDataProblem, RefusesANegativeDimEvenInExternalData) {
  onnx::ModelProto model = Model();
  onnx::TensorProto& w = *model.mutable_graph()->mutable_initializer(0);
  w.set_data_location(onnx::TensorProto::EXTERNAL);
  w.clear_float_data();
  EXPECT_EQ(FirstInlineDataProblem(model, OwnLength), "");  // external_data.h checks its range
  w.set_dims(0, -2);
  EXPECT_EQ(FirstInlineDataProblem(model, OwnLength),
            "tensor 'w' at graph.initializer[0]: dim -2 is negative (FLOAT [-2])");
}

}  // namespace
}  // namespace rnnstate::tensor_data_test
