// The checks of a rewritten model (validate.h): which of onnx's checks apply to the input (StartChecker,
// MakeValidationBaseline), and what ValidateRewritten and ChangesPassOnTheirOwn say of a rewrite, sound or
// broken.

#include "validate/validate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph/model_index.h"
#include "pipeline_stages.h"
#include "rnnstate/error.h"
#include "rules/structure_rules.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::validate_test {
namespace {

using namespace test_names;

/// kGru with its header's IR version and opset replaced by `header`.
std::string GruUnder(const std::string& header) {
  std::string text = kGru;
  return header + text.substr(text.find('>') + 1);
}

/// kGru after a Relu of an operator onnx 1.12 has no schema for, in the ai.onnx domain: its checker rejects it.
const char* kUnknownOp = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, batch, 3] Y) {
  A = NoSuchOp (X)
  Y = GRU <hidden_size = 3> (A, W, R)
})";

/// kGru and its rewrite (a new state input and output).
std::pair<onnx::ModelProto, onnx::ModelProto> RewrittenGru() {
  const onnx::ModelProto input = ParseModel(kGru);
  onnx::ModelProto model = input;
  RewriteModel(model, {}, /*strict=*/false);
  return {input, model};
}

/// The baseline of `input` as a rewrite makes it: every check applies, and the input's inferred copy is kept.
ValidationBaseline FullBaseline(const onnx::ModelProto& input) {
  ValidationBaseline baseline = MakeValidationBaseline(input, /*inference_succeeded=*/true, "");
  baseline.input = ModelIndex(input).inferred();
  return baseline;
}

TEST(StartChecker, DoesNotStartOnAModelNewerThanTheChecker) {
  EXPECT_FALSE(StartChecker(ParseModel(GruUnder(R"(<ir_version: 9, opset_import: ["" : 14]>)")), "").valid());
  EXPECT_FALSE(StartChecker(ParseModel(GruUnder(R"(<ir_version: 8, opset_import: ["" : 18]>)")), "").valid());
}

TEST(StartChecker, GivesNothingForAValidModelAndTheMessageForAnInvalidOne) {
  const onnx::ModelProto valid = ParseModel(kGru);
  auto passes = StartChecker(valid, "");
  ASSERT_TRUE(passes.valid());
  EXPECT_EQ(passes.get(), std::nullopt);
  const onnx::ModelProto invalid = ParseModel(kUnknownOp);
  auto fails = StartChecker(invalid, "");
  ASSERT_TRUE(fails.valid());
  EXPECT_THAT(fails.get(), Optional(HasSubstr("NoSuchOp")));
}

TEST(MakeValidationBaseline, EveryCheckAppliesToAValidModel) {
  const ValidationBaseline baseline = MakeValidationBaseline(ParseModel(kGru), true, "models");
  EXPECT_TRUE(baseline.checker_applies);
  EXPECT_TRUE(baseline.inference_applies);
  EXPECT_EQ(baseline.why_not, "");
  EXPECT_EQ(baseline.model_dir, "models");
  EXPECT_THAT(baseline.unchecked_ops, IsEmpty());
}

TEST(MakeValidationBaseline, SaysWhyTheCheckerDoesNotApply) {
  const ValidationBaseline ir9 =
      MakeValidationBaseline(ParseModel(GruUnder(R"(<ir_version: 9, opset_import: ["" : 14]>)")), true, "");
  EXPECT_FALSE(ir9.checker_applies);
  EXPECT_EQ(ir9.why_not, "IR version 9 is newer than onnx 1.12 knows");
  const ValidationBaseline opset18 =
      MakeValidationBaseline(ParseModel(GruUnder(R"(<ir_version: 8, opset_import: ["" : 18]>)")), true, "");
  EXPECT_FALSE(opset18.checker_applies);
  EXPECT_THAT(opset18.why_not, HasSubstr("opset is newer"));
  const ValidationBaseline rejected = MakeValidationBaseline(ParseModel(kUnknownOp), true, "");
  EXPECT_FALSE(rejected.checker_applies);
  EXPECT_THAT(rejected.why_not, HasSubstr("does not pass onnx's checker"));
  EXPECT_THAT(rejected.why_not, HasSubstr("NoSuchOp"));
}

TEST(MakeValidationBaseline, TakesTheVerdictOfTheCheckerAlreadyStarted) {
  std::promise<std::optional<std::string>> verdict;
  verdict.set_value(std::string("seen beside"));
  const ValidationBaseline baseline = MakeValidationBaseline(ParseModel(kGru), true, "", verdict.get_future());
  EXPECT_FALSE(baseline.checker_applies);
  EXPECT_THAT(baseline.why_not, HasSubstr("seen beside"));
}

TEST(MakeValidationBaseline, AFailedInferenceIsTheReasonWhenTheCheckerApplies) {
  const ValidationBaseline baseline = MakeValidationBaseline(ParseModel(kGru), false, "");
  EXPECT_TRUE(baseline.checker_applies);
  EXPECT_FALSE(baseline.inference_applies);
  EXPECT_EQ(baseline.why_not, "onnx shape inference fails on the input model");
}

