// rnnstate export: Triton's implicit state and OpenVINO's MakeStateful pairs from a model's metadata,
// and what each runtime cannot carry.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "contract/export_openvino.h"
#include "contract/export_triton.h"
#include "pipeline_stages.h"
#include "rnnstate/error.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::export_test {
namespace {

using namespace test_names;

onnx::ModelProto Rewritten(PackKind pack, StateLayout layout, StateInputMode mode = StateInputMode::kRequired) {
  onnx::ModelProto model = ParseModel(kLstm);
  RewriteModel(model, Packing(pack, layout, mode), false);
  return model;
}

std::string ErrorOf(const std::function<void()>& run) { return ErrorMessage(run, ExitCode::kUnsupported); }

/// The authors' stacked state as PyTorch exports two GRU layers called with `h0` [2, batch, 3]: `signature`
/// names the graph's inputs (X, W, R, h0) and outputs (Y, h_n); `reads` makes each layer's initial state
/// (`ha`, `hb`) of a row of h0 and defines `s1` (int64[1] {1}); the layers' finals are stacked into h_n.
std::string StackedStateGrus(const std::string& signature, const std::string& reads) {
  return R"(<ir_version: 8, opset_import: ["" : 14]>
)" + signature +
         " {" + reads + R"(
  Y1, fa = GRU <hidden_size = 3> (X, W, R, , , ha)
  S = Squeeze (Y1, s1)
  Y, fb = GRU <hidden_size = 3> (S, W, R, , , hb)
  h_n = Concat <axis = 0> (fa, fb)
})";
}

TEST(ExportTriton, PackedTensorIsOneZeroInitializedState) {
  const std::string config = TritonStateConfig(Rewritten(PackKind::kTensor, StateLayout::kAsNode), "m.onnx");
  EXPECT_THAT(config, HasSubstr("      input_name: \"state_in\"\n      output_name: \"state_out\"\n"
                                "      data_type: TYPE_FP32\n      dims: [ 6 ]\n"));
  EXPECT_THAT(config, HasSubstr("zero_data: true"));
}

TEST(ExportTriton, BatchFirstStatesOneEach) {
  const std::string config = TritonStateConfig(Rewritten(PackKind::kNone, StateLayout::kBatchFirst), "m.onnx");
  EXPECT_THAT(config, HasSubstr("input_name: \"LSTM_0.h_in\"\n      output_name: \"LSTM_0.h_out\""));
  EXPECT_THAT(config, HasSubstr("dims: [ 1, 3 ]"));
}

TEST(ExportTriton, RefusesWhatTritonCannotCarry) {
  EXPECT_THAT(ErrorOf([] { TritonStateConfig(Rewritten(PackKind::kNone, StateLayout::kAsNode), "m"); }),
              HasSubstr("batch on axis 1"));
  EXPECT_THAT(ErrorOf([] {
                TritonStateConfig(Rewritten(PackKind::kTensor, StateLayout::kAsNode, StateInputMode::kDefaults), "m");
              }),
              HasSubstr("--state-inputs required"));
  EXPECT_THAT(ErrorOf([] { TritonStateConfig(Rewritten(PackKind::kSequence, StateLayout::kAsNode), "m"); }),
              HasSubstr("Sequence"));
}

