// The rules every command checks before it reads a model (model_rules.h, docs/validation.md): one test
// per rule with the message it gives, what stays valid (other domains, newer opsets, opset < 7), and the
// same verdict from rewrite, check and report.

#include "rules/model_rules.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>

#include "pipeline_stages.h"
#include "rnnstate/error.h"
#include "rnnstate/pipeline.h"
#include "test_models.h"
#include "test_names.h"
#include "validate/validate.h"

namespace rnnstate::model_rules_test {
namespace {

using namespace test_names;

/// A model of ONNX text (graph only) at `opset`, with GRU weights W [1,9,2] and R [1,9,3].
onnx::ModelProto Model(const std::string& graph, int opset = 14) {
  onnx::ModelProto model = testing::ParseModel("<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) +
                                               ", \"com.example\" : 1]>\n" + graph);
  testing::AddFloatInitializer(*model.mutable_graph(), "W", {1, 9, 2}, {0.1f});
  testing::AddFloatInitializer(*model.mutable_graph(), "R", {1, 9, 3}, {0.2f});
  return model;
}

/// One GRU on X (type `x_type`) with `attributes` and `inputs`.
onnx::ModelProto Gru(const std::string& attributes, const std::string& inputs = "X, W, R",
                     const std::string& x_type = "float") {
  return Model("g (" + x_type + R"([seq, batch, 2] X) => (float[seq, 1, batch, 3] Y) {
  Y = GRU <)" + attributes +
               "> (" + inputs + R"()
})");
}

/// `model` with its float initializers W and R made zeros of `type` (DOUBLE or FLOAT16).
onnx::ModelProto WeightsOf(onnx::ModelProto model, onnx::TensorProto::DataType type) {
  for (auto& tensor : *model.mutable_graph()->mutable_initializer()) {
    const int count = tensor.float_data_size();
    tensor.clear_float_data();
    tensor.set_data_type(type);
    for (int i = 0; i < count; ++i) {
      if (type == onnx::TensorProto::DOUBLE) tensor.add_double_data(0.0);
      if (type == onnx::TensorProto::FLOAT16) tensor.add_int32_data(0);
    }
  }
  return model;
}

TEST(ModelRules, AValidModelIsIndexed) {
  EXPECT_EQ(Verdict(Gru("hidden_size = 3")), "");
  onnx::ModelProto both_ways = Gru("hidden_size = 3, direction = \"bidirectional\", layout = 0", "X, W2, R2");
  testing::AddFloatInitializer(*both_ways.mutable_graph(), "W2", {2, 9, 2}, {0.1f});
  testing::AddFloatInitializer(*both_ways.mutable_graph(), "R2", {2, 9, 3}, {0.2f});
  EXPECT_EQ(Verdict(both_ways), "");
  EXPECT_EQ(Verdict(Gru("direction = \"reverse\"")), "");  // hidden_size is optional
  // X's element type binds W's and R's (type constraint T): the weights of the other types follow it.
  EXPECT_EQ(Verdict(WeightsOf(Gru("hidden_size = 3", "X, W, R", "double"), onnx::TensorProto::DOUBLE)), "");
  EXPECT_EQ(Verdict(WeightsOf(Gru("hidden_size = 3", "X, W, R", "float16"), onnx::TensorProto::FLOAT16)), "");
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
  // A Loop carrying nothing still has both slots (its schema's two optional inputs), though they may be
  // empty; with one slot only, onnx's checker and ONNX Runtime refuse it.
  const std::string carrying_nothing = R"(g (int64 M) => (float[N] Y) {
  Y = Loop (M%s) <body = b (int64 i, bool c) => (bool d, float s) {
    d = Identity (c)
    s = Constant <value_float = 1.0> ()
  }>
})";
  auto loop_with = [&](const std::string& more) {
    std::string text = carrying_nothing;
    return Model(text.replace(text.find("%s"), 2, more));
  };
  EXPECT_EQ(Verdict(loop_with(", ")), "");
  EXPECT_EQ(Verdict(loop_with("")), "invalid model: main: Loop 'Loop_0': has 1 input, but Loop takes at least 2");
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