TEST(MakeValidationBaseline, ListsTheOperatorsOfDomainsWithoutSchemas) {
  const onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14, "com.example" : 1]>
g (float[2] x) => (float[2] y) {
  a = com.example.Smooth (x)
  b = com.example.Smooth (a)
  y = com.example.Blend (b)
})");
  EXPECT_THAT(MakeValidationBaseline(model, true, "").unchecked_ops,
              ElementsAre("com.example.Blend", "com.example.Smooth"));
}

TEST(ValidateRewritten, ASoundRewritePasses) {
  auto [input, model] = RewrittenGru();
  EXPECT_NO_THROW(ValidateRewritten(model, FullBaseline(input)));
  EXPECT_NO_THROW(ValidateRewritten(model, MakeValidationBaseline(input, true, "")));
}

TEST(ValidateRewritten, AValueReadBeforeItIsDefinedIsAnInternalError) {
  auto [input, model] = RewrittenGru();
  // The GRU moves to the front: it reads the state's default before the nodes that compute it.
  auto* nodes = model.mutable_graph()->mutable_node();
  ASSERT_GE(nodes->size(), 2);
  for (int i = nodes->size() - 1; i > 0; --i) nodes->SwapElements(i, i - 1);
  ASSERT_EQ(model.graph().node(0).op_type(), "GRU");
  ExpectError([&] { ValidateRewritten(model, FullBaseline(input)); }, ExitCode::kInternal,
              "rewritten model is invalid");
}

TEST(ValidateRewritten, ACheckerFailureIsAnInternalErrorWhenTheCheckerApplies) {
  ValidationBaseline baseline;
  baseline.checker_applies = true;
  onnx::ModelProto model = ParseModel(kUnknownOp);
  ExpectError([&] { ValidateRewritten(model, baseline); }, ExitCode::kInternal, "rewritten model fails onnx's checker");
}

/// RewrittenGru's output with its state output declared 4 wide: onnx's shape inference refuses it.
onnx::ModelProto RewriteDeclaringAWrongStateShape() {
  onnx::ModelProto model = RewrittenGru().second;
  auto* output = model.mutable_graph()->mutable_output(1);
  output->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(2)->set_dim_value(4);
  return model;
}

TEST(ValidateRewritten, AnInferenceFailureIsUnsupportedWhenTheCheckerCannotVouchForTheInput) {
  onnx::ModelProto model = RewriteDeclaringAWrongStateShape();
  ValidationBaseline baseline;
  baseline.inference_applies = true;
  baseline.why_not = "IR version 9 is newer than onnx 1.12 knows";
  const std::string message = ErrorMessage([&] { ValidateRewritten(model, baseline); }, ExitCode::kUnsupported);
  EXPECT_THAT(message, HasSubstr("cannot validate the rewrite: IR version 9"));
  baseline.checker_applies = true;
  ExpectError([&] { ValidateRewritten(model, baseline); }, ExitCode::kInternal,
              "rewritten model fails onnx shape inference");
}

TEST(ValidateRewritten, BrokenRewriteIsCaught) {
  auto [input, model] = RewrittenGru();
  // Remove the Expand that feeds the state: the GRU now reads an undefined value.
  auto* nodes = model.mutable_graph()->mutable_node();
  for (int i = nodes->size() - 1; i >= 0; --i) {
    if (nodes->Get(i).op_type() == "Expand") nodes->DeleteSubrange(i, 1);
  }
  ASSERT_NE(StructuralProblem(model), "");
  EXPECT_THROW(ValidateRewritten(model, ValidationBaseline{}), Error);
}

TEST(ValidateRewritten, DeclaringTheWrongStateShapeFailsShapeInference) {
  onnx::ModelProto model = RewriteDeclaringAWrongStateShape();
  const std::string before = model.SerializeAsString();
  ValidationBaseline baseline;
  baseline.inference_applies = true;
  EXPECT_THROW(ValidateRewritten(model, baseline), Error);
  EXPECT_EQ(model.SerializeAsString(), before);  // inferred in place, put back though inference failed
}

TEST(ChangesPassOnTheirOwn, VouchesForASoundRewriteOnlyWithTheInputKept) {
  const auto [input, model] = RewrittenGru();
  const ValidationBaseline full = FullBaseline(input);
  EXPECT_TRUE(ChangesPassOnTheirOwn(model, full));
  EXPECT_FALSE(ChangesPassOnTheirOwn(model, MakeValidationBaseline(input, true, "")));  // no input kept
  ValidationBaseline unchecked = FullBaseline(input);
  unchecked.checker_applies = false;
  EXPECT_FALSE(ChangesPassOnTheirOwn(model, unchecked));
}

TEST(ChangesPassOnTheirOwn, DoesNotVouchForAChangedOutputOfTheWrongShape) {
  auto [input, model] = RewrittenGru();
  auto* output = model.mutable_graph()->mutable_output(1);
  output->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(2)->set_dim_value(4);
  EXPECT_FALSE(ChangesPassOnTheirOwn(model, FullBaseline(input)));
}

}  // namespace
}  // namespace rnnstate::validate_test