TEST(ExportTriton, RefusesNamesWhoseSortedOrderPairsTheWrongStates) {
  const char* two = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R, float[1, 9, 3] W2, int64[1] axis) => (float[seq, 1, batch, 3] Y) {
  Y1 = GRU <hidden_size = 3> (X, W, R)
  S = Squeeze (Y1, axis)
  Y = GRU <hidden_size = 3> (S, W2, R)
})";
  PlanOptions options;
  options.mode = StateInputMode::kRequired;
  options.layout = StateLayout::kBatchFirst;
  onnx::ModelProto model = ParseModel(two);
  RewriteModel(model, options, false);  // GRU_0.h_in, GRU_2.h_in / GRU_0.h_out, GRU_2.h_out: paired
  EXPECT_NO_THROW(TritonStateConfig(model, "m"));
  options.input_template = "{node}.in";
  options.output_template = "{node}.out";
  onnx::ModelProto crossed = ParseModel(two);
  RewriteModel(crossed, options, false);
  // Rename one output so that the sorted orders differ: GRU_0's output now sorts after GRU_2's.
  Json document = *ReadStateDocument(crossed);
  for (auto& node : *crossed.mutable_graph()->mutable_node()) {
    for (auto& output : *node.mutable_output())
      if (output == "GRU_0.out") output = "zz.out";
    for (auto& input : *node.mutable_input())
      if (input == "GRU_0.out") input = "zz.out";
  }
  for (auto& output : *crossed.mutable_graph()->mutable_output())
    if (output.name() == "GRU_0.out") output.set_name("zz.out");
  document["states"][0]["output"] = "zz.out";
  WriteStateDocument(crossed, document);
  EXPECT_THAT(ErrorOf([&] { TritonStateConfig(crossed, "m"); }),
              HasSubstr("input 'GRU_0.in' would get the state of 'GRU_2.out' instead of 'zz.out'"));
}

onnx::ModelProto RewrittenText(const std::string& text, PackKind pack, StateLayout layout) {
  onnx::ModelProto model = ParseModel(text);
  RewriteModel(model, Packing(pack, layout, StateInputMode::kRequired), false);
  return model;
}

TEST(Export, StatesThatDoNotStreamAreNamedInAWarning) {
  for (StateLayout layout : {StateLayout::kAsNode, StateLayout::kBatchFirst}) {
    const PackKind pack = layout == StateLayout::kAsNode ? PackKind::kTensor : PackKind::kNone;
    const onnx::ModelProto model = RewrittenText(kReverseGru, pack, layout);
    std::vector<std::string> warnings;
    TritonStateConfig(model, "m", &warnings);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_THAT(warnings[0], HasSubstr("'GRU_0.h_in'"));
    EXPECT_THAT(warnings[0], HasSubstr("not stream"));
    EXPECT_THAT(warnings[0], HasSubstr("carried by Triton from one request to the next"));
    if (pack == PackKind::kTensor) {
      EXPECT_THAT(warnings[0], HasSubstr("state 'state_in' holds state 'GRU_0.h_in'"));
    }
    const OpenVinoPairs pairs = OpenVinoStatePairs(model);
    ASSERT_EQ(pairs.warnings.size(), 1u);
    EXPECT_THAT(pairs.warnings[0], HasSubstr("carried by OpenVINO"));
  }
  std::vector<std::string> none;
  TritonStateConfig(Rewritten(PackKind::kTensor, StateLayout::kAsNode), "m", &none);
  EXPECT_TRUE(none.empty());
}

TEST(ExportTriton, TheAuthorsStackedTensorsAreNamedAsSuch) {
  const std::string stacked = StackedStateGrus(
      "g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R, float[2, batch, 3] h0) => "
      "(float[seq, 1, batch, 3] Y, float[2, batch, 3] h_n)",
      R"(
  s0 = Constant <value = int64[1] {0}> ()
  s1 = Constant <value = int64[1] {1}> ()
  s2 = Constant <value = int64[1] {2}> ()
  ha = Slice (h0, s0, s1)
  hb = Slice (h0, s1, s2))");
  const std::string why =
      ErrorOf([&] { TritonStateConfig(RewrittenText(stacked, PackKind::kNone, StateLayout::kBatchFirst), "m"); });
  EXPECT_THAT(why, HasSubstr("the model's own tensor of stacked states"));
  EXPECT_THAT(why, HasSubstr("--pack tensor"));
  EXPECT_THAT(why, ::testing::Not(HasSubstr("--state-layout batch-first)")));
  // The advice works: the original rewritten with --pack tensor exports.
  const std::string config = TritonStateConfig(RewrittenText(stacked, PackKind::kTensor, StateLayout::kAsNode), "m");
  EXPECT_THAT(config, HasSubstr("state_in"));
}