TEST(ModelRules, OneValueMayBeTwoOutputsOfASubgraphButNotOfTheMainGraph) {
  // PyTorch's opset-11 and -12 loops return h both as the carried value and as the scan output: outputs
  // of a body are positional (onnx's checker and ONNX Runtime take it). The main graph's are fetched by
  // name. Before, the loop was refused as "duplicate graph output".
  EXPECT_EQ(Verdict(Model(R"(g (int64 M, float[2] X) => (float[2] Y, float[M, 2] Ys) {
  Y, Ys = Loop (M, , X) <body = b (int64 i, bool c, float[2] x) => (bool d, float[2] y, float[2] y) {
    d = Identity (c)
    y = Neg (x)
  }>
})")),
            "");
  EXPECT_EQ(Verdict(Model(R"(g (float[2] X) => (float[2] Y, float[2] Y) {
  Y = Neg (X)
})")),
            "invalid model: main: duplicate graph output 'Y'");
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

TEST(ModelRules, LayoutExistsFromOpset14) {
  EXPECT_EQ(Verdict(Model("g (float[seq, batch, 2] X) => (float[seq, 1, batch, 3] Y) {\n"
                          "  Y = GRU <hidden_size = 3, layout = 0> (X, W, R)\n}",
                          13)),
            "invalid model: main: GRU 'GRU_0': attribute 'layout' is not defined by GRU at ai.onnx opset 13 (only "
            "from opset 14)");
  EXPECT_EQ(Verdict(Gru("hidden_size = 3, layout = 0")), "");  // opset 14
}

TEST(ModelRules, AnAttributeTheOperatorDoesNotDefineIsInvalid) {
  EXPECT_EQ(Verdict(Gru("hidden_size = 3, nonsense = 1")),
            "invalid model: main: GRU 'GRU_0': attribute 'nonsense' is not defined by GRU at ai.onnx opset 14");
  // Any operator of the default domain: ONNX Runtime refuses such a node too.
  EXPECT_EQ(Verdict(Model("g (float[2] X) => (float[2] Y) {\n  Y = Relu <alpha = 1.0> (X)\n}")),
            "invalid model: main: Relu 'Relu_0': attribute 'alpha' is not defined by Relu at ai.onnx opset 14");
  // Not judged where onnx 1.12 does not know the opset: a newer opset may define it.
  EXPECT_EQ(Verdict(Model("g (float[2] X) => (float[2] Y) {\n  Y = Relu <alpha = 1.0> (X)\n}", 18)), "");
}

TEST(ModelRules, AttributesAreGivenOnceWithTheirTypes) {
  onnx::ModelProto twice = Gru("hidden_size = 3");
  *twice.mutable_graph()->mutable_node(0)->add_attribute() = twice.graph().node(0).attribute(0);
  EXPECT_EQ(Verdict(twice), "invalid model: main: GRU 'GRU_0': attribute 'hidden_size' is given twice");
  onnx::ModelProto untyped = Gru("hidden_size = 3.0");  // a float value, then its type removed
  untyped.mutable_graph()->mutable_node(0)->mutable_attribute(0)->clear_type();
  EXPECT_EQ(Verdict(untyped), "invalid model: main: GRU 'GRU_0': attribute 'hidden_size' has no type");
  // A graph attribute of another type is said as such, not as a missing branch.
  onnx::ModelProto branch = Model(R"(g (float[seq, batch, 2] X, bool c) => (float[seq, 1, batch, 3] Y) {
  Y = If (c) <then_branch = 1, else_branch = e () => (float[seq, 1, batch, 3] b) { b = GRU <hidden_size = 3> (X, W, R) }>
})");
  EXPECT_EQ(Verdict(branch), "invalid model: main: If 'If_0': attribute 'then_branch' is not a graph");
}

