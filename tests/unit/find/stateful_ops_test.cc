// ONNX Runtime's contrib operators with state: DynamicQuantizeLSTM is a table operator (rewritten like
// LSTM); the others are named as stateful operators rnnstate does not handle (stateful_ops).

#include "find/stateful_ops.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "find/analysis.h"
#include "find/analyze_text.h"
#include "pipeline_stages.h"
#include "rnnstate/pipeline.h"
#include "test_models.h"
#include "test_names.h"
#include "views/check.h"
#include "views/report.h"

namespace rnnstate::stateful_ops_test {
namespace {

using namespace test_names;

/// A DynamicQuantizeLSTM as quantize_dynamic writes it: 12 slots, empty placeholders, no hidden_size
/// attribute here, W [1, 3, 16] and R [1, 4, 16] int8 (transposed), per-tensor scales.
const char* kQuantized = R"(<ir_version: 8, opset_import: ["" : 14, "com.microsoft" : 1]>
g (float[seq, batch, 3] x, int8[1, 3, 16] W, int8[1, 4, 16] R, float[1] ws, int8[1] wz, float[1] rs, int8[1] rz)
    => (float[seq, 1, batch, 4] Y, float[1, batch, 4] h_n, float[1, batch, 4] c_n) {
  Y, h_n, c_n = com.microsoft.DynamicQuantizeLSTM (x, W, R, , , , , , ws, wz, rs, rz)
})";

TEST(DynamicQuantizeLstm, HiddenSizeComesFromTheTransposedWeights) {
  const Analysis analysis = AnalyzeText(kQuantized);
  ASSERT_EQ(analysis.nodes.size(), 1u);
  const RecurrentNode& node = analysis.nodes[0];
  EXPECT_EQ(node.op, "DynamicQuantizeLSTM");
  EXPECT_EQ(node.hidden_size, 4);                       // R [1, H, 4H] axis 1 (LSTM's rule, R axis 2, would read 16)
  EXPECT_EQ(node.elem_type, onnx::TensorProto::FLOAT);  // X's type, not the int8 weights'
  EXPECT_TRUE(node.problem.empty()) << node.problem;
  EXPECT_TRUE(node.streamable);
  EXPECT_THAT(node.streaming_caveat, HasSubstr("quantizes X on every call"));
  EXPECT_THAT(node.streaming_caveat, HasSubstr("depend on the other rows"));
  ASSERT_EQ(analysis.states.size(), 2u);
  EXPECT_EQ(ShapeText(analysis.states[0].state.shape), "[1,batch,4]");
}

TEST(DynamicQuantizeLstm, WithoutRItsHiddenSizeComesFromW) {
  std::string text = kQuantized;
  text.replace(text.find("int8[1, 4, 16] R"), 16, "int8[1, 4, 16] Q");
  text.replace(text.find("(x, W, R,"), 9, "(x, W, Q,");
  onnx::ModelProto model = ParseModel(text);
  model.mutable_graph()->mutable_input(2)->mutable_type()->mutable_tensor_type()->clear_shape();
  ModelIndex index(model);
  const Analysis analysis = Analyze(index);
  ASSERT_EQ(analysis.nodes.size(), 1u);
  EXPECT_EQ(analysis.nodes[0].hidden_size, 4);  // W [1, input, 4H] axis 2, divided by 4
}

TEST(DynamicQuantizeLstm, RewriteExposesHAndCAndTheReportShowsTheCaveat) {
  onnx::ModelProto model = ParseModel(kQuantized);
  const onnx::ModelProto original = model;
  RewriteOutcome outcome = RewriteModel(model, PlanOptions{}, /*strict=*/true);
  // rnnstate registers ONNX Runtime's schema of the operator: onnx's checker and inference cover it.
  EXPECT_THAT(WarningTexts(outcome.warnings), Not(Contains(HasSubstr("no schema"))));
  const auto pairs = testing::RecordedPairs(model);
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0].kind, "h");
  EXPECT_EQ(pairs[1].kind, "c");
  const onnx::NodeProto& node = testing::NodeOfType(model.graph(), "DynamicQuantizeLSTM");
  EXPECT_EQ(node.input(5), "DynamicQuantizeLSTM_0.h_in.expanded");
  EXPECT_EQ(node.input_size(), 12);
  EXPECT_EQ(node.input(8), "ws");  // the scales stay in their slots
  const Json report = ReportOf(original);
  EXPECT_THAT(report.at("nodes").at(0).at("streaming_caveat").get<std::string>(),
              HasSubstr("same minimum and maximum"));
}

