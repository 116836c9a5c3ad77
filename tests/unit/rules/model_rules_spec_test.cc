// More rules of the spec every command checks (model_rules.h, docs/validation.md), from an adversarial
// audit: recursive functions (which crashed onnx's shape inference), `clip`, one element type per type
// constraint, the input and output counts of If, Loop and Scan, and inline tensor data that does not fit
// its dims (tensor_data.h). Each model is one that was accepted before.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>

#include "io/model_file.h"
#include "io/model_io.h"
#include "io/tensor_data.h"
#include "rnnstate/error.h"
#include "rules/model_rules.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::model_rules_spec_test {
namespace {

using namespace test_names;

/// A model of ONNX text (graph only), with LSTM weights W [1,16,2] and R [1,16,4].
onnx::ModelProto Model(const std::string& graph) {
  onnx::ModelProto model = testing::ParseModel("<ir_version: 8, opset_import: [\"\" : 14, \"local\" : 1]>\n" + graph);
  testing::AddFloatInitializer(*model.mutable_graph(), "W", {1, 16, 2}, {0.1f});
  testing::AddFloatInitializer(*model.mutable_graph(), "R", {1, 16, 4}, {0.2f});
  return model;
}

const char kLstm[] = R"(g (float[3, 1, 2] X) => (float[3, 1, 1, 4] Y) {
  Y = LSTM <hidden_size = 4%s> (X, W, R)
})";

/// The LSTM above with `attributes` added.
onnx::ModelProto Lstm(const std::string& attributes) {
  std::string text = kLstm;
  return Model(text.replace(text.find("%s"), 2, attributes));
}

/// Adds function `domain.name` (x -> y) whose body calls each of `calls` ("local.G"), the last call
/// writing y; `in_if` puts the calls in the then_branch of an If instead.
onnx::FunctionProto& AddFunction(onnx::ModelProto& model, const std::string& name,
                                 const std::vector<std::string>& calls, bool in_if = false) {
  onnx::FunctionProto* function = model.add_functions();
  function->set_domain("local");
  function->set_name(name);
  function->add_input("x");
  function->add_output("y");
  function->add_opset_import()->set_version(14);
  function->add_opset_import()->set_domain("local");
  function->mutable_opset_import(1)->set_version(1);
  onnx::GraphProto branch;
  auto* nodes = in_if ? branch.mutable_node() : function->mutable_node();
  for (const std::string& call : calls) {
    onnx::NodeProto* node = nodes->Add();
    node->set_domain("local");
    node->set_op_type(call);
    node->add_input("x");
    node->add_output(in_if ? "b" : "y");
  }
  if (in_if) {
    branch.add_output()->set_name("b");
    onnx::GraphProto other = branch;
    onnx::NodeProto* node = function->add_node();
    node->set_op_type("If");
    node->add_input("x");
    node->add_output("y");
    for (const char* attribute_name : {"then_branch", "else_branch"}) {
      onnx::AttributeProto* attribute = node->add_attribute();
      attribute->set_name(attribute_name);
      attribute->set_type(onnx::AttributeProto::GRAPH);
      *attribute->mutable_g() = attribute_name[0] == 't' ? branch : other;
    }
  }
  return *function;
}

/// The LSTM model whose graph also calls local.F on X.
onnx::ModelProto CallingF() {
  return Model(R"(g (float[3, 1, 2] X) => (float[3, 1, 1, 4] Y, float[3, 1, 2] Z) {
  Y = LSTM <hidden_size = 4> (X, W, R)
  Z = local.F (X)
})");
}

TEST(FunctionRules, AFunctionThatCallsItselfIsInvalidBeforeShapeInferenceFollowsIt) {
  // onnx 1.12's shape inference recursed without end on these (exit 139 from every command).
  onnx::ModelProto direct = CallingF();
  AddFunction(direct, "F", {"F"});
  EXPECT_EQ(Verdict(direct),
            "invalid model: function 'local.F' calls itself (local.F -> local.F): a model's functions must not be "
            "recursive");
  onnx::ModelProto mutual = CallingF();
  AddFunction(mutual, "F", {"G"});
  AddFunction(mutual, "G", {"F"});
  EXPECT_THAT(Verdict(mutual), HasSubstr("function 'local.F' calls itself (local.F -> local.G -> local.F)"));
  onnx::ModelProto via_if = CallingF();
  AddFunction(via_if, "F", {"F"}, /*in_if=*/true);  // the call in a subgraph of the body
  EXPECT_THAT(Verdict(via_if), HasSubstr("function 'local.F' calls itself (local.F -> local.F)"));
}

