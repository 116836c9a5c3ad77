// The region of a rewritten model that onnx checks instead of the whole (changed_region.h): what it holds,
// where it declines, and that it never passes a model the whole-model check refuses — on hand-made
// changes and on the rewrites of every bundled model, with faults injected into them.

#include "validate/changed_region.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "graph/graph_path.h"
#include "graph/model_index.h"
#include "pipeline_stages.h"
#include "rnnstate/error.h"
#include "test_models.h"
#include "test_names.h"
#include "validate/validate.h"
#include "validate/verdicts.h"

namespace rnnstate::changed_region_test {
namespace {

using namespace test_names;

const char* kHeader = R"(<ir_version: 8, opset_import: ["" : 14]>
)";

/// A GRU without initial state between cheap nodes: what the rewrite changes is the GRU and what it adds
/// around it, not the chain.
const char* kChainedGru =
    R"(g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, batch, 3] Z) {
  A = Relu (X)
  B = Neg (A)
  Y = GRU <hidden_size = 3> (B, W, R)
  C = Relu (Y)
  Z = Neg (C)
})";

onnx::ModelProto Model(const std::string& graph) { return ParseModel(kHeader + graph); }

/// X [4, 2] -> `op` -> Y -> Neg -> Z: a node and its one reader, for a test to change one of them.
onnx::ModelProto NegAfter(const std::string& op) {
  return Model("g (float[4, 2] X) => (float[4, 2] Z) {\n  Y = " + op + " (X)\n  Z = Neg (Y)\n}");
}

/// The input model as the analysis keeps it: its structural copy after shape inference.
InferredModel Inferred(const onnx::ModelProto& model) { return ModelIndex(model).inferred(); }

/// The baseline a rewrite of `input` validates against, with the input kept for the region.
ValidationBaseline Baseline(const onnx::ModelProto& input, const std::string& dir = "") {
  ValidationBaseline baseline = MakeValidationBaseline(input, /*inference_succeeded=*/true, dir);
  baseline.input = Inferred(input);
  return baseline;
}

/// FindChangedRegion of `model` against `input`, with the memory it lives in.
struct Region {
  Region(const onnx::ModelProto& model, const onnx::ModelProto& input)
      : before(Inferred(input)), found(FindChangedRegion(model, before, arena)) {}
  google::protobuf::Arena arena;
  InferredModel before;
  std::optional<ChangedRegion> found;
};

/// The names of the region's nodes' op types, in order.
std::vector<std::string> Ops(const ChangedRegion& region) {
  std::vector<std::string> ops;
  for (const auto& node : region.model->graph().node()) ops.push_back(node.op_type());
  return ops;
}

std::vector<std::string> Names(const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& infos) {
  std::vector<std::string> names;
  for (const auto& info : infos) names.push_back(info.name());
  return names;
}

/// kChainedGru (first) and its rewrite.
std::pair<onnx::ModelProto, onnx::ModelProto> RewrittenChain() {
  const onnx::ModelProto input = Model(kChainedGru);
  onnx::ModelProto model = input;
  RewriteModel(model, {}, /*strict=*/false);
  return {input, model};
}

TEST(ChangedRegion, AnUnchangedModelHasAnEmptyRegionThatPasses) {
  const onnx::ModelProto model = Model(kChainedGru);
  const Region cut(model, model);
  ASSERT_TRUE(cut.found);
  const ChangedRegion* region = &*cut.found;
  EXPECT_EQ(region->changed_nodes, 0);
  EXPECT_EQ(region->model->graph().node_size(), 0);
  EXPECT_EQ(region->model->graph().input_size(), 0);
  EXPECT_TRUE(ChangesPassOnTheirOwn(model, Baseline(model)));
}

TEST(ChangedRegion, HoldsTheRewrittenNodeAndWhatTheRewriteAddedNotTheChain) {
  const auto [input, model] = RewrittenChain();
  const Region cut(model, input);
  ASSERT_TRUE(cut.found);
  const ChangedRegion* region = &*cut.found;
  const std::vector<std::string> ops = Ops(*region);
  EXPECT_THAT(ops, ::testing::Contains("GRU"));
  EXPECT_THAT(ops, ::testing::Not(::testing::Contains("Relu")));
  EXPECT_THAT(ops, ::testing::Not(::testing::Contains("Neg")));
  EXPECT_LT(region->changed_nodes, model.graph().node_size());
  // The new state input and output are the region's; B, W and R are read from the unchanged rest, typed
  // as the input's inference typed them.
  const auto& graph = region->model->graph();
  EXPECT_THAT(Names(graph.input()), ::testing::IsSupersetOf({"GRU_2.h_in", "B", "W", "R"}));
  EXPECT_THAT(Names(graph.output()), ElementsAre("GRU_2.h_out"));
  for (const auto& info : graph.input()) {
    if (info.name() == "B") {
      EXPECT_EQ(info.type().tensor_type().shape().dim(2).dim_value(), 2);
    }
  }
  // Y is read by the chain after the GRU: the region must infer it as the input did.
  std::vector<std::string> kept;
  for (const auto& [name, type] : region->kept) kept.push_back(name);
  EXPECT_THAT(kept, ::testing::Contains("Y"));
  EXPECT_TRUE(ChangesPassOnTheirOwn(model, Baseline(input)));
}