TEST(ModelRules, InputsAndOutputsAreWhatTheSchemaAllows) {
  EXPECT_EQ(Verdict(Model(R"(g (float[seq, batch, 2] X) => (float[seq, 1, batch, 3] Y) {
  Y, Y_h, extra = GRU <hidden_size = 3> (X, W, R)
})")),
            "invalid model: main: GRU 'GRU_0': has 3 outputs, but GRU takes 0 to 2");
  EXPECT_EQ(Verdict(Model("g (float[2] X) => (float[2] Y) {\n  Y = Add (X)\n}")),
            "invalid model: main: Add 'Add_0': has 1 input, but Add takes exactly 2");
  onnx::ModelProto empty = Model("g (float[2] X) => (float[2] Y) {\n  Y = Add (X, X)\n}");
  empty.mutable_graph()->mutable_node(0)->set_input(1, "");
  EXPECT_EQ(Verdict(empty), "invalid model: main: Add 'Add_0': required input B is empty");
  EXPECT_EQ(Verdict(Model("g (float[2] X) => (float[2] Y) {\n  Y = Unsqueeze (X)\n}", 11)),
            "invalid model: main: Unsqueeze 'Unsqueeze_0': required attribute 'axes' is missing");
}

TEST(ModelRules, ANodeNeedsAnOpType) {
  onnx::ModelProto model = Model("g (float[2] X) => (float[2] Y) {\n  Y = Identity (X)\n}");
  model.mutable_graph()->mutable_node(0)->clear_op_type();
  EXPECT_EQ(Verdict(model), "invalid model: main: node 'node_0': the node has no op_type");
}

TEST(ModelRules, ActivationsAreTheSpecsFunctionsOnePerGateFunctionAndDirection) {
  EXPECT_EQ(Verdict(Gru("hidden_size = 3, activations = [\"Sigmoid\", \"Bogus\"]")),
            "invalid model: main: GRU 'GRU_0': unknown activation 'Bogus' (GRU takes Relu, Tanh, Sigmoid, Affine, "
            "LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign or Softplus)");
  EXPECT_EQ(Verdict(Gru("hidden_size = 3, activations = [\"Sigmoid\", \"Tanh\", \"Tanh\"]")),
            "invalid model: main: GRU 'GRU_0': has 3 activations, but a GRU takes 2");
  EXPECT_EQ(Verdict(Gru("hidden_size = 3, activations = [\"sigmoid\", \"tanh\"]")), "");  // as ONNX Runtime reads them
}

TEST(ModelRules, ShapesMatchTheHiddenSizeAndTheDirections) {
  EXPECT_EQ(Verdict(Gru("hidden_size = 4")),
            "invalid model: main: GRU 'GRU_0': input W 'W' has shape [1,9,2], but GRU with hidden_size 4 takes "
            "[1,12,input_size]");
  // Without the attribute, the hidden size read from R must fit W.
  onnx::ModelProto derived = Gru("direction = \"forward\"", "X, W, R3");
  testing::AddFloatInitializer(*derived.mutable_graph(), "R3", {1, 12, 4}, {0.2f});
  EXPECT_EQ(Verdict(derived),
            "invalid model: main: GRU 'GRU_0': input W 'W' has shape [1,9,2], but GRU with hidden size 4 (read from R) "
            "takes [1,12,input_size]");
  EXPECT_EQ(Verdict(Gru("hidden_size = 3, direction = \"bidirectional\"")),
            "invalid model: main: GRU 'GRU_0': input W 'W' has shape [1,9,2], but a bidirectional GRU with "
            "hidden_size 3 takes [2,9,input_size]");
  EXPECT_EQ(Verdict(Model(R"(g (float[seq, batch, 2] X, float[1, batch, 4] h0) => (float[seq, 1, batch, 3] Y) {
  Y = GRU <hidden_size = 3> (X, W, R, , , h0)
})")),
            "invalid model: main: GRU 'GRU_0': input initial_h 'h0' has shape [1,batch,4], but GRU with hidden_size 3 "
            "takes [1,batch_size,3]");
  EXPECT_EQ(Verdict(Model("g (float[seq, 2] X) => (float[seq, 1, batch, 3] Y) {\n"
                          "  Y = GRU <hidden_size = 3> (X, W, R)\n}")),
            "invalid model: main: GRU 'GRU_0': input X 'X' has shape [seq,2], but GRU with hidden_size 3 takes "
            "[seq_length,batch_size,input_size]");
}

TEST(ModelRules, SequenceLensIsInt32) {
  EXPECT_EQ(Verdict(Model(R"(g (float[seq, batch, 2] X, int64[batch] L) => (float[seq, 1, batch, 3] Y) {
  Y = GRU <hidden_size = 3> (X, W, R, , L)
})")),
            "invalid model: main: GRU 'GRU_0': input sequence_lens 'L' has element type INT64; GRU takes INT32");
}

