// The rules every command checks before it reads a model (model_rules.h, README "Validation"): one test
// per rule with the message it gives, what stays valid (other domains, newer opsets, opset < 7), and the
// same verdict from rewrite, check and report.

#include "model_rules.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "rewrite.h"
#include "rnnstate/error.h"
#include "rnnstate/pipeline.h"
#include "test_models.h"

namespace rnnstate {
namespace {

using ::testing::HasSubstr;

/// A model of ONNX text (graph only) at `opset`, with GRU weights W [1,9,2] and R [1,9,3].
onnx::ModelProto Model(const std::string& graph, int opset = 14) {
  onnx::ModelProto model = testing::ParseModel("<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) +
                                               ", \"com.example\" : 1]>\n" + graph);
  testing::AddFloatInitializer(*model.mutable_graph(), "W", {1, 9, 2}, {0.1f});
  testing::AddFloatInitializer(*model.mutable_graph(), "R", {1, 9, 3}, {0.2f});
  return model;
}

/// The message IndexValidModel throws for `model` ("" when it accepts it), after checking the exit code.
std::string Verdict(const onnx::ModelProto& model) {
  try {
    IndexValidModel(model);
    return "";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    return e.what();
  }
}

/// One GRU on X (type `x_type`) with `attributes` and `inputs`.
onnx::ModelProto Gru(const std::string& attributes, const std::string& inputs = "X, W, R",
                     const std::string& x_type = "float") {
  return Model("g (" + x_type + R"([seq, batch, 2] X) => (float[seq, 1, batch, 3] Y) {
  Y = GRU <)" + attributes +
               "> (" + inputs + R"()
})");
}

TEST(ModelRules, AValidModelIsIndexed) {
  EXPECT_EQ(Verdict(Gru("hidden_size = 3")), "");
  EXPECT_EQ(Verdict(Gru("hidden_size = 3, direction = \"bidirectional\", layout = 0")), "");
  EXPECT_EQ(Verdict(Gru("direction = \"reverse\"")), "");  // hidden_size is optional
  EXPECT_EQ(Verdict(Gru("hidden_size = 3", "X, W, R", "double")), "");
  EXPECT_EQ(Verdict(Gru("hidden_size = 3", "X, W, R", "float16")), "");
}

TEST(ModelRules, HiddenSizeMustBePositive) {
  EXPECT_EQ(Verdict(Gru("hidden_size = 0")), "invalid model: main: GRU 'GRU_0': hidden_size 0 is not positive");
  // A negative one used to be ignored in favour of the weight shapes.
  EXPECT_EQ(Verdict(Gru("hidden_size = -4")), "invalid model: main: GRU 'GRU_0': hidden_size -4 is not positive");
  EXPECT_EQ(Verdict(Gru("hidden_size = \"3\"")),
            "invalid model: main: GRU 'GRU_0': attribute 'hidden_size' is not an integer");
}

TEST(ModelRules, DirectionAndLayoutMustBeKnownValues) {
  EXPECT_EQ(Verdict(Gru("hidden_size = 3, direction = \"sideways\"")),
            "invalid model: main: GRU 'GRU_0': unknown direction 'sideways' (GRU takes forward, reverse or "
            "bidirectional)");
  EXPECT_THAT(Verdict(Gru("hidden_size = 3, direction = \"\"")), HasSubstr("unknown direction ''"));
  EXPECT_EQ(Verdict(Gru("hidden_size = 3, layout = 2")),
            "invalid model: main: GRU 'GRU_0': unknown layout 2 (GRU takes 0 or 1)");
}

TEST(ModelRules, RequiredInputsMustBePresentAndNamed) {
  EXPECT_EQ(Verdict(Gru("hidden_size = 3", "X, W")),
            "invalid model: main: GRU 'GRU_0': has 2 inputs, but GRU requires X, W and R");
  EXPECT_EQ(Verdict(Gru("hidden_size = 3", "X, , R")), "invalid model: main: GRU 'GRU_0': required input W is empty");
  onnx::ModelProto no_x = Gru("hidden_size = 3");
  no_x.mutable_graph()->mutable_node(0)->set_input(0, "");  // the text syntax cannot leave the first input empty
  EXPECT_EQ(Verdict(no_x), "invalid model: main: GRU 'GRU_0': required input X is empty");
}

