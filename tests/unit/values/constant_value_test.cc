// The one reader of constants (constant_value.h): every form a Constant node or an initializer writes a
// value in, seen across scopes, and what it refuses to know.

#include "values/constant_value.h"

#include <gtest/gtest.h>

#include "graph/model_index.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::constant_value_test {
namespace {

using namespace test_names;

// One Constant node per value attribute, an initializer, an overridable initializer (a graph input with a
// default) and a computed value.
onnx::ModelProto ConstantsModel() {
  return ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[2] x, int64[1] fed) => (float[2] y) <int64[2] init_ints = {3, 4}, int64[1] fed = {5}, bool[1] flag = {1}> {
  one = Constant <value_int = 7> ()
  some = Constant <value_ints = [1, 2, 3]> ()
  half = Constant <value_float = 0.5> ()
  zeros = Constant <value_floats = [0.0, 0.0]> ()
  word = Constant <value_string = "a"> ()
  tensor = Constant <value = int32[2, 1] {8, 9}> ()
  zero_tensor = Constant <value = float[2] {0.0, 0.0}> ()
  yes = Constant <value = bool {1}> ()
  computed = Shape (x)
  y = Identity (x)
})");
}

TEST(ConstantValue, EveryValueAttributeOfAConstantHasItsFormTypeAndDims) {
  const onnx::ModelProto model = ConstantsModel();
  const ModelIndex index(model);
  auto form_of = [&](const std::string& name) { return FindConstant(index, {}, name)->form; };
  using Form = ConstantValue::Form;
  EXPECT_EQ(form_of("one"), Form::kInt);
  EXPECT_EQ(form_of("some"), Form::kInts);
  EXPECT_EQ(form_of("half"), Form::kFloat);
  EXPECT_EQ(form_of("zeros"), Form::kFloats);
  EXPECT_EQ(form_of("word"), Form::kString);
  EXPECT_EQ(form_of("tensor"), Form::kTensor);
  EXPECT_EQ(form_of("init_ints"), Form::kTensor);

  EXPECT_EQ(FindConstant(index, {}, "some")->elem_type, onnx::TensorProto::INT64);
  EXPECT_EQ(FindConstant(index, {}, "half")->elem_type, onnx::TensorProto::FLOAT);
  EXPECT_EQ(FindConstant(index, {}, "tensor")->elem_type, onnx::TensorProto::INT32);
  EXPECT_EQ(ConstantDims(index, {}, "tensor"), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(ConstantDims(index, {}, "one"), std::vector<int64_t>{});
  // value_ints has one axis of its count, but the shape readers do not take it.
  EXPECT_EQ(FindConstant(index, {}, "some")->dims, std::vector<int64_t>{3});
  EXPECT_EQ(ConstantDims(index, {}, "some"), std::nullopt);
}

TEST(ConstantValue, IntegersAreReadFromEveryIntegerForm) {
  const onnx::ModelProto model = ConstantsModel();
  const ModelIndex index(model);
  EXPECT_EQ(ConstantIntegers(index, {}, "one"), std::vector<int64_t>{7});
  EXPECT_EQ(ConstantIntegers(index, {}, "some"), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(ConstantIntegers(index, {}, "tensor"), (std::vector<int64_t>{8, 9}));
  EXPECT_EQ(ConstantIntegers(index, {}, "init_ints"), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(ConstantScalar(index, {}, "one"), 7);
  EXPECT_EQ(ConstantScalar(index, {}, "some"), std::nullopt);    // three values are no scalar
  EXPECT_EQ(ConstantIntegers(index, {}, "half"), std::nullopt);  // a float is no integer
}

TEST(ConstantValue, NumbersAreReadFromIntegerAndFloatingPointForms) {
  // tf2onnx writes a loop's length as a float bound (60.0f) beside the int64 trip count.
  const onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[2] x) => (float[2] y) <float bound = {60.0}, double[1] wide = {2.5}, float[2] pair = {1.0, 2.0}> {
  half = Constant <value_float = 0.5> ()
  floats = Constant <value_floats = [3.0]> ()
  one = Constant <value_int = 7> ()
  word = Constant <value_string = "a"> ()
  y = Identity (x)
})");
  const ModelIndex index(model);
  EXPECT_EQ(ConstantNumber(index, {}, "bound"), 60.0);
  EXPECT_EQ(ConstantNumber(index, {}, "wide"), 2.5);
  EXPECT_EQ(ConstantNumber(index, {}, "half"), 0.5);
  EXPECT_EQ(ConstantNumber(index, {}, "floats"), 3.0);
  EXPECT_EQ(ConstantNumber(index, {}, "one"), 7.0);
  EXPECT_EQ(ConstantNumber(index, {}, "pair"), std::nullopt);  // two values are no scalar
  EXPECT_EQ(ConstantNumber(index, {}, "word"), std::nullopt);
  EXPECT_EQ(ConstantNumber(index, {}, "x"), std::nullopt);
  EXPECT_EQ(ConstantScalar(index, {}, "bound"), std::nullopt);  // integer readers stay integer
}

TEST(ConstantValue, WhatCanChangeAtRunTimeIsNoConstant) {
  const onnx::ModelProto model = ConstantsModel();
  const ModelIndex index(model);
  EXPECT_FALSE(FindConstant(index, {}, "fed"));       // a caller may feed it
  EXPECT_FALSE(FindConstant(index, {}, "computed"));  // computed by a node that is no Constant
  EXPECT_FALSE(FindConstant(index, {}, "x"));
  EXPECT_FALSE(FindConstant(index, {}, ""));
  EXPECT_FALSE(FindConstant(index, {}, "nowhere"));
}

TEST(ConstantValue, ZerosAndBooleans) {
  const onnx::ModelProto model = ConstantsModel();
  const ModelIndex index(model);
  auto zero = [&](const std::string& name) { return KnownAllZero(*FindConstant(index, {}, name)); };
  EXPECT_TRUE(zero("zeros"));
  EXPECT_TRUE(zero("zero_tensor"));
  EXPECT_FALSE(zero("one"));
  EXPECT_FALSE(zero("half"));
  EXPECT_FALSE(zero("word"));  // a string is never known to be zero
  EXPECT_EQ(OneBool(*FindConstant(index, {}, "yes")), true);
  EXPECT_EQ(OneBool(*FindConstant(index, {}, "flag")), true);
  EXPECT_EQ(OneBool(*FindConstant(index, {}, "one")), std::nullopt);  // an integer is no bool
}

TEST(ConstantValue, AConstantOfAnEnclosingGraphIsSeenFromItsSubgraph) {
  const onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (bool c, float[2] x) => (float[2] y) {
  k = Constant <value_int = 4> ()
  y = If (c) <then_branch = t () => (float[2] a) { a = Identity (x) },
              else_branch = e () => (float[2] b) { b = Identity (x) }>
})");
  const ModelIndex index(model);
  const GraphPath branch{GraphStep{1, "then_branch", -1}};  // the If is node 1
  EXPECT_EQ(ConstantScalar(index, branch, "k"), 4);
}

TEST(ConstantValue, ExternalPayloadsAreUnknownButTheirDimsAreKnown) {
  onnx::TensorProto tensor;
  tensor.set_name("w");
  tensor.set_data_type(onnx::TensorProto::INT64);
  tensor.add_dims(2);
  tensor.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* location = tensor.add_external_data();
  location->set_key("location");
  location->set_value("w.bin");
  EXPECT_TRUE(PayloadUnknown(tensor));
  const ConstantValue constant = ConstantOfTensor(tensor);
  EXPECT_EQ(IntegerValues(constant), std::nullopt);
  EXPECT_FALSE(KnownAllZero(constant));
  EXPECT_EQ(constant.dims, std::vector<int64_t>{2});
}

}  // namespace
}  // namespace rnnstate::constant_value_test
