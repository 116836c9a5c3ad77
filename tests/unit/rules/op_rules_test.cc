// The recurrent operators' spec rules (rules/op_rules.h) called directly: the rules without types (required
// inputs, direction, hidden_size, clip, layout by opset, activations), the rules of types and shapes through
// a TypeLookup (element types bound per constraint, shapes for the hidden size and the directions, the
// hidden size read from the weights when the attribute is absent), the opset a model imports for an
// operator's domain, and the first breaking node of an indexed model named by graph and node.

#include "rules/op_rules.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "test_models.h"
#include "test_names.h"

namespace rnnstate::op_rules_test {
namespace {

using namespace test_names;
using ::testing::StartsWith;

/// The first node of `model`'s main graph and its operator's table row.
struct FirstNode {
  onnx::ModelProto model;
  const onnx::NodeProto& node() const { return model.graph().node(0); }
  const RecurrentOp& op() const { return *FindRecurrentOp(node()); }
};

FirstNode Parsed(const std::string& text) { return FirstNode{ParseModel(text)}; }

/// The rules without types of the one node of a GRU model with `attributes` and `inputs`, at opset `opset`.
std::string GruRule(const std::string& attributes, const std::string& inputs = "X, W, R", int64_t opset = 14) {
  const FirstNode gru = Parsed(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, batch, 3] Y) {
  Y = GRU <)" + attributes + "> (" +
                               inputs + R"()
})");
  return OpRuleViolationWithoutTypes(gru.node(), gru.op(), opset);
}

/// A TypeLookup over the declared inputs of `model`'s main graph.
TypeLookup DeclaredTypes(const onnx::ModelProto& model) {
  return [&model](const std::string& name) -> const onnx::TypeProto* {
    for (const auto& input : model.graph().input()) {
      if (input.name() == name) return &input.type();
    }
    return nullptr;
  };
}

TEST(OpRuleViolationWithoutTypes, AcceptsTheExportersNodes) {
  for (const char* text : {kGru, kReverseGru, kLstm}) {
    const FirstNode model = Parsed(text);
    EXPECT_EQ(OpRuleViolationWithoutTypes(model.node(), model.op(), 14), "") << text;
  }
}

TEST(OpRuleViolationWithoutTypes, NamesTheMissingOrEmptyRequiredInputs) {
  EXPECT_EQ(GruRule("hidden_size = 3", "X, W"), "has 2 inputs, but GRU requires X, W and R");
  EXPECT_EQ(GruRule("hidden_size = 3", "X, , R"), "required input W is empty");
}

TEST(OpRuleViolationWithoutTypes, RefusesAttributeValuesTheSpecDoesNotHave) {
  EXPECT_EQ(GruRule("hidden_size = 0"), "hidden_size 0 is not positive");
  EXPECT_THAT(GruRule("hidden_size = 3, direction = \"backward\""), HasSubstr("unknown direction 'backward'"));
  EXPECT_EQ(GruRule("hidden_size = 3, clip = -1.0"), "clip -1 is not positive");
  EXPECT_EQ(GruRule("hidden_size = \"three\""), "attribute 'hidden_size' is not an integer");
  EXPECT_THAT(GruRule("hidden_size = 3, layout = 2"), HasSubstr("unknown layout 2"));
}

TEST(OpRuleViolationWithoutTypes, JudgesLayoutByTheOpsetThatImportsIt) {
  EXPECT_EQ(GruRule("hidden_size = 3, layout = 0", "X, W, R", 14), "");
  EXPECT_THAT(GruRule("hidden_size = 3, layout = 0", "X, W, R", 13),
              HasSubstr("attribute 'layout' is not defined by GRU at ai.onnx opset 13"));
  EXPECT_EQ(GruRule("hidden_size = 3, layout = 0", "X, W, R", 0), "");  // opset unknown: not judged
}

TEST(OpRuleViolationWithoutTypes, CountsActivationsPerDirection) {
  EXPECT_EQ(GruRule("hidden_size = 3, activations = [\"Sigmoid\", \"tanh\"]"), "");  // case-insensitive
  EXPECT_EQ(GruRule("hidden_size = 3, activations = [\"Sigmoid\", \"Tanh\"], direction = \"bidirectional\""),
            "has 2 activations, but a bidirectional GRU takes 4");
  EXPECT_THAT(GruRule("hidden_size = 3, activations = [\"Sigmoid\", \"Swish\"]"),
              HasSubstr("unknown activation 'Swish'"));
}

