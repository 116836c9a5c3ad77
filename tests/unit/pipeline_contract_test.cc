// The rewrite's contract on fixed-batch models of IR 3 and 4 at opset 9 (a PyTorch 1.3 LSTM with batch
// 128, issue 23): a rewrite of a rewrite is a no-op, and both routes to required mode give one
// interface. Run through files, as the command runs them: payloads of 1 KiB or more stay in the file
// (io/model_file.h), which is where the defaults used to lose their known zeros.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "io/model_io.h"
#include "pipeline_stages.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::pipeline_contract_test {
namespace {

namespace fs = std::filesystem;
using namespace test_names;

/// An LSTM over X [5,128,28], hidden 28, its weights initializers; `initial` is the ONNX text of its
/// inputs after R ("" for none). IR 3 declares every initializer as a graph input too, unless
/// `undeclared_weights` (ONNX Runtime's IR 3 test models, which its loader accepts).
onnx::ModelProto TorchLstm(int ir_version, const std::string& initial, bool learned_h0 = false,
                           bool undeclared_weights = false) {
  const std::string h0_input = learned_h0 && ir_version < 4 ? ", float[1,128,28] h0" : "";
  const bool declared = ir_version < 4 && !undeclared_weights;
  onnx::ModelProto model =
      ParseModel("<ir_version: " + std::to_string(ir_version) +
                 ", opset_import: [\"\" : 9], producer_name: \"pytorch\">\n"
                 "g (float[5,128,28] X" +
                 (declared ? std::string(", float[1,112,28] W, float[1,112,28] R") : "") + h0_input +
                 ") => (float[5,1,128,28] Y, float[1,128,28] Yh) {\n"
                 "  Y, Yh, Yc = LSTM <hidden_size = 28> (X, W, R" +
                 initial + ")\n}");
  model.mutable_graph()->mutable_node(0)->set_name("lstm");
  AddFloatInitializer(*model.mutable_graph(), "W", {1, 112, 28}, {0.1f, -0.2f, 0.3f});
  AddFloatInitializer(*model.mutable_graph(), "R", {1, 112, 28}, {0.05f, 0.1f});
  if (learned_h0) AddFloatInitializer(*model.mutable_graph(), "h0", {1, 128, 28}, {0.5f});
  return model;
}

class PipelineContractTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "pipeline_contract_test.XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string PathOf(const std::string& name) const { return (fs::path(dir_) / name).string(); }

  std::string Save(const onnx::ModelProto& model, const std::string& name) {
    std::ofstream(PathOf(name), std::ios::binary) << model.SerializeAsString();
    return PathOf(name);
  }

  /// `rnnstate rewrite IN -o OUT` with `mode` (and `pack`); returns OUT's bytes.
  std::string Rewrite(const std::string& in, const std::string& out, StateInputMode mode = StateInputMode::kDefaults,
                      PackKind pack = PackKind::kNone, StateLayout layout = StateLayout::kAsNode) {
    OpenedModel opened = OpenModel(PathOf(in));
    RewriteModel(opened.file.model(), Packing(pack, layout, mode), /*strict=*/false, opened.directory);
    WriteModel(opened, PathOf(out));
    return Read(out);
  }

  std::string Read(const std::string& name) const {
    std::ifstream file(PathOf(name), std::ios::binary);
    std::stringstream bytes;
    bytes << file.rdbuf();
    return bytes.str();
  }

  /// Names and declared shapes of the inputs and outputs, and the metadata, of a written model.
  std::string Interface(const std::string& name) const {
    onnx::ModelProto model;
    EXPECT_TRUE(model.ParseFromString(Read(name)));
    std::string text;
    for (const auto& input : InputNames(model.graph())) text += input + DeclaredShape(model.graph(), input) + " ";
    text += "-> ";
    for (const auto& output : OutputNames(model.graph())) text += output + DeclaredShape(model.graph(), output) + " ";
    for (const auto& prop : model.metadata_props()) text += "\n" + prop.key() + " " + prop.value();
    return text;
  }

  /// Both properties for `model`: rewriting the defaults and the required output again changes no byte,
  /// and required mode directly equals defaults then required.
  void ExpectContract(const onnx::ModelProto& model) {
    Save(model, "in.onnx");
    const std::string defaults = Rewrite("in.onnx", "defaults.onnx");
    EXPECT_EQ(Rewrite("defaults.onnx", "again.onnx"), defaults) << Interface("defaults.onnx") << "\n"
                                                                 << Interface("again.onnx");
    const std::string required = Rewrite("in.onnx", "required.onnx", StateInputMode::kRequired);
    EXPECT_EQ(Rewrite("required.onnx", "required_again.onnx", StateInputMode::kRequired), required);
    Rewrite("defaults.onnx", "routed.onnx", StateInputMode::kRequired);
    EXPECT_EQ(Interface("routed.onnx"), Interface("required.onnx"));
  }