TEST(ChangedRegion, AWrongDeclaredStateShapeIsCaughtInTheRegion) {
  auto [input, model] = RewrittenChain();
  auto* output = model.mutable_graph()->mutable_output(1);
  output->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(2)->set_dim_value(4);
  const ValidationBaseline baseline = Baseline(input);
  EXPECT_FALSE(ChangesPassOnTheirOwn(model, baseline));
  EXPECT_THAT(ValidationVerdict(model, baseline), HasSubstr("rewritten model fails onnx shape inference"));
}

TEST(ChangedRegion, AChangedNodeOnnxsCheckerRefusesIsCaught) {
  auto [input, model] = RewrittenChain();
  AddUnknownAttribute(testing::NodeOfType(*model.mutable_graph(), "GRU"));
  const ValidationBaseline baseline = Baseline(input);
  EXPECT_FALSE(ChangesPassOnTheirOwn(model, baseline));
  EXPECT_THAT(ValidationVerdict(model, baseline), HasSubstr("rewritten model fails onnx's checker"));
}

TEST(ChangedRegion, AValueTheRestReadsInferredOtherwiseSendsTheCheckToTheWholeModel) {
  const onnx::ModelProto input = NegAfter("Identity");
  onnx::ModelProto model = input;
  // Y is now an int64 [2]: Neg, unchanged, would read another type than it did.
  onnx::NodeProto& producer = testing::NodeOfType(*model.mutable_graph(), "Identity");
  producer.set_op_type("Shape");
  const Region cut(model, input);
  ASSERT_TRUE(cut.found);
  const ChangedRegion* region = &*cut.found;
  EXPECT_THAT(Ops(*region), ElementsAre("Shape"));
  EXPECT_FALSE(ChangesPassOnTheirOwn(model, Baseline(input)));
}

TEST(ChangedRegion, AGraphInputDeclaredOtherwisePutsItsReadersInTheRegion) {
  const onnx::ModelProto input = NegAfter("Relu");
  onnx::ModelProto model = input;
  model.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_param("T");
  const Region cut(model, input);
  ASSERT_TRUE(cut.found);
  const ChangedRegion* region = &*cut.found;
  EXPECT_THAT(Ops(*region), ElementsAre("Relu"));
  // Relu now gives [T, 2] where Neg read [4, 2]: not for the region to vouch for.
  EXPECT_FALSE(ChangesPassOnTheirOwn(model, Baseline(input)));
  EXPECT_EQ(WholeValidationVerdict(model, Baseline(input)), "");
}

TEST(ChangedRegion, RemovedAndInsertedNodesLeaveTheRestOutOfTheRegion) {
  const onnx::ModelProto input = Model(R"(g (float[4, 2] X) => (float[4, 2] Z) {
  A = Relu (X)
  Dead = Neg (A)
  Dead2 = Neg (Dead)
  B = Relu (A)
  C = Relu (B)
  Z = Neg (C)
})");
  onnx::ModelProto model = input;
  auto* nodes = model.mutable_graph()->mutable_node();
  nodes->DeleteSubrange(1, 2);  // the unused Neg nodes
  onnx::NodeProto inserted;
  inserted.set_op_type("Abs");
  inserted.add_input("B");
  inserted.add_output("Extra");
  *nodes->Add() = inserted;
  *model.mutable_graph()->add_output() = model.graph().output(0);
  model.mutable_graph()->mutable_output(1)->set_name("Extra");
  const Region cut(model, input);
  ASSERT_TRUE(cut.found);
  const ChangedRegion* region = &*cut.found;
  EXPECT_THAT(Ops(*region), ElementsAre("Abs"));
  EXPECT_THAT(Names(region->model->graph().input()), ElementsAre("B"));
  EXPECT_TRUE(ChangesPassOnTheirOwn(model, Baseline(input)));
}

