// `rnnstate report --format dot`: what the picture shows, and that names cannot break the DOT syntax.
// That Graphviz renders it is tested by tests/cli/dot_render_test.sh.

#include "views/dot.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pipeline_stages.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::dot_test {
namespace {

using namespace test_names;

const char* kIfGru = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, bool cond, float[1, 9, 2] W, float[1, 9, 3] R, float[seq, 1, batch, 3] Z) => (float[seq, 1, batch, 3] Y) {
  Y = If (cond) <
    then_branch = t () => (float[seq, 1, batch, 3] a) { a = GRU <hidden_size = 3> (X, W, R) },
    else_branch = e () => (float[seq, 1, batch, 3] b) { b = Identity (Z) }>
})";

std::string Dot(const onnx::ModelProto& model, const std::string& file = "m.onnx") {
  RewriteOutcome outcome = PlanRewrite(model, PlanOptions{});
  return ReportDot(file, model, outcome.analysis, outcome.plan);
}

onnx::ModelProto Rewritten(const char* text) {
  onnx::ModelProto model = ParseModel(text);
  RewriteModel(model, PlanOptions{}, /*strict=*/false);
  return model;
}

TEST(Dot, QuotesEscapeQuotesBackslashesAndNewlines) { EXPECT_EQ(DotQuote("a\"b\\c\nd"), R"("a\"b\\c\nd")"); }

TEST(Dot, OriginalModelShowsUnexposedStateAndWhatRewriteWouldDo) {
  std::string dot = Dot(ParseModel(kGru));
  EXPECT_THAT(dot, HasSubstr("digraph rnnstate {"));
  EXPECT_THAT(dot, HasSubstr("GRU 'GRU_0'"));
  EXPECT_THAT(dot, HasSubstr("absent (zeros)"));
  EXPECT_THAT(dot, HasSubstr("initial_h (not exposed)"));
  EXPECT_THAT(dot, HasSubstr("rewrite adds input 'GRU_0.h_in'"));
  EXPECT_THAT(dot, HasSubstr("style=\"dashed\""));
}

TEST(Dot, RewrittenModelShowsStateInputAndOutput) {
  std::string dot = Dot(Rewritten(kGru));
  EXPECT_THAT(dot, HasSubstr("input 'GRU_0.h_in'"));
  EXPECT_THAT(dot, HasSubstr("output 'GRU_0.h_out'"));
  EXPECT_THAT(dot, HasSubstr("1 state pair in metadata"));
  EXPECT_THAT(dot, Not(HasSubstr("not exposed")));
}

TEST(Dot, NotStreamableNodeIsRedAndSaysWhy) {
  std::string dot = Dot(ParseModel(kReverseGru));
  EXPECT_THAT(dot, HasSubstr("not streamable: reverse"));
  EXPECT_THAT(dot, HasSubstr("color=\"#dc2626\""));
  EXPECT_THAT(dot, HasSubstr("rounded,filled,dashed"));
}

TEST(Dot, NestedNodeSitsInAClusterNamedAfterItsControlFlowNode) {
  std::string dot = Dot(ParseModel(kIfGru));
  EXPECT_THAT(dot, HasSubstr("subgraph cluster_0 {"));
  EXPECT_THAT(dot, HasSubstr("label=\"If 'If_0' / then_branch\""));
}

TEST(Dot, NamesCannotBreakTheSyntax) {
  onnx::ModelProto model = ParseModel(kGru);
  model.mutable_graph()->mutable_node(0)->set_name("gru \"x\" \\ {y}");
  std::string dot = Dot(model, "dir/\"quoted\".onnx");
  EXPECT_THAT(dot, HasSubstr(R"(GRU 'gru \"x\" \\ {y}')"));
  EXPECT_THAT(dot, HasSubstr(R"(dir/\"quoted\".onnx)"));
}

TEST(Dot, ModelWithoutRecurrentNodesSaysSo) {
  std::string dot = Dot(ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[2] x) => (float[2] y) { y = Relu (x) })"));
  EXPECT_THAT(dot, HasSubstr("no RNN, GRU or LSTM nodes"));
}

}  // namespace
}  // namespace rnnstate::dot_test