TEST(OpRuleViolationOfTypes, JudgesShapesByTheHiddenSizeAndTheDirections) {
  const FirstNode wrong_r = Parsed(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 4] R) => (float[seq, 1, batch, 3] Y) {
  Y = GRU <hidden_size = 3> (X, W, R)
})");
  EXPECT_EQ(OpRuleViolationOfTypes(wrong_r.node(), wrong_r.op(), DeclaredTypes(wrong_r.model)),
            "input R 'R' has shape [1,9,4], but GRU with hidden_size 3 takes [1,9,3]");
  const FirstNode one_direction = Parsed(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 2, batch, 3] Y) {
  Y = GRU <hidden_size = 3, direction = "bidirectional"> (X, W, R)
})");
  EXPECT_THAT(OpRuleViolationOfTypes(one_direction.node(), one_direction.op(), DeclaredTypes(one_direction.model)),
              StartsWith("input W 'W' has shape [1,9,2], but a bidirectional GRU with hidden_size 3 takes [2,9,"));
}

TEST(OpRuleViolationOfTypes, ReadsTheHiddenSizeFromTheWeightsWithoutTheAttribute) {
  const FirstNode model = Parsed(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[1, 12, 2] W, float[1, 12, 3] R) => (float[seq, 1, batch, 3] Y) {
  Y = GRU (X, W, R)
})");
  // R [1, 3 * hidden, hidden] gives 3, which W's 12 = 4 * 3 (an LSTM's gates) does not fit.
  EXPECT_EQ(OpRuleViolationOfTypes(model.node(), model.op(), DeclaredTypes(model.model)),
            "input W 'W' has shape [1,12,2], but GRU with hidden size 3 (read from R) takes [1,9,input_size]");
}

TEST(OpRuleViolationOfTypes, BindsOneElementTypePerConstraintAndIgnoresUnknownTypes) {
  const FirstNode model = Parsed(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R, double[1, batch, 3] h) => (float[seq, 1, batch, 3] Y) {
  Y = GRU <hidden_size = 3> (X, W, R, , , h)
})");
  EXPECT_THAT(OpRuleViolationOfTypes(model.node(), model.op(), DeclaredTypes(model.model)),
              HasSubstr("input initial_h 'h' has element type DOUBLE, but input X 'X' has FLOAT"));
  const TypeLookup nothing_known = [](const std::string&) -> const onnx::TypeProto* { return nullptr; };
  EXPECT_EQ(OpRuleViolationOfTypes(model.node(), model.op(), nothing_known), "");
  EXPECT_EQ(OpRuleViolation(model.node(), model.op(), 14, nothing_known), "");
}

TEST(OpsetOf, ReadsTheImportOfTheOperatorsDomain) {
  const FirstNode gru = Parsed(kGru);
  EXPECT_EQ(OpsetOf(gru.model, gru.op()), 14);
  onnx::NodeProto quantized;
  quantized.set_op_type("DynamicQuantizeLSTM");
  quantized.set_domain("com.microsoft");
  const RecurrentOp& microsoft = *FindRecurrentOp(quantized);
  EXPECT_EQ(OpsetOf(gru.model, microsoft), 0);  // not imported
  const onnx::ModelProto both = ParseModel(R"(<ir_version: 8, opset_import: ["com.microsoft" : 1, "ai.onnx" : 13]>
g (float[2] x) => (float[2] y) {
  y = Identity (x)
})");
  EXPECT_EQ(OpsetOf(both, microsoft), 1);
  EXPECT_EQ(OpsetOf(both, gru.op()), 13);  // "ai.onnx" spells the default domain
}

TEST(FirstOpRuleViolation, NamesTheGraphAndTheNodeOfTheFirstBreach) {
  EXPECT_EQ(FirstOpRuleViolation(ModelIndex(ParseModel(kLstm))), "");
  const onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[1, 12, 2] W, float[1, 16, 3] R) => (float[seq, 1, batch, 3] Y) {
  Y = LSTM <hidden_size = 3> (X, W, R)
})");
  EXPECT_THAT(
      FirstOpRuleViolation(ModelIndex(model)),
      AllOf(StartsWith("main: LSTM"), HasSubstr("input R 'R' has shape [1,16,3], but LSTM with hidden_size 3")));
}

}  // namespace
}  // namespace rnnstate::op_rules_test