TEST(DynamicQuantizeLstm, InitialStateOfAnotherTypeIsAnInvalidModelNotAnInternalError) {
  // Found by the fuzzer: onnx has no schema to reject an int64 initial_c of a com.microsoft op, and the new
  // input (declared float) with that initializer as its default then failed shape inference (exit 6).
  // ONNX Runtime's schema types the states float: the operator table's rules refuse it up front.
  std::string text = kQuantized;
  text.replace(text.find("x, W, R, , , , , ,"), 18, "x, W, R, , , , c0, ,");
  onnx::ModelProto model = ParseModel(text);
  auto* c0 = model.mutable_graph()->add_initializer();
  c0->set_name("c0");
  c0->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : {1, 1, 4}) c0->add_dims(d);
  for (int i = 0; i < 4; ++i) c0->add_int64_data(0);
  try {
    RewriteModel(model, PlanOptions{}, /*strict=*/false);
    ADD_FAILURE() << "an int64 initial_c was rewritten";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    EXPECT_THAT(e.what(), HasSubstr("input initial_c 'c0' has element type INT64; DynamicQuantizeLSTM takes FLOAT"));
  }
}

TEST(DynamicQuantizeLstm, ShapesFlowThroughItToTheNextLayer) {
  // Without a schema onnx's inference stopped at the first layer: the second layer's X (and so its
  // state's batch) had no shape, or a placeholder name (unk__1) no data input has.
  const Analysis analysis = AnalyzeText(R"(<ir_version: 8, opset_import: ["" : 14, "com.microsoft" : 1]>
g (float[seq, batch, 3] x, int8[1, 3, 16] W, int8[1, 4, 16] R, int8[1, 4, 16] W2, int8[1, 4, 16] R2, float[1] ws,
   int8[1] wz, float[1] rs, int8[1] rz) => (float[1, batch, 4] h_n) {
  Y = com.microsoft.DynamicQuantizeLSTM <hidden_size = 4> (x, W, R, , , , , , ws, wz, rs, rz)
  y = Squeeze <axes = [1]> (Y)
  Y2, h_n = com.microsoft.DynamicQuantizeLSTM <hidden_size = 4> (y, W2, R2, , , , , , ws, wz, rs, rz)
})");
  ASSERT_EQ(analysis.nodes.size(), 2u);
  EXPECT_EQ(analysis.nodes[1].batch.param, "batch");
}

TEST(DynamicQuantizeLstm, OtherContribOperatorsAreStillNamedAsUnchecked) {
  onnx::ModelProto model = ParseModel(R"(<ir_version: 8, opset_import: ["" : 14, "com.microsoft" : 1]>
g (float[seq, batch, 3] x, int8[1, 3, 16] W, int8[1, 4, 16] R, float[1] ws, int8[1] wz, float[1] rs, int8[1] rz)
    => (float[seq, 1, batch, 4] G) {
  Y = com.microsoft.DynamicQuantizeLSTM <hidden_size = 4> (x, W, R, , , , , , ws, wz, rs, rz)
  G = com.microsoft.Gelu (Y)
})");
  RewriteOutcome outcome = RewriteModel(model, PlanOptions{}, /*strict=*/true);
  EXPECT_THAT(WarningTexts(outcome.warnings), Contains(HasSubstr("onnx 1.12 has no schema for com.microsoft.Gelu")));
  EXPECT_THAT(WarningTexts(outcome.warnings), Not(Contains(HasSubstr("DynamicQuantizeLSTM"))));
}