TEST(ChangedRegion, TheConstantsTheRegionReadsComeAlong) {
  const onnx::ModelProto input = Model(R"(g (float[4, 2] X) => (float[4, 2] Z) {
  S = Constant <value = int64[2] {2, 4}> ()
  Z = Relu (X)
})");
  onnx::ModelProto model = input;
  onnx::NodeProto reshape;
  reshape.set_op_type("Reshape");
  reshape.add_input("Z");
  reshape.add_input("S");
  reshape.add_output("Flipped");
  *model.mutable_graph()->add_node() = reshape;
  auto* output = model.mutable_graph()->add_output();
  *output = model.graph().output(0);
  output->set_name("Flipped");
  output->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_value(2);
  output->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_value(4);
  const Region cut(model, input);
  ASSERT_TRUE(cut.found);
  const ChangedRegion* region = &*cut.found;
  EXPECT_THAT(Ops(*region), ElementsAre("Constant", "Reshape"));
  EXPECT_TRUE(ChangesPassOnTheirOwn(model, Baseline(input)));
  // The shape the Constant gives is checked against the declaration: a wrong one is caught.
  output->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_value(3);
  EXPECT_FALSE(ChangesPassOnTheirOwn(model, Baseline(input)));
  EXPECT_NE(WholeValidationVerdict(model, Baseline(input)), "");
}

TEST(ChangedRegion, AnOutputNoLongerDeclaredPutsItsDefinerInTheRegion) {
  const onnx::ModelProto input = Model(R"(g (float[4, 2] X) => (float[4, 2] Z, float[4, 2] Y) {
  Y = Relu (X)
  Z = Neg (Y)
})");
  onnx::ModelProto model = input;
  model.mutable_graph()->mutable_output()->RemoveLast();
  const Region cut(model, input);
  ASSERT_TRUE(cut.found);
  EXPECT_THAT(Ops(*cut.found), ElementsAre("Relu"));
  EXPECT_TRUE(ChangesPassOnTheirOwn(model, Baseline(input)));
}

TEST(ChangedRegion, AValueInfoTheRewriteDropsIsLeftToTheWholeModel) {
  onnx::ModelProto input = NegAfter("Relu");
  auto* declared = input.mutable_graph()->add_value_info();
  declared->set_name("Y");
  *declared->mutable_type() = input.graph().input(0).type();
  onnx::ModelProto model = input;
  model.mutable_graph()->clear_value_info();
  EXPECT_FALSE(Region(model, input).found);
}

TEST(ChangedRegion, AConstantTheRestReadsGivenByAChangedNodeIsLeftToTheWholeModel) {
  const onnx::ModelProto input = Model(R"(g (float[4, 2] X) => (float[?, ?] Z) {
  S = Constant <value = int64[2] {2, 4}> ()
  Z = Reshape (X, S)
})");
  onnx::ModelProto model = input;
  // The same type, another value: Reshape, unchanged, would infer [8, 1] where it inferred [2, 4].
  testing::NodeOfType(*model.mutable_graph(), "Constant").mutable_attribute(0)->mutable_t()->set_int64_data(0, 8);
  testing::NodeOfType(*model.mutable_graph(), "Constant").mutable_attribute(0)->mutable_t()->set_int64_data(1, 1);
  EXPECT_FALSE(Region(model, input).found);
}

/// Two cheap nodes, and the condition an If added by a rewrite reads.
const char* kRelus = R"(g (bool c, float[4, 2] X) => (float[4, 2] Z) {
  A = Relu (X)
  Z = Neg (A)
})";

/// kRelus with an If added at the end: `then_branch` defines `inner` from X, `else_branch` negates X.
onnx::ModelProto WithAddedIf(const std::string& inner) {
  onnx::ModelProto model =
      Model(R"(g (bool c, float[4, 2] X) => (float[4, 2] Z, float[4, 2] W) {
  A = Relu (X)
  Z = Neg (A)
  W = If (c) <then_branch = t () => (float[4, 2] )" +
            inner + R"() { )" + inner + R"( = Abs (X) }, else_branch = e () => (float[4, 2] b) { b = Neg (X) }>
})");
  return model;
}

TEST(ChangedRegion, AChangedNodeWithASubgraphIsInTheRegionWithWhatItsBranchesRead) {
  const onnx::ModelProto input = Model(kRelus);
  const onnx::ModelProto model = WithAddedIf("inner");
  const Region cut(model, input);
  ASSERT_TRUE(cut.found);
  EXPECT_THAT(Ops(*cut.found), ElementsAre("If"));
  // c as the If reads it, X as its branches do.
  EXPECT_THAT(Names(cut.found->model->graph().input()), ElementsAre("c", "X"));
  EXPECT_TRUE(ChangesPassOnTheirOwn(model, Baseline(input)));
}

