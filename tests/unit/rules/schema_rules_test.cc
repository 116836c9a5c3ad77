// onnx's operator schema rules for one node in rnnstate's words (rules/schema_rules.h): the form of
// attributes every node keeps (none given twice, each with a type), what OpSchema::Verify refuses split into
// its attribute part (not defined at the opset, with the opset that defines it; of the wrong type) and its
// arity part (input and output counts, empty required names, required attributes missing), and the
// opset text messages name.

#include "rules/schema_rules.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "test_names.h"

namespace rnnstate::schema_rules_test {
namespace {

using namespace test_names;

/// A node of `op` (default domain) reading `inputs` and writing `outputs`.
onnx::NodeProto Node(const std::string& op, std::initializer_list<const char*> inputs,
                     std::initializer_list<const char*> outputs) {
  onnx::NodeProto node;
  node.set_op_type(op);
  for (const char* name : inputs) node.add_input(name);
  for (const char* name : outputs) node.add_output(name);
  return node;
}

void AddInt(onnx::NodeProto& node, const std::string& name, int64_t value) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

/// What SchemaRuleViolation says of `node` against its default-domain schema at `opset`.
SchemaViolation Judged(const onnx::NodeProto& node, int opset) {
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(node.op_type(), opset, "");
  if (schema == nullptr) throw std::runtime_error("no schema for " + node.op_type());
  return SchemaRuleViolation(node, *schema, opset);
}

TEST(SchemaRuleViolation, SaysNothingOfANodeVerifyAccepts) {
  onnx::NodeProto lstm = Node("LSTM", {"X", "W", "R"}, {"Y", "Y_h"});
  AddInt(lstm, "hidden_size", 3);
  AddInt(lstm, "layout", 0);
  const SchemaViolation violation = Judged(lstm, 14);
  EXPECT_EQ(violation.attributes, "");
  EXPECT_EQ(violation.arity, "");
}

TEST(SchemaRuleViolation, NamesTheOpsetThatDefinesAnAttributeToComeLater) {
  onnx::NodeProto lstm = Node("LSTM", {"X", "W", "R"}, {"Y"});
  AddInt(lstm, "hidden_size", 3);
  AddInt(lstm, "layout", 0);
  EXPECT_EQ(Judged(lstm, 7).attributes,
            "attribute 'layout' is not defined by LSTM at ai.onnx opset 7 (only from opset 14)");
  onnx::NodeProto relu = Node("Relu", {"x"}, {"y"});
  AddInt(relu, "alpha", 1);
  EXPECT_EQ(Judged(relu, 14).attributes, "attribute 'alpha' is not defined by Relu at ai.onnx opset 14");
}

TEST(SchemaRuleViolation, NamesAnAttributeOfTheWrongType) {
  onnx::NodeProto concat = Node("Concat", {"a", "b"}, {"c"});
  auto* axis = concat.add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::FLOAT);
  axis->set_f(0.0f);
  EXPECT_EQ(Judged(concat, 13).attributes, "attribute 'axis' is not an integer");
}

TEST(SchemaRuleViolation, SaysArityAndRequiredNamesApartFromAttributes) {
  onnx::NodeProto lstm = Node("LSTM", {"X", "W", "R"}, {"Y", "Y_h", "Y_c", "extra"});
  AddInt(lstm, "hidden_size", 3);
  EXPECT_EQ(Judged(lstm, 14).arity, "has 4 outputs, but LSTM takes 0 to 3");
  EXPECT_EQ(Judged(lstm, 14).attributes, "");
  EXPECT_EQ(Judged(Node("Add", {"a"}, {"c"}), 14).arity, "has 1 input, but Add takes exactly 2");
  EXPECT_EQ(Judged(Node("Add", {"a", ""}, {"c"}), 14).arity, "required input B is empty");
  EXPECT_EQ(Judged(Node("Concat", {"a", "b"}, {"c"}), 13).arity, "required attribute 'axis' is missing");
  EXPECT_EQ(Judged(Node("Concat", {}, {"c"}), 13).arity, "has 0 inputs, but Concat takes at least 1");
}

TEST(AttributeFormViolation, RefusesAnAttributeGivenTwiceOrWithoutAType) {
  onnx::NodeProto gru = Node("GRU", {"X", "W", "R"}, {"Y"});
  AddInt(gru, "hidden_size", 3);
  EXPECT_EQ(AttributeFormViolation(gru), "");
  AddInt(gru, "hidden_size", 4);
  EXPECT_EQ(AttributeFormViolation(gru), "attribute 'hidden_size' is given twice");
  onnx::NodeProto untyped = Node("GRU", {"X", "W", "R"}, {"Y"});
  untyped.add_attribute()->set_name("clip");
  EXPECT_EQ(AttributeFormViolation(untyped), "attribute 'clip' has no type");
}

TEST(OpsetText, SpellsTheDefaultDomainAsAiOnnx) {
  EXPECT_EQ(OpsetText("", 14), "ai.onnx opset 14");
  EXPECT_EQ(OpsetText("ai.onnx", 7), "ai.onnx opset 7");
  EXPECT_EQ(OpsetText("com.microsoft", 1), "com.microsoft opset 1");
}

}  // namespace
}  // namespace rnnstate::schema_rules_test