TEST(ModelRules, FloatInputsMustHaveAFloatType) {
  EXPECT_EQ(Verdict(Gru("hidden_size = 3", "X, W, R", "string")),
            "invalid model: main: GRU 'GRU_0': input X 'X' has element type STRING; GRU takes FLOAT, DOUBLE, "
            "FLOAT16 or BFLOAT16");
  EXPECT_THAT(Verdict(Gru("hidden_size = 3", "X, W, R", "complex64")), HasSubstr("element type COMPLEX64"));
  // An inferred type counts as much as a declared one.
  EXPECT_THAT(Verdict(Model(R"(g (int32[seq, batch, 2] X) => (float[seq, 1, batch, 3] Y) {
  Xi = Identity (X)
  Y = GRU <hidden_size = 3> (Xi, W, R)
})")),
              HasSubstr("input X 'Xi' has element type INT32"));
  // So does a weight of another type.
  EXPECT_THAT(Verdict(Model(R"(g (float[seq, batch, 2] X, int64[1, 9, 3] R2) => (float[seq, 1, batch, 3] Y) {
  Y = GRU <hidden_size = 3> (X, W, R2)
})")),
              HasSubstr("input R 'R2' has element type INT64"));
}

TEST(ModelRules, RulesHoldInsideSubgraphs) {
  EXPECT_EQ(Verdict(Model(R"(g (float[seq, batch, 2] X, bool c) => (float[seq, 1, batch, 3] Y) {
  Y = If (c) <
    then_branch = t () => (float[seq, 1, batch, 3] a) { a = GRU <hidden_size = -1> (X, W, R) },
    else_branch = e () => (float[seq, 1, batch, 3] b) { b = GRU <hidden_size = 3> (X, W, R) }>
})")),
            "invalid model: main/If_0:then_branch: GRU 'GRU_0': hidden_size -1 is not positive");
}

TEST(ModelRules, ControlFlowNodesNeedWhatTheirSpecRequires) {
  onnx::ModelProto model = Model(R"(g (float[seq, batch, 2] X, bool c) => (float[seq, 1, batch, 3] Y) {
  Y = If (c) <then_branch = t () => (float[seq, 1, batch, 3] a) { a = GRU <hidden_size = 3> (X, W, R) }>
})");
  EXPECT_EQ(Verdict(model), "invalid model: main: If 'If_0': the If has no else_branch");
  EXPECT_EQ(Verdict(Model(R"(g (float[2] X) => (float[2] Y) {
  Y = Scan (X) <body = b (float x) => (float y) { y = Identity (x) }>
})")),
            "invalid model: main: Scan 'Scan_0': the Scan has no num_scan_inputs");
  // A Loop carrying one value needs the trip count and condition slots before it.
  EXPECT_THAT(Verdict(Model(R"(g (float[2] X) => (float[2] Y) {
  Y = Loop (X) <body = b (int64 i, bool c, float[2] x) => (bool d, float[2] y) { d = Identity (c)  y = Identity (x) }>
})")),
              HasSubstr("the Loop has 1 input, but its body carries 1 value ("));
  // A Loop carrying nothing may omit them (valid: rnnstate only cannot thread a state through it).
  EXPECT_EQ(Verdict(Model(R"(g (int64 M) => (float[N] Y) {
  Y = Loop (M) <body = b (int64 i, bool c) => (bool d, float s) {
    d = Identity (c)
    s = Constant <value_float = 1.0> ()
  }>
})")),
            "");
}

TEST(ModelRules, StructureComesFirstAndNamesTheNode) {
  EXPECT_EQ(Verdict(Model(R"(g (float[seq, batch, 2] X) => (float[seq, 1, batch, 3] Y) {
  Y = GRU <hidden_size = 0> (X_norm, W, R)
})")),
            "invalid model: main: GRU 'GRU_0' reads 'X_norm', which nothing before it defines");
  EXPECT_EQ(Verdict(Model(R"(g (float[2] X) => (float[2] B) {
  A = Identity (B)
  B = Identity (A)
})")),
            "invalid model: main: Identity 'Identity_0' reads 'B', which a later node, Identity 'Identity_1', "
            "defines (nodes must be sorted: a cycle, or nodes out of order)");
  EXPECT_EQ(Verdict(Model(R"(g (float[2] X) => (float[2] Y) {
  Y = Identity (X)
  Y = Neg (X)
})")),
            "invalid model: main: 'Y' is defined twice (an output of Neg 'Neg_1')");
  EXPECT_EQ(Verdict(Model(R"(g (int64 M, float[2] X) => (float[2] Y) {
  Y = Loop (M, , X) <body = b (int64 i, bool c, float[2] x) => (bool d, float[2] y) { d = Identity (c) }>
})")),
            "invalid model: main/Loop_0:body: graph output 'y' is never defined");
}