TEST(ChangedRegion, ABranchNameTheMainGraphDefinesIsLeftToTheWholeModel) {
  const onnx::ModelProto input = Model(kRelus);
  // The then_branch defines A, which the main graph defines: onnx's checker refuses that, and the region
  // does not hold the Relu that defines A.
  const onnx::ModelProto model = WithAddedIf("A");
  EXPECT_FALSE(Region(model, input).found);
  EXPECT_THAT(WholeValidationVerdict(model, Baseline(input)), HasSubstr("fails onnx's checker"));
}

TEST(ChangedRegion, TheBundledComputedDefaultsAreCheckedByTheirRegion) {
  // Their rewrite adds an If (the model's own value, or the state fed) around each computed initial state.
  for (const char* name : {"gru_nonzero_default", "lstm_init_state", "lstm_shared_init"}) {
    SCOPED_TRACE(name);
    onnx::ModelProto input;
    std::ifstream file(std::string(RNNSTATE_SOURCE_DIR) + "/models/handbuilt/" + name + ".onnx", std::ios::binary);
    ASSERT_TRUE(input.ParseFromIstream(&file));
    onnx::ModelProto model = input;
    RewriteModel(model, {}, /*strict=*/false);
    const Region cut(model, input);
    ASSERT_TRUE(cut.found);
    EXPECT_THAT(Ops(*cut.found), ::testing::Contains("If"));
    EXPECT_TRUE(ChangesPassOnTheirOwn(model, Baseline(input)));
  }
}

TEST(ChangedRegion, UnchangedSubgraphsAndOldIrVersionsAreLeftToTheWholeModel) {
  const onnx::ModelProto with_if = Model(R"(g (bool c, float[2] X) => (float[2] Z) {
  Z = If (c) <then_branch = t () => (float[2] a) { a = Relu (X) }, else_branch = e () => (float[2] b) { b = Neg (X) }>
})");
  EXPECT_FALSE(Region(with_if, with_if).found);
  onnx::ModelProto old = ParseModel(std::string(R"(<ir_version: 3, opset_import: ["" : 9]>
)") + "g (float[2] X) => (float[2] Z) {\n  Z = Relu (X)\n}");
  EXPECT_FALSE(Region(old, old).found);
}

TEST(SameTypeUpToSymbols, OnlySymbolNamesMayDiffer) {
  auto type = [](const std::string& text) {
    return ParseModel(kHeader + ("g (" + text + " X) => (" + text + " X) {\n}")).graph().input(0).type();
  };
  EXPECT_TRUE(SameTypeUpToSymbols(type("float[N, 3]"), type("float[unk__4, 3]")));
  EXPECT_TRUE(SameTypeUpToSymbols(type("float[N, 3]"), type("float[?, 3]")));
  EXPECT_FALSE(SameTypeUpToSymbols(type("float[N, 3]"), type("float[2, 3]")));
  EXPECT_FALSE(SameTypeUpToSymbols(type("float[2, 3]"), type("float[2, 4]")));
  EXPECT_FALSE(SameTypeUpToSymbols(type("float[2, 3]"), type("float[2, 3, 1]")));
  EXPECT_FALSE(SameTypeUpToSymbols(type("float[2, 3]"), type("double[2, 3]")));
  EXPECT_FALSE(SameTypeUpToSymbols(type("float[2, 3]"), type("float")));
}

/// Faults a buggy rewrite could leave in the part it changed, each applied to a copy of `model`.
std::vector<std::pair<std::string, onnx::ModelProto>> Faults(const onnx::ModelProto& model,
                                                             const std::vector<std::string>& new_outputs) {
  std::vector<std::pair<std::string, onnx::ModelProto>> faults;
  for (const std::string& name : new_outputs) {
    for (int o = 0; o < model.graph().output_size(); ++o) {
      if (model.graph().output(o).name() != name) continue;
      const auto& type = model.graph().output(o).type().tensor_type();
      for (int d = 0; d < type.shape().dim_size(); ++d) {
        onnx::ModelProto wrong = model;
        wrong.mutable_graph()
            ->mutable_output(o)
            ->mutable_type()
            ->mutable_tensor_type()
            ->mutable_shape()
            ->mutable_dim(d)
            ->set_dim_value(7777);
        faults.emplace_back(name + " dim " + std::to_string(d) + " declared 7777", std::move(wrong));
      }
      onnx::ModelProto retyped = model;
      retyped.mutable_graph()->mutable_output(o)->mutable_type()->mutable_tensor_type()->set_elem_type(
          type.elem_type() == onnx::TensorProto::DOUBLE ? onnx::TensorProto::FLOAT : onnx::TensorProto::DOUBLE);
      faults.emplace_back(name + " declared of another element type", std::move(retyped));
    }
  }
  // Recurrent nodes at any depth: in a branch or body, the region holds them in pruned subgraphs.
  GraphPath root;
  ForEachGraph(model.graph(), root, [&](const GraphPath& path, const onnx::GraphProto& graph) {
    for (int n = 0; n < graph.node_size(); ++n) {
      const auto& op = graph.node(n).op_type();
      if (op != "LSTM" && op != "GRU" && op != "RNN") continue;
      onnx::ModelProto resized = model;
      for (auto& attribute : *ResolveGraph(resized, path)->mutable_node(n)->mutable_attribute()) {
        if (attribute.name() == "hidden_size") attribute.set_i(attribute.i() + 1);
      }
      faults.emplace_back("node " + std::to_string(n) + " at depth " + std::to_string(path.size()) + " hidden_size + 1",
                          std::move(resized));
    }
  });
  return faults;
}