TEST(ModelRules, FunctionBodiesAreJudgedToo) {
  onnx::ModelProto model = Model("g (float[seq, batch, 2] X) => (float[seq, 1, batch, 3] Y) {\n  Y = local.F (X)\n}");
  model.add_opset_import()->set_domain("local");
  onnx::FunctionProto* function = model.add_functions();
  function->set_domain("local");
  function->set_name("F");
  function->add_input("x");
  function->add_output("y");
  function->add_opset_import()->set_version(14);
  onnx::NodeProto* lstm = function->add_node();
  lstm->set_op_type("LSTM");
  for (const char* input : {"x", "w", "r"}) lstm->add_input(input);
  lstm->add_output("y");
  onnx::AttributeProto* hidden = lstm->add_attribute();
  hidden->set_name("hidden_size");
  hidden->set_type(onnx::AttributeProto::INT);
  hidden->set_i(0);
  EXPECT_EQ(Verdict(model), "invalid model: function 'local.F': LSTM 'LSTM_0': hidden_size 0 is not positive");
  hidden->set_i(3);
  EXPECT_EQ(Verdict(model), "");
  hidden->clear_i();
  hidden->set_ref_attr_name("size");  // the caller's value: not known here
  EXPECT_EQ(Verdict(model), "");
}

TEST(ModelRules, DynamicQuantizeLstmIsJudgedByOnnxRuntimesSchema) {
  const std::string graph = R"(g (float[seq, batch, 2] X, int8[1, 2, 12] W, int8[1, 3, 12] R, float[1] s, int8[1] z)
    => (float[seq, 1, batch, 3] Y) {
  Y = com.microsoft.DynamicQuantizeLSTM <hidden_size = 3%s> (X, W, R, , , , , , s, z, s, z)
})";
  auto model = [&](const std::string& more) {
    std::string text = graph;
    return testing::ParseModel(R"(<ir_version: 8, opset_import: ["" : 14, "com.microsoft" : 1]>)" + std::string("\n") +
                               text.replace(text.find("%s"), 2, more));
  };
  EXPECT_EQ(Verdict(model("")), "");
  EXPECT_EQ(Verdict(model(", layout = 0")),
            "invalid model: main: DynamicQuantizeLSTM 'DynamicQuantizeLSTM_0': attribute 'layout' is not defined by "
            "DynamicQuantizeLSTM at com.microsoft opset 1");
  onnx::ModelProto wide = model("");
  wide.mutable_graph()->mutable_input(1)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::FLOAT);
  EXPECT_EQ(Verdict(wide),
            "invalid model: main: DynamicQuantizeLSTM 'DynamicQuantizeLSTM_0': input W 'W' has element type FLOAT; "
            "DynamicQuantizeLSTM takes INT8 or UINT8");
}

TEST(ModelRules, ARewriteOnnxCannotVouchForIsUnsupportedNotInvalid) {
  // The one verdict only a rewrite reaches (and --dry-run, which runs it on a copy): onnx's checker rejected
  // the input for a reason outside these rules, and inference fails on the rewritten model. Not exit 3:
  // "invalid" is what every command says, from these rules.
  onnx::ModelProto input = Model("g (float[5] A) => (float[5] Y) {\n  Y = Identity (A)\n}");
  input.mutable_graph()->mutable_output(0)->clear_type();  // onnx's checker requires it; these rules do not
  ASSERT_EQ(Verdict(input), "");
  const ValidationBaseline baseline = MakeValidationBaseline(input, /*inference_succeeded=*/true, "");
  ASSERT_FALSE(baseline.checker_applies);
  onnx::ModelProto broken = Model(R"(g (float[5] A) => (float[4] Y) {
  Y = Identity (A)
})");
  try {
    ValidateRewritten(broken, baseline);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUnsupported);
    EXPECT_THAT(e.what(), HasSubstr("cannot validate the rewrite: the input model does not pass onnx's checker"));
  }
}

