// OpenVinoStatePairs (contract/export_openvino.h) beyond what export_test checks: each JSON state entry
// describes its parameter (result, dtype, shape, batch axis, how it starts), the pairs keep the states'
// order, a learned default is recorded as started by an empty feed, and a name MakeStateful's syntax cannot
// carry is refused (exit 4) with the options that rename it.

#include "contract/export_openvino.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "pipeline_stages.h"
#include "rnnstate/error.h"
#include "rnnstate/metadata.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::export_openvino_test {
namespace {

using namespace test_names;

/// kLstm rewritten with its states required, named by `input_template` / `output_template`.
onnx::ModelProto RequiredLstm(const std::string& input_template = "{node}.{kind}_in",
                              const std::string& output_template = "{node}.{kind}_out") {
  onnx::ModelProto model = ParseModel(kLstm);
  PlanOptions options = InMode(StateInputMode::kRequired);
  options.input_template = input_template;
  options.output_template = output_template;
  RewriteModel(model, options, false);
  return model;
}

TEST(OpenVinoStatePairs, EachStateEntryDescribesItsParameter) {
  const OpenVinoPairs pairs = OpenVinoStatePairs(RequiredLstm());
  ASSERT_EQ(pairs.json["states"].size(), 2u);
  const Json& h = pairs.json["states"][0];
  EXPECT_EQ(h["parameter"], "LSTM_0.h_in");
  EXPECT_EQ(h["result"], "LSTM_0.h_out");
  EXPECT_EQ(h["dtype"], "float32");
  EXPECT_EQ(h["batch_axis"], 1);
  EXPECT_EQ(h["shape"].size(), 3u);
  EXPECT_EQ(h["init"], kInitZeros);
  EXPECT_EQ(pairs.json["states"][1]["parameter"], "LSTM_0.c_in");
  // The pairs are listed in the states' order, not sorted by name.
  EXPECT_EQ(pairs.json["param_res_names"].begin().key(), "LSTM_0.h_in");
}

TEST(OpenVinoStatePairs, ALearnedDefaultStartsFromAnEmptyFeed) {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, batch, 3] Y) {
  Y = GRU <hidden_size = 3> (X, W, R, , , h0)
})");
  testing::AddFloatInitializer(*model.mutable_graph(), "h0", {1, 1, 3}, {0.5F, -0.25F, 1.0F});
  RewriteModel(model, InMode(StateInputMode::kRequired), false);
  const OpenVinoPairs pairs = OpenVinoStatePairs(model);
  ASSERT_EQ(pairs.json["states"].size(), 1u);
  EXPECT_EQ(pairs.json["states"][0]["init"], kInitEmpty);
  ASSERT_EQ(pairs.warnings.size(), 1u);
  EXPECT_THAT(pairs.warnings[0], HasSubstr("state 'GRU_0.h_in' starts from the model's own default"));
}

TEST(OpenVinoStatePairs, RefusesANameTheSyntaxCannotCarry) {
  for (const std::string bad : {"{node}:{kind}", "{node}'{kind}", "{node}[{kind}]", "{node} {kind}"}) {
    EXPECT_THAT(ErrorMessage([&] { OpenVinoStatePairs(RequiredLstm(bad + "_in")); }, ExitCode::kUnsupported),
                HasSubstr("cannot be written in MakeStateful's syntax"))
        << bad;
    EXPECT_THAT(ErrorMessage([&] { OpenVinoStatePairs(RequiredLstm("{node}.{kind}_in", bad + "_out")); },
                             ExitCode::kUnsupported),
                HasSubstr("--output-names"))
        << bad;
  }
  EXPECT_NO_THROW(OpenVinoStatePairs(RequiredLstm("{node}-{kind}.in", "{node}-{kind}.out")));
}

}  // namespace
}  // namespace rnnstate::export_openvino_test