/// What a run of the differential check over model files saw.
struct Differential {
  int by_region = 0;     ///< rewrites the region vouched for
  int faults_tried = 0;  ///< faulty copies of the rewrites
  int refused = 0;       ///< faults the whole check refuses
};

/// Rewrites each of `paths` and checks, on the rewrite and on each of its Faults, that the region never
/// passes what the whole check refuses.
Differential CheckDifferentially(const std::vector<std::filesystem::path>& paths) {
  Differential seen;
  for (const auto& path : paths) {
    SCOPED_TRACE(path.string());
    onnx::ModelProto input;
    {
      std::ifstream file(path, std::ios::binary);
      std::stringstream bytes;
      bytes << file.rdbuf();
      if (!input.ParseFromString(bytes.str())) continue;
    }
    onnx::ModelProto model = input;
    RewriteOutcome outcome;
    try {
      outcome = RewriteModel(model, {}, /*strict=*/false, path.parent_path().string());
    } catch (const Error&) {
      continue;  // refused inputs (the negative fixtures)
    }
    if (!outcome.changed) continue;
    const ValidationBaseline baseline = Baseline(input, path.parent_path().string());
    if (!baseline.checker_applies || !baseline.inference_applies) continue;
    if (ChangesPassOnTheirOwn(model, baseline)) ++seen.by_region;
    EXPECT_EQ(WholeValidationVerdict(model, baseline), "");
    std::vector<std::string> new_outputs;
    for (const auto& pair : outcome.plan.pairs) new_outputs.push_back(pair.output);
    for (const auto& [fault, broken] : Faults(model, new_outputs)) {
      SCOPED_TRACE(fault);
      ++seen.faults_tried;
      const bool whole_refuses = !WholeValidationVerdict(broken, baseline).empty();
      seen.refused += whole_refuses;
      if (ChangesPassOnTheirOwn(broken, baseline)) {
        EXPECT_FALSE(whole_refuses) << "the region passed what the whole check refuses";
      }
    }
  }
  return seen;
}

/// The .onnx files below `dir`, sorted.
std::vector<std::filesystem::path> ModelsBelow(const std::string& dir) {
  std::vector<std::filesystem::path> paths;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.path().extension() == ".onnx") paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

TEST(ChangedRegion, OnEveryBundledRewriteItNeverPassesWhatTheWholeCheckRefuses) {
  const Differential seen = CheckDifferentially(ModelsBelow(std::string(RNNSTATE_SOURCE_DIR) + "/models"));
  // The region is what checks most flat rewrites (PyTorch's and the hand-built main-graph ones).
  EXPECT_GE(seen.by_region, 40);
  EXPECT_GE(seen.faults_tried, 1000);
  EXPECT_GE(seen.refused, 500);
}

TEST(ChangedRegion, OnThePublishedModelsItNeverPassesWhatTheWholeCheckRefuses) {
  const std::string dir = RNNSTATE_REAL_MODELS_DIR;
  if (!std::filesystem::is_directory(dir)) {
    const char* required = std::getenv("RNNSTATE_REQUIRE_REAL_MODELS");
    ASSERT_FALSE(required != nullptr && std::string(required) == "1") << dir << " is required and absent";
    GTEST_SKIP() << "the published models are not here (" << dir << ")";
  }
  const Differential seen = CheckDifferentially(ModelsBelow(dir));
  EXPECT_GE(seen.faults_tried, 10);
}

}  // namespace
}  // namespace rnnstate::changed_region_test
