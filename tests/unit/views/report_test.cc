// `rnnstate report` (views/report.h): the JSON object and the text a model's analysis and plan make — the
// file line, each recurrent node and its states (where each initial value comes from, where the final
// value goes, what a rewrite does), skipped states, recorded pairs, notes, and "nothing to do". Models as
// ONNX text, analyzed and planned as `report` does (PlanRewrite with the default options).

#include "views/report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "pipeline_stages.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::report_test {
namespace {

using namespace test_names;

Json JsonOf(const onnx::ModelProto& model, const std::string& file = "m.onnx") {
  const RewriteOutcome outcome = PlanRewrite(model, PlanOptions{});
  return ReportJson(file, model, outcome.analysis, outcome.plan);
}

std::string TextOf(const onnx::ModelProto& model, const std::string& file = "m.onnx") {
  const RewriteOutcome outcome = PlanRewrite(model, PlanOptions{});
  return ReportText(file, model, outcome.analysis, outcome.plan);
}

/// `text` with every `from` replaced by `to`.
std::string Replaced(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size())
    text.replace(at, from.size(), to);
  return text;
}

/// A model without recurrent nodes.
const char* kNoRecurrence = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[batch, 2] x) => (float[batch, 2] y) {
  y = Relu (x)
})";

/// An LSTM whose initial h is a learned initializer and whose initial c is computed from the input c_in by a
/// chain of 8 Relus (c1 .. c7, c0).
std::string LearnedAndComputed() {
  std::string text = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, 1, 2] X, float[1, 12, 2] W, float[1, 12, 3] R, float[1, 1, 3] c_in)
    => (float[seq, 1, 1, 3] Y, float[1, 1, 3] Yh) <float[1, 1, 3] h0 = {0.5, 0.25, 0.125}> {
)";
  std::string from = "c_in";
  for (int k = 1; k <= 8; ++k) {
    const std::string to = k == 8 ? "c0" : "c" + std::to_string(k);
    text += "  " + to + " = Relu (" + from + ")\n";
    from = to;
  }
  return text + "  Y, Yh = LSTM <hidden_size = 3> (X, W, R, , , h0, c0)\n}";
}

TEST(ReportJson, NamesTheSchemaVersionFileOpsetAndIrVersion) {
  const Json report = JsonOf(ParseModel(kGru), "gru.onnx");
  EXPECT_EQ(report.at("version"), kReportVersion);
  EXPECT_EQ(report.at("file"), "gru.onnx");
  EXPECT_EQ(report.at("opset"), 14);
  EXPECT_EQ(report.at("ir_version"), 8);
  EXPECT_EQ(report.at("changes"), true) << "a rewrite would add the state's input and output";
  EXPECT_TRUE(report.at("packed").is_null());
  EXPECT_TRUE(report.at("metadata_error").is_null());
  EXPECT_TRUE(report.at("pairs").empty());
  EXPECT_TRUE(report.at("skipped").empty());
  EXPECT_TRUE(report.at("stream").is_object());
}

TEST(ReportJson, DescribesEachNodeAndWhatARewriteDoesToItsStates) {
  const Json report = JsonOf(ParseModel(kLstm));
  ASSERT_EQ(report.at("nodes").size(), 1u);
  const Json& node = report.at("nodes")[0];
  EXPECT_EQ(node.at("graph"), "main");
  EXPECT_EQ(node.at("index"), 0);
  EXPECT_EQ(node.at("op"), "LSTM");
  EXPECT_EQ(node.at("name"), "LSTM_0");
  EXPECT_EQ(node.at("direction"), "forward");
  EXPECT_EQ(node.at("hidden_size"), 3);
  EXPECT_EQ(node.at("layout"), 0);
  EXPECT_EQ(node.at("streamable"), true);
  EXPECT_TRUE(node.at("not_streamable_reason").is_null());
  EXPECT_TRUE(node.at("problem").is_null());
  ASSERT_EQ(node.at("states").size(), 2u);
  const Json& h = node.at("states")[0];
  EXPECT_EQ(h.at("kind"), "h");
  EXPECT_EQ(node.at("states")[1].at("kind"), "c");
  EXPECT_EQ(h.at("shape"), "[1,batch,3]");
  EXPECT_EQ(h.at("initial").at("origin"), "absent");
  EXPECT_EQ(h.at("initial").at("zero"), true);
  EXPECT_EQ(h.at("final").at("value"), "") << "the LSTM has no Y_h output";
  EXPECT_EQ(h.at("exposed"), false);
  EXPECT_TRUE(h.at("exposure").is_null());
  EXPECT_EQ(h.at("input"), "LSTM_0.h_in");
  EXPECT_EQ(h.at("output"), "LSTM_0.h_out");
  EXPECT_THAT(h.at("action").get<std::string>(), HasSubstr("LSTM_0.h_in"));
}

TEST(ReportJson, TheBatchIsANumberANameOrNull) {
  EXPECT_EQ(JsonOf(ParseModel(kGru)).at("nodes")[0].at("batch"), "batch");
  EXPECT_EQ(JsonOf(ParseModel(Replaced(kGru, "batch", "4"))).at("nodes")[0].at("batch"), 4);
  EXPECT_TRUE(JsonOf(ParseModel(Replaced(kGru, "batch", "?"))).at("nodes")[0].at("batch").is_null());
}

