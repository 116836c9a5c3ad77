// The rules of a recurrent node's operands as the analysis applies them (find/recurrent_node.h): on an
// unchecked index (a test, a library caller) a node breaking one is marked with the problem and not
// rewritten; on an index from IndexValidModel, which refuses such a model outright, the rules of the
// operands' types are not run a second time (AnalysisOptions::owner_types_checked), and the rules that
// need no types still are.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "find/analysis.h"
#include "graph/model_index.h"
#include "rnnstate/error.h"
#include "rules/model_rules.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::owner_rules_test {
namespace {

using namespace test_names;
using ::testing::HasSubstr;
using ::testing::Not;

/// A GRU of hidden size 3 whose W is shaped for hidden size 4 (W [1,12,2]; GRU takes [1,9,input]), `attributes`
/// beside hidden_size.
onnx::ModelProto MisshapedGru(const std::string& attributes = "") {
  return ParseModel(std::string(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[1, 12, 2] W, float[1, 9, 3] R) => (float[seq, 1, batch, 3] Y) {
  Y = GRU <hidden_size = 3)") +
                    attributes + R"(> (X, W, R)
})");
}

Analysis AnalyzeWith(const onnx::ModelProto& model, bool owner_types_checked) {
  ModelIndex index(model);
  AnalysisOptions options;
  options.owner_types_checked = owner_types_checked;
  return Analyze(index, options);
}

TEST(OwnerRules, AnUncheckedIndexMarksTheNodeBreakingATypeRule) {
  const onnx::ModelProto model = MisshapedGru();
  const Analysis analysis = AnalyzeWith(model, false);
  ASSERT_EQ(analysis.nodes.size(), 1u);
  EXPECT_THAT(analysis.nodes[0].problem, HasSubstr("input W 'W' has shape [1,12,2]"));
}

TEST(OwnerRules, TheCommandsIndexRefusesThatModelSoTheAnalysisNeedNotCheckItAgain) {
  const onnx::ModelProto model = MisshapedGru();
  EXPECT_THROW(IndexValidModel(model), Error) << "the premise of owner_types_checked";
  // Trusted, the analysis leaves the type rules to IndexValidModel.
  const Analysis analysis = AnalyzeWith(model, true);
  ASSERT_EQ(analysis.nodes.size(), 1u);
  EXPECT_THAT(analysis.nodes[0].problem, Not(HasSubstr("has shape")));
}

TEST(OwnerRules, RulesWithoutTypesAreStillApplied) {
  const onnx::ModelProto model = MisshapedGru(R"(, direction = "sideways")");
  for (bool checked : {false, true}) {
    const Analysis analysis = AnalyzeWith(model, checked);
    ASSERT_EQ(analysis.nodes.size(), 1u);
    EXPECT_THAT(analysis.nodes[0].problem, HasSubstr("sideways")) << checked;
  }
}

TEST(OwnerRules, AValidNodeHasNoProblemEitherWay) {
  const onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, batch, 3] Y) {
  Y = GRU <hidden_size = 3> (X, W, R)
})");
  ASSERT_NO_THROW(IndexValidModel(model));
  for (bool checked : {false, true}) EXPECT_EQ(AnalyzeWith(model, checked).nodes.at(0).problem, "") << checked;
}

}  // namespace
}  // namespace rnnstate::owner_rules_test
