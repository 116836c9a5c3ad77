// The changed region of a rewrite that threads a state out of nested If branches (pruned_bodies.h): the
// bodies keep what changed, the region still vouches only for what onnx's whole-model check accepts, and
// faults in a nested changed node are caught: by the region, by the structural check of the whole output
// its argument relies on, or by the whole-model check where the region gives up.

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
#include "validate/verdicts.h"

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

/// `text` (kNestedGru unless told) parsed (first) and its rewrite.
std::pair<onnx::ModelProto, onnx::ModelProto> RewrittenNest(const std::string& text = kNestedGru) {
  const onnx::ModelProto input = ParseModel(text);
  onnx::ModelProto model = input;
  RewriteModel(model, {}, /*strict=*/false);
  return {input, model};
}

ValidationBaseline Baseline(const onnx::ModelProto& input) {
  ValidationBaseline baseline = MakeValidationBaseline(input, /*inference_succeeded=*/true, "");
  baseline.input = ModelIndex(input).inferred();
  return baseline;
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
  EXPECT_EQ(WholeValidationVerdict(model, Baseline(input)), "");
}

TEST(PrunedBodies, AStateOutputOfAnotherElementTypeIsCaughtThroughThePrunedBodies) {
  auto [input, model] = RewrittenNest();
  // The main graph's new output: its type comes from the GRU two levels down, through both pruned bodies.
  ASSERT_GE(model.graph().output_size(), 2);
  model.mutable_graph()->mutable_output(1)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::DOUBLE);
  const ValidationBaseline baseline = Baseline(input);
  EXPECT_FALSE(ChangesPassOnTheirOwn(model, baseline));
  EXPECT_NE(WholeValidationVerdict(model, baseline), "");
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
  AddUnknownAttribute(*NestedNode(model, "GRU"));
  const ValidationBaseline baseline = Baseline(input);
  EXPECT_FALSE(ChangesPassOnTheirOwn(model, baseline));
  EXPECT_THAT(WholeValidationVerdict(model, baseline), HasSubstr("fails onnx's checker"));
}

/// The graph of the rewritten nest's outer then_branch (T1, T2 and the inner If).
onnx::GraphProto& OuterThenBranch(onnx::ModelProto& model) {
  return *testing::NodeOfType(*model.mutable_graph(), "If").mutable_attribute(0)->mutable_g();
}

/// The graph (any depth) of `model` holding a node of type `op`, or nullptr.
onnx::GraphProto* GraphHolding(onnx::ModelProto& model, const std::string& op) {
  onnx::GraphProto* found = nullptr;
  GraphPath root;
  ForEachGraph(model.graph(), root, [&](const GraphPath&, const onnx::GraphProto& graph) {
    for (const auto& node : graph.node()) {
      if (found == nullptr && node.op_type() == op) found = const_cast<onnx::GraphProto*>(&graph);
    }
  });
  return found;
}

/// A node `output = op (input)` appended to `graph`.
void AddNode(onnx::GraphProto& graph, const std::string& op, const std::string& input, const std::string& output) {
  onnx::NodeProto* node = graph.add_node();
  node->set_op_type(op);
  node->add_input(input);
  node->add_output(output);
}

// Faults in the bodies of changed nodes that the pruned region does not hold, or holds in part: each is
// still refused by ValidateRewritten, by the structural check of the whole output (changed_region.h's
// argument leaves names defined once and before use to it) or by the whole-model check the region leaves
// it to.

TEST(PrunedBodies, AnUnchangedNestedNodeReadingANameTheRewriteRemovedIsRefusedByTheStructuralCheck) {
  auto [input, model] = RewrittenNest();
  // T1's definer gone, as PruneDropped removes a dropped original: T2, unchanged, still reads it.
  onnx::GraphProto& branch = OuterThenBranch(model);
  ASSERT_EQ(branch.node(0).output(0), "T1");
  branch.mutable_node()->DeleteSubrange(0, 1);
  const ValidationBaseline baseline = Baseline(input);
  // The pruned region holds neither T1 nor its unchanged reader: it relies on the structural check here.
  EXPECT_TRUE(ChangesPassOnTheirOwn(model, baseline));
  EXPECT_THAT(ValidationVerdict(model, baseline), HasSubstr("rewritten model is invalid"));
  EXPECT_THAT(ValidationVerdict(model, baseline), HasSubstr("T1"));
}

TEST(PrunedBodies, AChangedNestedNodeReadingADanglingNameIsRefused) {
  auto [input, model] = RewrittenNest();
  *NestedNode(model, "GRU")->mutable_input(0) = "nowhere";
  const ValidationBaseline baseline = Baseline(input);
  EXPECT_FALSE(ChangesPassOnTheirOwn(model, baseline));
  EXPECT_THAT(ValidationVerdict(model, baseline), HasSubstr("rewritten model is invalid"));
}

TEST(PrunedBodies, ANameDefinedTwiceInAChangedBodyIsRefused) {
  auto [input, model] = RewrittenNest();
  // The inner then_branch holds the GRU (changed); U1 is defined there already.
  onnx::GraphProto* inner = GraphHolding(model, "GRU");
  ASSERT_NE(inner, nullptr);
  AddNode(*inner, "Neg", "T2", "U1");
  const ValidationBaseline baseline = Baseline(input);
  EXPECT_THAT(ValidationVerdict(model, baseline), HasSubstr("rewritten model is invalid"));
}