TEST(FunctionRules, RecursionIsInvalidEvenWhenNothingCallsTheFunction) {
  // As onnx's checker has it ("model-local functions must not be recursive"), called or not.
  onnx::ModelProto model = Lstm("");
  AddFunction(model, "Unused", {"Helper"});
  AddFunction(model, "Helper", {"Other", "Unused"});
  AddFunction(model, "Other", {});
  EXPECT_THAT(Verdict(model),
              HasSubstr("function 'local.Unused' calls itself (local.Unused -> local.Helper -> local.Unused)"));
}

TEST(FunctionRules, FunctionsCallingEachOtherWithoutACycleAreValid) {
  onnx::ModelProto model = CallingF();
  AddFunction(model, "F", {"G", "H"});
  AddFunction(model, "G", {"H"});
  AddFunction(model, "H", {"Relu"}).mutable_node(0)->set_domain("");
  EXPECT_EQ(Verdict(model), "");
}

TEST(FunctionRules, AFunctionDefinedTwiceIsInvalid) {
  // A call could not say which one it means (newer onnx refuses it too); before, accepted.
  onnx::ModelProto model = CallingF();
  AddFunction(model, "F", {"Relu"}).mutable_node(0)->set_domain("");
  AddFunction(model, "F", {"Neg"}).mutable_node(0)->set_domain("");
  EXPECT_EQ(Verdict(model),
            "invalid model: function 'local.F' is defined twice: a model's functions must differ in domain or name");
}

TEST(OpRules, ClipMustBePositive) {
  EXPECT_EQ(Verdict(Lstm(", clip = 5.0")), "");
  // ONNX Runtime: "clip_ > 0.f was false".
  EXPECT_EQ(Verdict(Lstm(", clip = -1.0")), "invalid model: main: LSTM 'LSTM_0': clip -1 is not positive");
  EXPECT_EQ(Verdict(Lstm(", clip = 0.0")), "invalid model: main: LSTM 'LSTM_0': clip 0 is not positive");
  onnx::ModelProto nan = Lstm(", clip = 1.0");
  nan.mutable_graph()->mutable_node(0)->mutable_attribute(1)->set_f(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(Verdict(nan), "invalid model: main: LSTM 'LSTM_0': clip nan is not positive");
  EXPECT_EQ(Verdict(Lstm(", clip = 2")), "invalid model: main: LSTM 'LSTM_0': attribute 'clip' is not a float");
}

TEST(OpRules, OneTypeConstraintBindsOneElementType) {
  onnx::ModelProto model = Model(R"(g (float[3, 1, 2] X, double[1, 1, 4] h0) => (float[3, 1, 1, 4] Y) {
  Y = LSTM <hidden_size = 4> (X, W, R, , , h0)
})");
  EXPECT_EQ(Verdict(model),
            "invalid model: main: LSTM 'LSTM_0': input initial_h 'h0' has element type DOUBLE, but input X 'X' has "
            "FLOAT (LSTM takes one element type for X, W, R, B, initial_h, initial_c and P)");
  // The same from an initializer (the audit's h0 of DOUBLE was only "not rewritten").
  onnx::ModelProto fed = Lstm("");
  onnx::TensorProto* h0 = fed.mutable_graph()->add_initializer();
  h0->set_name("h0");
  h0->set_data_type(onnx::TensorProto::DOUBLE);
  for (int64_t dim : {1, 1, 4}) h0->add_dims(dim);
  for (int i = 0; i < 4; ++i) h0->add_double_data(0.0);
  onnx::NodeProto* lstm = fed.mutable_graph()->mutable_node(0);
  lstm->add_input("");
  lstm->add_input("");
  lstm->add_input("h0");
  EXPECT_THAT(Verdict(fed), HasSubstr("input initial_h 'h0' has element type DOUBLE, but input X 'X' has FLOAT"));
  h0->clear_double_data();
  h0->set_data_type(onnx::TensorProto::FLOAT);
  for (int i = 0; i < 4; ++i) h0->add_float_data(0.0f);
  EXPECT_EQ(Verdict(fed), "");
}