TEST(ReportJson, SaysWhereAnInitialValueComesFrom) {
  const Json states = JsonOf(ParseModel(LearnedAndComputed())).at("nodes")[0].at("states");
  const Json& h = states[0];
  EXPECT_EQ(h.at("initial").at("origin"), "initializer");
  EXPECT_EQ(h.at("initial").at("value"), "h0");
  EXPECT_EQ(h.at("initial").at("zero"), false);
  EXPECT_EQ(h.at("final").at("value"), "Yh");
  EXPECT_EQ(h.at("final").at("graph_output"), true);
  const Json& c = states[1];
  EXPECT_EQ(c.at("initial").at("origin"), "computed");
  EXPECT_EQ(c.at("initial").at("computed_by").size(), 8u);
  EXPECT_EQ(c.at("initial").at("from_inputs"), Json::array({"c_in"}));
}

TEST(ReportJson, ListsTheSkippedStatesWithTheirReason) {
  // A GRU without hidden_size whose W and R have no shapes: its hidden size is unknown.
  onnx::ModelProto model =
      ParseModel(Replaced(Replaced(kGru, "GRU <hidden_size = 3>", "GRU"), "float[1, 9, ", "float["));
  for (int i : {1, 2}) model.mutable_graph()->mutable_input(i)->mutable_type()->mutable_tensor_type()->clear_shape();
  const Json report = JsonOf(model);
  ASSERT_EQ(report.at("skipped").size(), 1u);
  const Json& skip = report.at("skipped")[0];
  EXPECT_EQ(skip.at("graph"), "main");
  EXPECT_EQ(skip.at("node"), "GRU_0");
  EXPECT_TRUE(skip.at("kind").is_null()) << "the whole node is skipped";
  EXPECT_THAT(skip.at("reason").get<std::string>(), HasSubstr("hidden size unknown"));
  EXPECT_EQ(report.at("changes"), false);
  EXPECT_THAT(TextOf(model), HasSubstr("  cannot rewrite: hidden size unknown"));
}

TEST(ReportText, FirstLineCountsTheRecurrentNodes) {
  EXPECT_THAT(TextOf(ParseModel(kGru), "gru.onnx"),
              ::testing::StartsWith("gru.onnx: 1 recurrent node, opset 14, IR 8\n"));
  const std::string two = Replaced(kGru, "  Y = GRU <hidden_size = 3> (X, W, R)",
                                   "  Y = GRU <hidden_size = 3> (X, W, R)\n  Z = GRU <hidden_size = 3> (X, W, R)");
  EXPECT_THAT(TextOf(ParseModel(Replaced(two, "=> (float[seq, 1, batch, 3] Y)",
                                         "=> (float[seq, 1, batch, 3] Y, float[seq, 1, batch, 3] Z)"))),
              ::testing::StartsWith("m.onnx: 2 recurrent nodes, opset 14, IR 8\n"));
}

TEST(ReportText, ANodeLineSaysItsDirectionHiddenSizeLayoutAndBatch) {
  EXPECT_THAT(TextOf(ParseModel(kGru)),
              HasSubstr("\nmain  GRU 'GRU_0' (unnamed)  forward, hidden 3, layout 0, batch dynamic (batch)\n"));
  EXPECT_THAT(TextOf(ParseModel(Replaced(kReverseGru, "batch", "4"))),
              HasSubstr("\nmain  GRU 'GRU_0' (unnamed)  reverse, hidden 3, layout 0, batch 4\n"));
}

TEST(ReportText, AStateLineSaysWhereItComesFromWhereItGoesAndWhatARewriteDoes) {
  const std::string text = TextOf(ParseModel(kGru));
  EXPECT_THAT(text, HasSubstr("  h  from: absent, zeros\n"));
  EXPECT_THAT(text, HasSubstr("     to:   (not produced)\n"));
  EXPECT_THAT(text, HasSubstr("     not exposed; rewrite: "));
}

TEST(ReportText, ALearnedInitialStateIsNotZerosAndComputedOnesListTheirFirstNodes) {
  const std::string text = TextOf(ParseModel(LearnedAndComputed()));
  EXPECT_THAT(text, HasSubstr("from: initializer 'h0', not zeros (a learned initial state: the first feed is empty"));
  EXPECT_THAT(text, HasSubstr("to:   'Yh', a graph output, 0 consumers"));
  EXPECT_THAT(text, HasSubstr("from: computed 'c0', not known to be zeros, computed by 8 nodes ("));
  EXPECT_THAT(text, HasSubstr(", and 2 more), from input 'c_in'"));
}

TEST(ReportText, ARewrittenModelsStatesAreExposedAsItsRecordedPairs) {
  onnx::ModelProto model = ParseModel(kGru);
  RewriteModel(model, PlanOptions{}, /*strict=*/true);
  const std::string text = TextOf(model);
  EXPECT_THAT(text, HasSubstr("  h  exposed: input 'GRU_0.h_in' ("));
  EXPECT_THAT(text, HasSubstr("\nstate pairs recorded in metadata 'rnnstate':\n"));
  EXPECT_THAT(text, HasSubstr("  GRU_0.h_in -> GRU_0.h_out  (main GRU_0 h, "));
}

TEST(ReportText, AModelWithoutRecurrencesHasNothingToDo) {
  const std::string text = TextOf(ParseModel(kNoRecurrence));
  EXPECT_THAT(text, ::testing::StartsWith("m.onnx: 0 recurrent nodes, opset 14, IR 8\n"));
  EXPECT_THAT(text, ::testing::EndsWith("nothing to do\n"));
  EXPECT_THAT(TextOf(ParseModel(kGru)), Not(HasSubstr("nothing to do")));
}

}  // namespace
}  // namespace rnnstate::report_test