// Issue 32: the authors' stacked state with a batch their input leaves unnamed and no trace names after
// a data input (Silero v5's state [2, ?, 128], read after its STFT; a Tile here): --pack tensor cannot size an empty
// packed value, so the export does not advise it, and the packed rewrite says why instead of advising a mode that was
// given.
TEST(ExportTriton, AStackedStateWithAnUnnamedBatchGetsAdviceThatHolds) {
  const std::string stacked = StackedStateGrus(
      "g (float[seq, ?, 2] Xin, float[1, 9, 2] W, float[1, 9, 3] R, float[2, ?, 3] h0) => "
      "(float[seq, 1, ?, 3] Y, float[2, ?, 3] h_n)",
      R"(
  repeats = Constant <value = int64[3] {1, 1, 1}> ()
  X = Tile (Xin, repeats)
  i0 = Constant <value = int64 {0}> ()
  i1 = Constant <value = int64 {1}> ()
  s0 = Constant <value = int64[1] {0}> ()
  s1 = Constant <value = int64[1] {1}> ()
  ga = Gather <axis = 0> (h0, i0)
  ha = Unsqueeze (ga, s0)
  gb = Gather <axis = 0> (h0, i1)
  hb = Unsqueeze (gb, s0)
)");
  const std::string why =
      ErrorOf([&] { TritonStateConfig(RewrittenText(stacked, PackKind::kNone, StateLayout::kAsNode), "m"); });
  EXPECT_THAT(why, HasSubstr("[2,?,3]"));
  EXPECT_THAT(why, HasSubstr("--pack tensor cannot help"));
  const std::string packed = ErrorOf([&] { RewrittenText(stacked, PackKind::kTensor, StateLayout::kAsNode); });
  EXPECT_THAT(packed, HasSubstr("leaves unnamed"));
  EXPECT_THAT(packed, ::testing::Not(HasSubstr("pack with --state-inputs defaults")));
}

TEST(ExportOpenVino, ANonZeroDefaultIsTheInitialStateNotOneCall) {
  const char* learned = R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R) => (float[seq, 1, batch, 3] Y) {
  Y = GRU <hidden_size = 3> (X, W, R, , , h0)
})";
  for (PackKind pack : {PackKind::kNone, PackKind::kTensor}) {
    onnx::ModelProto model = ParseModel(learned);
    testing::AddFloatInitializer(*model.mutable_graph(), "h0", {1, 1, 3}, {0.5F, -0.25F});
    PlanOptions options;
    options.pack = pack;
    options.mode = StateInputMode::kRequired;
    RewriteModel(model, options, false);
    const OpenVinoPairs pairs = OpenVinoStatePairs(model);
    ASSERT_EQ(pairs.warnings.size(), 1u);
    EXPECT_THAT(pairs.warnings[0], ::testing::Not(HasSubstr("run once")));
    EXPECT_THAT(pairs.warnings[0], HasSubstr("set the variable to that default"));
    // A packed model's parameter is the packed value: the warning names it, and the member in it.
    if (pack == PackKind::kTensor) {
      EXPECT_THAT(pairs.warnings[0], HasSubstr("state 'state_in' holds state 'GRU_0.h_in'"));
    }
  }
}

TEST(ExportOpenVino, PairsAsMakeStatefulTakesThem) {
  OpenVinoPairs pairs = OpenVinoStatePairs(Rewritten(PackKind::kNone, StateLayout::kAsNode));
  EXPECT_EQ(pairs.text, "MakeStateful[param_res_names={'LSTM_0.h_in':'LSTM_0.h_out','LSTM_0.c_in':'LSTM_0.c_out'}]\n");
  EXPECT_EQ(pairs.json["param_res_names"]["LSTM_0.c_in"], "LSTM_0.c_out");
  EXPECT_EQ(pairs.json["states"][0]["init"], "zeros");
  EXPECT_TRUE(pairs.warnings.empty());
  EXPECT_THAT(ErrorOf([] { OpenVinoStatePairs(Rewritten(PackKind::kSequence, StateLayout::kAsNode)); }),
              HasSubstr("MakeStateful takes tensor"));
}

}  // namespace
}  // namespace rnnstate::export_test