/// A main graph with an If on `cond` whose branches are `then_branch` and `else_branch` (ONNX text
/// bodies), declaring `outputs` as the If's outputs.
onnx::ModelProto If(const std::string& outputs, const std::string& then_branch, const std::string& else_branch) {
  return Model("g (bool c, float[3, 1, 2] X) => (float[3, 1, 1, 4] Y) {\n  " + outputs +
               " = If (c) <then_branch = " + then_branch + ", else_branch = " + else_branch + ">\n}");
}

const char kBranch[] = "t () => (float[3, 1, 1, 4] Y) { Y = LSTM <hidden_size = 4> (X, W, R) }";
const char kBranch2[] = "e () => (float[3, 1, 1, 4] Y, float[1, 1, 4] H) { Y, H = LSTM <hidden_size = 4> (X, W, R) }";

TEST(ContainerRules, IfBranchesTakeNoInputsAndHaveOneOutputPerIfOutput) {
  EXPECT_EQ(Verdict(If("Y", kBranch, kBranch)), "");
  EXPECT_EQ(
      Verdict(If("Y", kBranch, "e (float[1] u) => (float[3, 1, 1, 4] Y) { Y = LSTM <hidden_size = 4> (X, W, R) }")),
      "invalid model: main: If 'If_0': the If's else_branch has 1 input (an If branch takes none)");
  EXPECT_EQ(Verdict(If("Y", kBranch, kBranch2)),
            "invalid model: main: If 'If_0': the If's then_branch has 1 output, but its else_branch 2");
  EXPECT_EQ(Verdict(If("Y", kBranch2, kBranch2)),
            "invalid model: main: If 'If_0': the If has 1 output, but its branches have 2");
  EXPECT_EQ(Verdict(If("Y, A, B", kBranch, kBranch)),
            "invalid model: main: If 'If_0': the If has 3 outputs, but its branches have 1");
}

TEST(ContainerRules, ALoopHasOneOutputPerBodyOutputAfterTheCondition) {
  const std::string loop = R"(g (int64 n, bool c, float[1, 1, 4] h0) => (float[1, 1, 4] H) {
  %s = Loop (n, c, h0) <body = b (int64 i, bool ci, float[1, 1, 4] h) => (bool co, float[1, 1, 4] hn) {
    co = Identity (ci)
    hn = Identity (h)
  }>
})";
  auto with_outputs = [&](const std::string& outputs) {
    std::string text = loop;
    return Model(text.replace(text.find("%s"), 2, outputs));
  };
  EXPECT_EQ(Verdict(with_outputs("H")), "");
  // onnx's Loop inference (ONNX Runtime): "returned type information for 2 outputs. Expected 4".
  EXPECT_EQ(Verdict(with_outputs("H, S, T")),
            "invalid model: main: Loop 'Loop_0': the Loop has 3 outputs, but its body returns 1 after its condition "
            "(one Loop output for each)");
}

TEST(ContainerRules, AScanBodyTakesOneInputPerStateAndScanInputAndReturnsTheScansOutputs) {
  const std::string scan = R"(g (float[1, 4] s0, float[3, 4] xs) => (float[1, 4] S) {
  %s = Scan <num_scan_inputs = 1, body = b (%s) => (float[1, 4] so, float[4] y) {
    so = Add (s, x)
    y = Identity (x)
  }> (s0, xs)
})";
  auto model = [&](const std::string& outputs, const std::string& inputs) {
    std::string text = scan;
    text.replace(text.find("%s"), 2, outputs);
    return Model(text.replace(text.find("%s"), 2, inputs));
  };
  EXPECT_EQ(Verdict(model("S, Ys", "float[1, 4] s, float[4] x")), "");
  EXPECT_EQ(Verdict(model("S, Ys", "float[1, 4] s, float[4] x, float[4] extra")),
            "invalid model: main: Scan 'Scan_0': the Scan body has 3 inputs, but the Scan passes it 2 (one per state "
            "variable and scan input)");
  EXPECT_EQ(Verdict(model("S", "float[1, 4] s, float[4] x")),
            "invalid model: main: Scan 'Scan_0': the Scan has 1 output, but its body returns 2");
}