TEST(StatefulOps, AttentionCachesAndAttnLstmAreNamedNotRewritten) {
  const Analysis analysis = AnalyzeText(R"(<ir_version: 8, opset_import: ["" : 14, "com.microsoft" : 1]>
g (float[batch, seq, 8] q, float[8, 24] w, float[24] b, float[2, batch, 2, past, 4] past) => (float[batch, seq, 8] y, float[2, batch, 2, total, 4] present) {
  y, present = com.microsoft.Attention <num_heads = 2> (q, w, b, , past)
})");
  EXPECT_TRUE(analysis.nodes.empty());
  ASSERT_EQ(analysis.notes.size(), 1u);
  EXPECT_EQ(analysis.notes[0].kind, StateNote::Kind::kUnhandledOp);
  EXPECT_EQ(analysis.notes[0].variable, "'past' -> 'present'");
  EXPECT_THAT(analysis.notes[0].reason, HasSubstr("grows by the chunk length"));
  EXPECT_TRUE(analysis.notes[0].exposed);  // past/present are the model's own input and output
  EXPECT_FALSE(analysis.notes[0].Warns());

  const Analysis attn = AnalyzeText(R"(<ir_version: 8, opset_import: ["" : 14, "com.microsoft" : 1]>
g (float[seq, batch, 3] x, float[1, 16, 5] W, float[1, 16, 4] R, float[batch, mem, 2] m) => (float[seq, 1, batch, 4] Y) {
  Y = com.microsoft.AttnLSTM <hidden_size = 4> (x, W, R, , , , , , , , m)
})");
  ASSERT_EQ(attn.notes.size(), 1u);
  EXPECT_THAT(CheckWarnings(attn), ElementsAre(HasSubstr("AttnLSTM 'AttnLSTM_0' (slot 5, slot 6 -> slot 1, slot 2)")));
  EXPECT_THAT(CheckWarnings(attn)[0], HasSubstr("attention state stays inside"));
}

TEST(StatefulOps, OnnxAttentionKvCacheIsNamedAndCheckWarns) {
  // Opset 23's Attention (ONNX's own domain): past_key / past_value -> present_key / present_value. Before,
  // only com.microsoft's were named: `report` said "nothing to do" and `check` passed.
  const std::string text = R"(<ir_version: 10, opset_import: ["" : 23]>
g (float[b, 1, s, 4] Q, float[b, 1, s, 4] K, float[b, 1, s, 4] V, float[b, 1, p, 4] pk, float[b, 1, p, 4] pv)
    => (float[b, 1, s, 4] out, float[b, 1, t, 4] present_key, float[b, 1, t, 4] present_value) {
  out, pk2, pv2 = Attention (Q, K, V, , pk, pv)
  present_key = Identity (pk2)
  present_value = Identity (pv2)
})";
  const Analysis analysis = AnalyzeText(text);
  EXPECT_TRUE(analysis.nodes.empty());
  ASSERT_EQ(analysis.notes.size(), 1u);
  EXPECT_EQ(analysis.notes[0].kind, StateNote::Kind::kUnhandledOp);
  EXPECT_EQ(analysis.notes[0].variable, "'pk', 'pv' -> 'pk2', 'pv2'");
  EXPECT_THAT(analysis.notes[0].reason, HasSubstr("key/value cache"));
  EXPECT_THAT(CheckWarnings(analysis), ElementsAre(HasSubstr("Attention 'Attention_0'")));
  // The same operator in another domain is not ONNX's.
  std::string other = text;
  other.replace(other.find("= Attention"), 11, "= x.Attention");
  other.replace(other.find("\"\" : 23]"), 8, "\"\" : 23, \"x\" : 1]");
  EXPECT_TRUE(AnalyzeText(other).notes.empty());
}

TEST(StatefulOps, OnnxTensorScatterCacheIsNamed) {
  const Analysis analysis = AnalyzeText(R"(<ir_version: 10, opset_import: ["ai.onnx" : 24]>
g (float[b, 1, 16, 4] past, float[b, 1, s, 4] update, int64[b] at) => (float[b, 1, 16, 4] present) {
  present = ai.onnx.TensorScatter <axis = 2> (past, update, at)
})");
  ASSERT_EQ(analysis.notes.size(), 1u);
  EXPECT_THAT(analysis.notes[0].reason, HasSubstr("fixed size"));
  EXPECT_TRUE(analysis.notes[0].exposed);  // the model's own input and output: no warning
  EXPECT_THAT(CheckWarnings(analysis), ::testing::IsEmpty());
}

}  // namespace
}  // namespace rnnstate::stateful_ops_test
