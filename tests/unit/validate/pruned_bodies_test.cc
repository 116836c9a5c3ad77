// The changed region of a rewrite that threads a state out of nested If branches (pruned_bodies.h): the
// bodies keep what changed, the region still vouches only for what onnx's whole-model check accepts, and
// faults in a nested changed node are caught.

#include "validate/pruned_bodies.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph/graph_path.h"
#include "graph/model_index.h"
#include "pipeline_stages.h"
#include "rnnstate/error.h"
#include "test_models.h"
#include "test_names.h"
#include "validate/changed_region.h"
#include "validate/validate.h"

namespace rnnstate::pruned_bodies_test {
namespace {

using namespace test_names;

/// A GRU two If levels deep, each level behind a chain of cheap nodes (bench_scale's `nest` in small): the
/// rewrite threads its state out through both Ifs, changing both, and leaves the chains alone.
const char* kNestedGru = R"(<ir_version: 8, opset_import: ["" : 14]>
g (bool c, float[seq, batch, 2] X, float[1, 6, 2] W, float[1, 6, 2] R) => (float[seq, batch, 2] Z) {
  A = Relu (X)
  B = Neg (A)
  Z = If (c) <then_branch = t () => (float[seq, batch, 2] tz) {
    T1 = Relu (B)
    T2 = Neg (T1)
    tz = If (c) <then_branch = u () => (float[seq, batch, 2] uz) {
      U1 = Relu (T2)
      Y = GRU <hidden_size = 2> (U1, W, R)
      ax = Constant <value = int64[1] {1}> ()
      uz = Squeeze (Y, ax)
    }, else_branch = v () => (float[seq, batch, 2] vz) { vz = Identity (T2) }>
  }, else_branch = e () => (float[seq, batch, 2] ez) { ez = Identity (B) }>
})";

/// kNestedGru (first) and its rewrite.
std::pair<onnx::ModelProto, onnx::ModelProto> RewrittenNest() {
  const onnx::ModelProto input = ParseModel(kNestedGru);
  onnx::ModelProto model = input;
  RewriteModel(model, {}, /*strict=*/false);
  return {input, model};
}

ValidationBaseline Baseline(const onnx::ModelProto& input) {
  ValidationBaseline baseline = MakeValidationBaseline(input, /*inference_succeeded=*/true, "");
  baseline.input = ModelIndex(input).inferred();
  return baseline;
}

/// ValidateRewritten's verdict on `model` with the region left out (onnx's checker and inference on the
/// whole): "" when it passes, else the error.
std::string WholeVerdict(const onnx::ModelProto& model, ValidationBaseline baseline) {
  baseline.input = InferredModel{};
  try {
    ValidateRewritten(model, baseline);
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

/// The values every node of `graph` defines, at any depth.
std::vector<std::string> DefinedBelow(const onnx::GraphProto& graph) {
  std::vector<std::string> names;
  GraphPath root;
  ForEachGraph(graph, root, [&](const GraphPath&, const onnx::GraphProto& inner) {
    for (const auto& node : inner.node()) names.insert(names.end(), node.output().begin(), node.output().end());
  });
  return names;
}

/// The first node of type `op` at any depth of `model`.
onnx::NodeProto* NestedNode(onnx::ModelProto& model, const std::string& op) {
  onnx::NodeProto* found = nullptr;
  GraphPath root;
  ForEachGraph(model.graph(), root, [&](const GraphPath&, const onnx::GraphProto& graph) {
    for (const auto& node : graph.node()) {
      if (found == nullptr && node.op_type() == op) found = const_cast<onnx::NodeProto*>(&node);
    }
  });
  return found;
}

TEST(PrunedBodies, TheRegionOfANestedRewriteKeepsWhatChangedInTheBodiesNotTheirChains) {
  const auto [input, model] = RewrittenNest();
  ASSERT_NE(input.SerializeAsString(), model.SerializeAsString());
  google::protobuf::Arena arena;
  const InferredModel before = ModelIndex(input).inferred();
  const std::optional<ChangedRegion> region = FindChangedRegion(model, before, arena);
  ASSERT_TRUE(region);
  const std::vector<std::string> defined = DefinedBelow(region->model->graph());
  EXPECT_THAT(defined, Contains("Y"));
  EXPECT_THAT(defined, Contains("tz"));
  // The chains are not the region's: T2, which the inner If's branches read, comes in typed.
  for (const char* chain : {"A", "B", "T1", "T2", "U1"}) EXPECT_THAT(defined, Not(Contains(chain))) << chain;
  bool t2_is_an_input = false;
  for (const auto& input_info : region->model->graph().input()) {
    if (input_info.name() == "T2") t2_is_an_input = input_info.type().tensor_type().shape().dim_size() == 3;
  }
  EXPECT_TRUE(t2_is_an_input);
  EXPECT_TRUE(ChangesPassOnTheirOwn(model, Baseline(input)));
  // What the region vouches for, onnx's checker and inference accept on the whole.
  EXPECT_EQ(WholeVerdict(model, Baseline(input)), "");
}

TEST(PrunedBodies, AStateOutputOfAnotherElementTypeIsCaughtThroughThePrunedBodies) {
  auto [input, model] = RewrittenNest();
  // The main graph's new output: its type comes from the GRU two levels down, through both pruned bodies.
  ASSERT_GE(model.graph().output_size(), 2);
  model.mutable_graph()->mutable_output(1)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::DOUBLE);
  const ValidationBaseline baseline = Baseline(input);
  EXPECT_FALSE(ChangesPassOnTheirOwn(model, baseline));
  EXPECT_NE(WholeVerdict(model, baseline), "");
}

TEST(PrunedBodies, AHiddenSizeTwoLevelsDeepTheRegionCannotVouchForIsLeftToTheWholeModel) {
  auto [input, model] = RewrittenNest();
  for (auto& attribute : *NestedNode(model, "GRU")->mutable_attribute()) {
    if (attribute.name() == "hidden_size") attribute.set_i(3);
  }
  // onnx 1.12 lets the branches' outputs disagree with their declarations; the region, which compares the
  // values the rest reads with the input's types, does not vouch for it.
  EXPECT_FALSE(ChangesPassOnTheirOwn(model, Baseline(input)));
}

TEST(PrunedBodies, ANestedNodeOnnxsCheckerRefusesIsCaught) {
  auto [input, model] = RewrittenNest();
  onnx::AttributeProto* bogus = NestedNode(model, "GRU")->add_attribute();
  bogus->set_name("no_such_attribute");
  bogus->set_type(onnx::AttributeProto::INT);
  bogus->set_i(1);
  const ValidationBaseline baseline = Baseline(input);
  EXPECT_FALSE(ChangesPassOnTheirOwn(model, baseline));
  EXPECT_THAT(WholeVerdict(model, baseline), HasSubstr("fails onnx's checker"));
}

TEST(NamesDefinedOnce, SiblingBranchesReusingANameAreRefused) {
  const onnx::ModelProto nested = ParseModel(kNestedGru);
  EXPECT_TRUE(NamesDefinedOnce(nested.graph()));
  // An input with its default initializer is one definition.
  onnx::ModelProto with_default = nested;
  *with_default.mutable_graph()->add_initializer() = onnx::TensorProto();
  with_default.mutable_graph()->mutable_initializer(0)->set_name("W");
  EXPECT_TRUE(NamesDefinedOnce(with_default.graph()));
  const onnx::ModelProto siblings = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (bool c, float[2] X) => (float[2] Z) {
  Z = If (c) <then_branch = t () => (float[2] a) { a = Relu (X) }, else_branch = e () => (float[2] a) { a = Neg (X) }>
})");
  EXPECT_FALSE(NamesDefinedOnce(siblings.graph()));
}

}  // namespace
}  // namespace rnnstate::pruned_bodies_test
