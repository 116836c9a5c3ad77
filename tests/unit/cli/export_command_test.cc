// `rnnstate export`: OpenVINO's MakeStateful pairs as text or JSON, a Triton config printed or written as
// a model-repository entry (named after the file or --name, --max-batch-size), a model Triton cannot serve
// refused, and the arguments that belong to the other target or name no file refused as usage errors.

#include <gtest/gtest.h>

#include <filesystem>

#include "cli/command_run.h"
#include "test_names.h"

namespace rnnstate::export_command_test {
namespace {

using namespace test_names;
namespace fs = std::filesystem;

class ExportCommandTest : public testing::CliFiles {
 protected:
  void SetUp() override {
    CliFiles::SetUp();
    // Triton's backend cannot see state inputs that have a default: the model Triton serves has none.
    stream_ = WriteStreamingModel("stream.onnx", {"--state-inputs", "required"});
  }
  std::string stream_;
};

TEST_F(ExportCommandTest, OpenVinoPrintsTheMakeStatefulPairsAsTextOrJson) {
  const testing::CommandRun text = RunRnnstate({"export", "openvino", stream_});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, ::testing::StartsWith("MakeStateful[param_res_names={'"));
  const testing::CommandRun json = RunRnnstate({"export", "openvino", stream_, "--json"});
  EXPECT_EQ(json.exit_code, 0);
  const Json pairs = ParseJson(json.out);
  EXPECT_EQ(pairs["param_res_names"].size(), 1u);
  EXPECT_TRUE(pairs.contains("states"));
}

TEST_F(ExportCommandTest, TritonPrintsTheConfigNamedAfterTheFileOrName) {
  const testing::CommandRun run = RunRnnstate({"export", "triton", stream_});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("name: \"stream\""));
  EXPECT_THAT(run.out, HasSubstr("max_batch_size: 0"));  // kGru's data is time-major: Triton cannot batch it
  const testing::CommandRun named = RunRnnstate({"export", "triton", stream_, "--name", "vad"});
  EXPECT_EQ(named.exit_code, 0) << named.err;
  EXPECT_THAT(named.out, HasSubstr("name: \"vad\""));
  EXPECT_THAT(named.out, Not(HasSubstr("name: \"stream\"")));
  EXPECT_FALSE(fs::exists(Path("vad")));
}

TEST_F(ExportCommandTest, TritonWithARepositoryWritesTheConfigAndTheModelUnderItsName) {
  const std::string printed = RunRnnstate({"export", "triton", stream_}).out;
  const testing::CommandRun run = RunRnnstate({"export", "triton", stream_, "-o", Path("repo")});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, stream_ + " -> " + Path("repo/stream") + ": config.pbtxt, 1/model.onnx\n");
  EXPECT_EQ(Read(Path("repo/stream/config.pbtxt")), printed);
  onnx::ModelProto served;
  ASSERT_TRUE(served.ParseFromString(Read(Path("repo/stream/1/model.onnx"))));
  onnx::ModelProto original;
  ASSERT_TRUE(original.ParseFromString(Read(stream_)));
  EXPECT_EQ(Bytes(served), Bytes(original));  // the model as it is
}

TEST_F(ExportCommandTest, AStateTritonCannotCarryIsRefusedAsUnsupported) {
  const std::string defaults = WriteStreamingModel("defaults.onnx");
  const testing::CommandRun run = RunRnnstate({"export", "triton", defaults, "-o", Path("repo")});
  EXPECT_EQ(run.exit_code, 4);
  EXPECT_THAT(run.err, HasSubstr("--state-inputs required"));
  EXPECT_FALSE(fs::exists(Path("repo/defaults")));
}

TEST_F(ExportCommandTest, ArgumentsOfTheOtherTargetOrThatNameNoFileAreUsageErrors) {
  fs::create_directories(Path("zoo"));
  const std::vector<std::vector<std::string>> refused = {
      {"export", "openvino", Path("zoo")},
      {"export", "triton", stream_, "--json"},
      {"export", "openvino", stream_, "-o", Path("repo")},
      {"export", "openvino", stream_, "--name", "vad"},
      {"export", "triton", stream_, "--name", "a/b"},
      {"export", "triton", stream_, "--name", ".."},
      {"export", "onnx", stream_},
      {"export", "triton", stream_, "--max-batch-size", "-1"},
  };
  for (const std::vector<std::string>& arguments : refused) {
    const testing::CommandRun run = RunRnnstate(arguments);
    EXPECT_EQ(run.exit_code, 2) << ::testing::PrintToString(arguments) << run.err;
    EXPECT_EQ(run.out, "") << ::testing::PrintToString(arguments);
  }
  EXPECT_THAT(RunRnnstate(refused[0]).err, HasSubstr("export takes one model file, not a directory"));
  EXPECT_THAT(RunRnnstate(refused[5]).err, HasSubstr("--name '..' is not a directory name"));
  EXPECT_FALSE(fs::exists(Path("repo")));
}

TEST_F(ExportCommandTest, AMissingModelIsUnreadableInput) {
  const testing::CommandRun run = RunRnnstate({"export", "openvino", Path("missing.onnx")});
  EXPECT_EQ(run.exit_code, 3);
  EXPECT_THAT(run.err, HasSubstr("rnnstate: error: " + Path("missing.onnx") + ": "));
}

}  // namespace
}  // namespace rnnstate::export_command_test