/// A FLOAT tensor `name` of `dims` with `values` in float_data.
onnx::TensorProto Tensor(const std::vector<int64_t>& dims, int values) {
  onnx::TensorProto tensor;
  tensor.set_name("h0");
  tensor.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t dim : dims) tensor.add_dims(dim);
  for (int i = 0; i < values; ++i) tensor.add_float_data(0.0f);
  return tensor;
}

std::string Problem(const onnx::TensorProto& tensor) { return InlineDataProblem(tensor, tensor.raw_data().size()); }

TEST(TensorData, ValuesMustFitTheDims) {
  EXPECT_EQ(Problem(Tensor({1, 1, 4}, 4)), "");
  EXPECT_EQ(Problem(Tensor({}, 1)), "");  // a scalar
  EXPECT_EQ(Problem(Tensor({2, 0}, 0)), "");
  EXPECT_EQ(Problem(Tensor({1, 1, 4}, 1)), "float_data has 1 value, but FLOAT [1,1,4] takes 4");
  EXPECT_EQ(Problem(Tensor({1, 1, 4}, 0)), "float_data has 0 values, but FLOAT [1,1,4] takes 4");
  EXPECT_EQ(Problem(Tensor({1, -1, 4}, 4)), "dim -1 is negative (FLOAT [1,-1,4])");
  onnx::TensorProto raw = Tensor({1, 1, 4}, 0);
  raw.set_raw_data(std::string(3, '\1'));
  EXPECT_EQ(Problem(raw), "raw_data has 3 bytes, but FLOAT [1,1,4] takes 16 bytes");
  raw.set_raw_data(std::string(64, '\0'));
  EXPECT_EQ(Problem(raw), "raw_data has 64 bytes, but FLOAT [1,1,4] takes 16 bytes");
  raw.set_raw_data(std::string(16, '\0'));
  EXPECT_EQ(Problem(raw), "");
  EXPECT_EQ(InlineDataProblem(raw, std::nullopt), "");  // a payload of unknown length is not judged
  EXPECT_EQ(InlineDataProblem(raw, 17), "raw_data has 17 bytes, but FLOAT [1,1,4] takes 16 bytes");
}

TEST(TensorData, SizesDoNotOverflow) {
  onnx::TensorProto big = Tensor({1, 16, int64_t{1} << 40}, 0);
  big.set_raw_data(std::string(128, '\0'));
  EXPECT_EQ(Problem(big), "raw_data has 128 bytes, but FLOAT [1,16,1099511627776] takes 70368744177664 bytes");
  onnx::TensorProto huge = Tensor({int64_t{1} << 40, int64_t{1} << 40}, 0);
  huge.set_raw_data(std::string(16, '\0'));
  EXPECT_EQ(Problem(huge),
            "raw_data has 16 bytes, but FLOAT [1099511627776,1099511627776] takes more than 2^64 - 1 bytes");
  huge.clear_raw_data();
  huge.add_float_data(0.0f);
  EXPECT_EQ(Problem(huge), "float_data has 1 value, but FLOAT [1099511627776,1099511627776] takes more than 2^64 - 1");
}