  std::string dir_;
};

TEST_F(PipelineContractTest, AbsentStateIr4) {
  ExpectContract(TorchLstm(4, ""));
  EXPECT_THAT(Interface("required.onnx"), ::testing::HasSubstr("lstm.h_in[1,128,28] "));
}

TEST_F(PipelineContractTest, AbsentStateIr3) { ExpectContract(TorchLstm(3, "")); }

// PyTorch 1.3 with all shapes static: Expand of zeros to [1,128,28].
TEST_F(PipelineContractTest, ExpandedZerosIr4) {
  onnx::ModelProto model = TorchLstm(4, ", , , h0, h0");
  onnx::GraphProto& graph = *model.mutable_graph();
  std::string zeros = "0.0";
  for (int i = 1; i < 28; ++i) zeros += ", 0.0";
  onnx::ModelProto nodes = ParseModel(
      "<ir_version: 4, opset_import: [\"\" : 9]>\n"
      "n () => (float[1,128,28] h0) {\n  z = Constant <value = float[1,1,28] {" + zeros + "}> ()\n"
      "  s = Constant <value = int64[3] {1, 128, 28}> ()\n  h0 = Expand (z, s)\n}");
  for (int i = nodes.graph().node_size() - 1; i >= 0; --i) {
    *graph.add_node() = nodes.graph().node(i);
    for (int j = graph.node_size() - 1; j > 0; --j) graph.mutable_node(j)->Swap(graph.mutable_node(j - 1));
  }
  ExpectContract(model);
}

// IR 3: a learned h0 is a graph input with an initializer; its default moves to `h0.default`, which
// IR 3 must declare as a graph input too (onnx's checker refused the rewrite).
TEST_F(PipelineContractTest, LearnedInitialStateIr3) { ExpectContract(TorchLstm(3, ", , , h0", /*learned_h0=*/true)); }

TEST_F(PipelineContractTest, ZeroInitializerIr3) {
  onnx::ModelProto model = TorchLstm(3, ", , , h0", /*learned_h0=*/true);
  for (auto& tensor : *model.mutable_graph()->mutable_initializer()) {
    if (tensor.name() != "h0") continue;
    tensor.clear_float_data();
    tensor.set_raw_data(std::string(128 * 28 * 4, '\0'));
  }
  ExpectContract(model);
}

// ONNX Runtime's IR 3 test models (lstm_1.onnx) keep W, R, B as initializers that are not graph inputs
// (IR 3 says they should be; ORT loads them). The rewrite keeps the interface to the model's own inputs
// plus the state, and passes onnx's checker by raising the IR version to 4 (whose only change is that
// rule): weights declared as inputs would be inputs a runtime lets the caller override.
TEST_F(PipelineContractTest, UndeclaredWeightsIr3StayOutOfTheInterface) {
  onnx::ModelProto model = TorchLstm(3, ", B", /*learned_h0=*/false, /*undeclared_weights=*/true);
  AddFloatInitializer(*model.mutable_graph(), "B", {1, 224}, {0.01f});
  ExpectContract(model);
  for (const char* name : {"defaults.onnx", "required.onnx"}) {
    EXPECT_THAT(Interface(name), ::testing::StartsWith("X[5,128,28] lstm.h_in[1,128,28] lstm.c_in[1,128,28] -> "))
        << name;
    onnx::ModelProto written;
    ASSERT_TRUE(written.ParseFromString(Read(name)));
    EXPECT_EQ(written.ir_version(), 4) << name;
  }
  for (StateLayout layout : {StateLayout::kAsNode, StateLayout::kBatchFirst}) {
    Rewrite("in.onnx", "packed.onnx", StateInputMode::kRequired, PackKind::kTensor, layout);
    EXPECT_THAT(Interface("packed.onnx"), ::testing::MatchesRegex("X\\[5,128,28\\] state_in\\[[a-z_0-9]+,56\\] -> .*"));
  }
}

// An IR 3 model whose every initializer is an input keeps IR 3 when the rewrite adds no initializer.
TEST_F(PipelineContractTest, DeclaredIr3KeepsItsVersion) {
  Save(TorchLstm(3, ""), "in.onnx");
  Rewrite("in.onnx", "required.onnx", StateInputMode::kRequired);
  onnx::ModelProto written;
  ASSERT_TRUE(written.ParseFromString(Read("required.onnx")));
  EXPECT_EQ(written.ir_version(), 3);
  EXPECT_THAT(Interface("required.onnx"), ::testing::StartsWith("X[5,128,28] W[1,112,28] R[1,112,28] lstm.h_in"));
}

}  // namespace
}  // namespace rnnstate::pipeline_contract_test