/// A Loop negating v0 while its condition holds, its trip count `M` of type `trip` and its condition `c` of
/// type `condition` ("int64" and "bool" are what Loop takes).
onnx::ModelProto LoopWithOperands(const std::string& trip, const std::string& condition) {
  return Model("g (" + trip + " M, " + condition + R"( c, float[1] v0) => (float[1] v) {
  v = Loop (M, c, v0) <body = body (int64 i, bool cond, float[1] x) => (bool cond_out, float[1] y) {
    cond_out = Identity (cond)
    y = Neg (x)
  }>
})");
}

// A Loop whose trip count is a float was rewritten without a warning: onnx's full_check (shape inference
// with type checks) and ONNX Runtime refuse it. Now every command refuses it as an invalid model (issue 23).
TEST(ModelRules, ControlFlowOperandsOfTheWrongTypeAreInvalid) {
  const onnx::ModelProto loop = LoopWithOperands("float", "bool");
  EXPECT_THAT(Verdict(loop), HasSubstr("its trip count 'M' has element type FLOAT; Loop takes INT64"));
  const onnx::ModelProto condition = LoopWithOperands("int64", "float");
  EXPECT_THAT(Verdict(condition), HasSubstr("its condition 'c' has element type FLOAT; Loop takes BOOL"));
  const onnx::ModelProto branch = Model(R"(g (int32 c, float[1] a) => (float[1] v) {
  v = If (c) <then_branch = t () => (float[1] y) { y = Neg (a) }, else_branch = e () => (float[1] z) { z = Identity (a) }>
})");
  EXPECT_THAT(Verdict(branch), HasSubstr("its condition 'c' has element type INT32; If takes BOOL"));
  onnx::ModelProto copy = loop;
  for (const auto& run : std::vector<std::function<void()>>{[&] { RewriteForStreaming(copy); },
                                                            [&] { CheckForStreaming(loop); },
                                                            [&] { ReportOf(loop); }}) {
    try {
      run();
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kBadInput);
      EXPECT_EQ(std::string(e.what()), Verdict(loop));
    }
  }
  const onnx::ModelProto valid = LoopWithOperands("int64", "bool");
  EXPECT_EQ(Verdict(valid), "");
}

TEST(ModelRules, RewriteCheckAndReportReachTheSameVerdict) {
  for (const onnx::ModelProto& invalid :
       {Gru("hidden_size = 0"), Gru("hidden_size = 3", "X, W, R", "string"),
        Model("g (float[2] X) => (float[2] Y) {\n  Y = Identity (Z)\n}"), Gru("hidden_size = 3, nonsense = 1"),
        Gru("hidden_size = 4"), Model("g (float[2] X) => (float[2] Y) {\n  Y = Relu <alpha = 1.0> (X)\n}")}) {
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

/// The inferred shape of `name` in the main graph of `index`, "none" when it has none.
std::string InferredShape(const ModelIndex& index, const std::string& name) {
  const onnx::TypeProto* type = index.TypeOf({}, name);
  if (type == nullptr || !type->tensor_type().has_shape()) return "none";
  std::string text;
  for (const auto& d : type->tensor_type().shape().dim()) {
    text += (text.empty() ? "" : ",") + (d.has_dim_value() ? std::to_string(d.dim_value()) : d.dim_param());
  }
  return text;
}

TEST(IndexValidModel, KnowsTheShapesAfterTorchChunksSlicesWithoutChangingTheModel) {
  const onnx::ModelProto model = testing::TorchChunk("float[b, 8, t, 6]");
  const std::string before = model.SerializeAsString();
  const ModelIndex index = IndexValidModel(model);
  EXPECT_EQ(InferredShape(index, "x1"), "b,4,t,6");
  EXPECT_EQ(InferredShape(index, "relu"), "b,4,t,6");
  EXPECT_EQ(model.SerializeAsString(), before);
  // The negative control: a symbolic channel count leaves the bounds, and so the shape, unknown.
  const onnx::ModelProto symbolic_model = testing::TorchChunk("float[b, c, t, 6]");
  const ModelIndex symbolic = IndexValidModel(symbolic_model);
  EXPECT_EQ(InferredShape(symbolic, "x1"), "none");
}

}  // namespace
}  // namespace rnnstate::model_rules_test