TEST(TensorData, EveryTypedFieldIsCountedAndStringsHaveNoFixedSize) {
  onnx::TensorProto complex;
  complex.set_data_type(onnx::TensorProto::COMPLEX64);
  complex.add_dims(2);
  for (int i = 0; i < 2; ++i) complex.add_float_data(1.0f);
  EXPECT_EQ(Problem(complex), "float_data has 2 values, but COMPLEX64 [2] takes 4");
  onnx::TensorProto half;
  half.set_data_type(onnx::TensorProto::FLOAT16);
  half.add_dims(3);
  half.add_int32_data(0);
  EXPECT_EQ(Problem(half), "int32_data has 1 value, but FLOAT16 [3] takes 3");
  onnx::TensorProto text;
  text.set_data_type(onnx::TensorProto::STRING);
  text.add_dims(2);
  text.add_string_data("a long string");
  text.add_string_data("");
  EXPECT_EQ(Problem(text), "");
  text.add_string_data("third");
  EXPECT_EQ(Problem(text), "string_data has 3 values, but STRING [2] takes 2");
  onnx::TensorProto external = Tensor({1, 1, 4}, 0);
  external.set_data_location(onnx::TensorProto::EXTERNAL);
  EXPECT_EQ(Problem(external), "");  // external_data.h checks its range
}

TEST(TensorData, EveryTensorOfTheModelIsChecked) {
  // An initializer of the main graph, of a subgraph, a Constant's value in a function body.
  onnx::ModelProto model = Lstm("");
  *model.mutable_graph()->add_initializer() = Tensor({1, 1, 4}, 1);
  EXPECT_EQ(Verdict(model),
            "invalid model: tensor 'h0' at graph.initializer[2]: float_data has 1 value, but FLOAT [1,1,4] takes 4");
  onnx::ModelProto nested = If("Y", kBranch, kBranch);
  onnx::AttributeProto* then_branch = nested.mutable_graph()->mutable_node(0)->mutable_attribute(0);
  *then_branch->mutable_g()->add_initializer() = Tensor({2}, 3);
  EXPECT_THAT(Verdict(nested), HasSubstr("tensor 'h0' at graph.node[0].attribute[0].g.initializer[0]: float_data has 3 "
                                         "values, but FLOAT [2] takes 2"));
  onnx::ModelProto in_function = CallingF();
  onnx::NodeProto* constant = AddFunction(in_function, "F", {}).add_node();
  constant->set_op_type("Constant");
  constant->add_output("y");
  onnx::AttributeProto* value = constant->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  *value->mutable_t() = Tensor({1, 1, 4}, 0);
  value->mutable_t()->set_raw_data(std::string(3, '\0'));
  EXPECT_THAT(Verdict(in_function),
              HasSubstr("tensor 'h0' at functions[0].node[0].attribute[0].t: raw_data has 3 bytes, but FLOAT [1,1,4] "
                        "takes 16 bytes"));
}

TEST(TensorData, APayloadLeftInTheFileCountsByItsLengthThere) {
  // ModelFile leaves raw_data of 1 KiB and more in the file (a 24-byte placeholder in the model): its
  // length is still known, and judged, when the file is opened.
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("rnnstate_tensor_data_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto open_with = [&](const std::vector<int64_t>& dims) {
    onnx::ModelProto model = Lstm("");
    onnx::TensorProto* big = model.mutable_graph()->add_initializer();
    *big = Tensor(dims, 0);
    big->set_name("big");
    big->set_raw_data(std::string(4096, '\1'));
    const std::string path = (dir / "model.onnx").string();
    std::ofstream(path, std::ios::binary) << model.SerializeAsString();
    return OpenModel(path);
  };
  OpenedModel fits = open_with({1024});
  ASSERT_EQ(fits.file.deferred_count(), 1u);
  EXPECT_EQ(fits.file.RawDataSize(fits.file.model().graph().initializer(2)), 4096u);
  EXPECT_EQ(fits.file.RawDataSize(fits.file.model().graph().initializer(0)), 0u);  // W: float_data
  try {
    open_with({1, 16, int64_t{1} << 40});
    ADD_FAILURE() << "a payload shorter than its dims accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    EXPECT_STREQ(e.what(),
                 "tensor 'big' at graph.initializer[2]: raw_data has 4096 bytes, but FLOAT [1,16,1099511627776] takes "
                 "70368744177664 bytes");
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rnnstate::model_rules_spec_test