TEST(ModelRules, AnOperatorTheOpsetDoesNotHaveIsInvalidWhereOnnxKnowsTheOpset) {
  const std::string graph = R"(g (float[2] X) => (float[2] Y) {
  Y = Nonexistent (X)
})";
  EXPECT_EQ(Verdict(Model(graph)),
            "invalid model: main: Nonexistent 'Nonexistent_0': ai.onnx opset 14 has no operator 'Nonexistent'");
  EXPECT_EQ(Verdict(Model(graph, 18)), "");  // newer than onnx 1.12: perhaps a new operator
  EXPECT_EQ(Verdict(Model(graph, 6)), "");   // older than rnnstate supports: exit 4 where it matters
  EXPECT_EQ(Verdict(Model(R"(g (float[2] X) => (float[2] Y) {
  Y = com.example.Nonexistent (X)
})")),
            "");
}

TEST(ModelRules, OtherDomainsAreNotJudged) {
  EXPECT_EQ(Verdict(Model(R"(g (float[seq, batch, 2] X) => (float[seq, 1, batch, 3] Y) {
  Y = com.example.LSTM <hidden_size = -4, direction = "sideways"> (X)
})")),
            "");
}

TEST(ModelRules, RewriteCheckAndReportReachTheSameVerdict) {
  for (const onnx::ModelProto& invalid : {Gru("hidden_size = 0"), Gru("hidden_size = 3", "X, W, R", "string"),
                                          Model("g (float[2] X) => (float[2] Y) {\n  Y = Identity (Z)\n}")}) {
    const std::string expected = Verdict(invalid);
    ASSERT_NE(expected, "");
    onnx::ModelProto copy = invalid;
    auto verdict_of = [](auto&& run) -> std::string {
      try {
        run();
      } catch (const Error& e) {
        return std::to_string(static_cast<int>(e.code())) + " " + e.what();
      }
      return "accepted";
    };
    const std::string exit3 = "3 " + expected;
    EXPECT_EQ(verdict_of([&] { RewriteForStreaming(copy); }), exit3);
    EXPECT_EQ(verdict_of([&] { CheckForStreaming(invalid); }), exit3);
    EXPECT_EQ(verdict_of([&] { ReportOf(invalid); }), exit3);
    EXPECT_EQ(verdict_of([&] { PlanRewrite(invalid, PlanOptions{}); }), exit3);  // --dry-run
    EXPECT_EQ(copy.SerializeAsString(), invalid.SerializeAsString()) << "an invalid model is left untouched";
  }
}

TEST(ModelRules, ValidButUnsupportedStaysAWarning) {
  // sequence_lens: exposed but not streamable; opset 6: unsupported (exit 4), not invalid.
  onnx::ModelProto lens = Model(R"(g (float[seq, batch, 2] X, int32[batch] L) => (float[seq, 1, batch, 3] Y) {
  Y = GRU <hidden_size = 3> (X, W, R, , L)
})");
  EXPECT_EQ(Verdict(lens), "");
  EXPECT_NO_THROW(RewriteForStreaming(lens));
  onnx::ModelProto old = Model(
      "g (float[seq, batch, 2] X) => (float[seq, 1, batch, 3] Y) {\n"
      "  Y = GRU <hidden_size = 3> (X, W, R)\n}",
      6);
  EXPECT_EQ(Verdict(old), "");
  try {
    RewriteForStreaming(old);
    FAIL() << "opset 6 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUnsupported);
  }
}

TEST(ModelRules, AStateOfANonFloatTypeIsNotCalledTooLarge) {
  // X, W and R of unknown type (computed by an operator of another domain): the state's element type comes
  // from the declared Y_h. Its zero default cannot be sized; the reason must say why, not "over 1 MiB".
  onnx::ModelProto model = Model(R"(g (float[seq, batch, 2] X0) => (string[1, batch, 3] Y_h) {
  X = com.example.Opaque (X0)
  Wx = com.example.Opaque (W)
  Rx = com.example.Opaque (R)
  Y, Y_h = GRU <hidden_size = 3> (X, Wx, Rx)
})");
  ASSERT_EQ(Verdict(model), "");
  RewriteOutcome outcome = PlanRewrite(model, PlanOptions{});
  ASSERT_EQ(outcome.plan.skipped.size(), 1u);
  EXPECT_EQ(outcome.plan.skipped[0].reason,
            "state element type STRING is not a numeric or bool type (no zero default)");
}

}  // namespace
}  // namespace rnnstate