TEST(PrunedBodies, ANestedNameShadowingAnOuterOneIsLeftToTheWholeCheckWhichRefusesIt) {
  // More nodes in the main graph than in the pruned bodies, so that the region does not give up on size.
  std::string text = kNestedGru;
  std::string more = "  B = Neg (A)\n";
  for (int i = 0; i < 12; ++i) more += "  P" + std::to_string(i) + " = Relu (B)\n";
  text.replace(text.find("  B = Neg (A)\n"), 13, more);
  auto [input, model] = RewrittenNest(text);
  ASSERT_TRUE(ChangesPassOnTheirOwn(model, Baseline(input)));
  // T1 of the outer then_branch defined again one level down, beside the GRU: onnx's checker refuses a
  // name defined in nested scopes twice, rnnstate's structural check does not (it looks at one graph at
  // a time), and the pruned region holds only the second definition.
  onnx::GraphProto* inner = GraphHolding(model, "GRU");
  ASSERT_NE(inner, nullptr);
  AddNode(*inner, "Neg", "T2", "T1");
  const ValidationBaseline baseline = Baseline(input);
  EXPECT_FALSE(ChangesPassOnTheirOwn(model, baseline));
  EXPECT_THAT(ValidationVerdict(model, baseline), HasSubstr("fails onnx's checker"));
}

/// A GRU in a Loop body run once (bench_scale's odd `nest` levels), behind more main-graph nodes than the
/// body holds: onnx 1.12's inference keeps the element types of a Loop's outputs but not their shapes.
const char* kGruInLoop = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[1, 6, 2] W, float[1, 6, 2] R) => (float[seq, batch, 2] Z) {
  A = Relu (X)
  B = Neg (A)
  P0 = Relu (B)
  P1 = Relu (P0)
  P2 = Relu (P1)
  P3 = Relu (P2)
  P4 = Relu (P3)
  P5 = Relu (P4)
  P6 = Relu (P5)
  P7 = Relu (P6)
  trip = Constant <value = int64 {1}> ()
  go = Constant <value = bool {1}> ()
  S = Loop (trip, go) <body = b (int64 i, bool ci) => (bool co, float[seq, batch, 2] lz) {
    co = Identity (ci)
    L1 = Relu (B)
    Y = GRU <hidden_size = 2> (L1, W, R)
    ax = Constant <value = int64[1] {1}> ()
    lz = Squeeze (Y, ax)
  }>
  ax0 = Constant <value = int64[1] {0}> ()
  Z = Squeeze (S, ax0)
})";

TEST(PrunedBodies, AGruInALoopBodyIsCheckedByItsPrunedBodyAndAWrongElementTypeIsCaught) {
  auto [input, model] = RewrittenNest(kGruInLoop);
  ASSERT_NE(input.SerializeAsString(), model.SerializeAsString());
  EXPECT_TRUE(ChangesPassOnTheirOwn(model, Baseline(input)));
  EXPECT_EQ(WholeValidationVerdict(model, Baseline(input)), "");
  // The state output the Loop now carries out, declared double: inference keeps a Loop output's element
  // type, so both the region and the whole check refuse it.
  ASSERT_GE(model.graph().output_size(), 2);
  model.mutable_graph()->mutable_output(1)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::DOUBLE);
  const ValidationBaseline baseline = Baseline(input);
  EXPECT_FALSE(ChangesPassOnTheirOwn(model, baseline));
  EXPECT_THAT(ValidationVerdict(model, baseline), HasSubstr("fails onnx shape inference"));
}

TEST(PrunedBodies, AChangedNodeReadingAValueInferenceLeftWithoutAShapeIsLeftToTheWholeModel) {
  // S2 is typed by inference alone, and without a shape: Reshape to a shape of unknown length.
  std::string text = kGruInLoop;
  text.replace(text.find("R) =>"), 5, "R, int64[k] to) =>");
  text.replace(text.find("  Z = Squeeze (S, ax0)"), 22, "  S2 = Reshape (S, to)\n  Z = Squeeze (S2, ax0)");
  auto [input, model] = RewrittenNest(text);
  ASSERT_TRUE(ChangesPassOnTheirOwn(model, Baseline(input)));
  // A new reader of S2 in the rewritten main graph: the region would read S2 as a graph input of no
  // shape, which onnx's checker refuses on a main graph, and could not vouch for what it infers from it.
  AddNode(*model.mutable_graph(), "Relu", "S2", "Q");
  onnx::ValueInfoProto* output = model.mutable_graph()->add_output();
  output->set_name("Q");
  output->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  output->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_param("q");
  google::protobuf::Arena arena;
  const InferredModel before = ModelIndex(input).inferred();
  EXPECT_FALSE(FindChangedRegion(model, before, arena));
  EXPECT_FALSE(ChangesPassOnTheirOwn(model, Baseline(input)));
  EXPECT_EQ(WholeValidationVerdict(model, Baseline(input)), "");
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
