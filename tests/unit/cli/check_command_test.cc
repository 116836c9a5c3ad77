// `rnnstate check`: exit 1 with each problem on stdout for a model whose state is not exposed, 0 once it
// is, the problems in JSON Lines records, an empty problem list for a file that could not be checked, and
// --streamable-only.

#include <gtest/gtest.h>

#include "cli/command_run.h"
#include "test_names.h"

namespace rnnstate::check_command_test {
namespace {

using namespace test_names;

class CheckCommandTest : public testing::CliFiles {};

TEST_F(CheckCommandTest, AnUnexposedStateFailsWithExitOneAndOneLinePerProblemOnStdout) {
  const std::string model = WriteModel("gru.onnx");
  const testing::CommandRun run = RunRnnstate({"check", model});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.out, ::testing::StartsWith(model + ": "));
  EXPECT_THAT(run.out, HasSubstr("state h is not exposed"));
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 1);
}

TEST_F(CheckCommandTest, ARewrittenModelPassesSilently) {
  const testing::CommandRun run = RunRnnstate({"check", WriteStreamingModel("stream.onnx")});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err, "");
}

TEST_F(CheckCommandTest, JsonRecordsTheProblemsAndTheirCount) {
  const std::string model = WriteModel("gru.onnx");
  const testing::CommandRun run = RunRnnstate({"check", model, "--json"});
  EXPECT_EQ(run.exit_code, 1);
  const std::vector<Json> records = testing::JsonLines(run.out);
  ASSERT_EQ(records.size(), 2u) << run.out;
  EXPECT_EQ(records[0]["path"], model);
  EXPECT_EQ(records[0]["status"], "failed");
  EXPECT_EQ(records[0]["exit_code"], 1);
  EXPECT_EQ(records[0]["error"], "check failed: 1 problem");
  ASSERT_EQ(records[0]["problems"].size(), 1u);
  EXPECT_TRUE(records[0]["problems"][0]["kind"].is_string());
  EXPECT_THAT(records[0]["problems"][0]["message"].get<std::string>(), HasSubstr("state h is not exposed"));
  EXPECT_EQ(records[1]["summary"], true);
  EXPECT_EQ(records[1]["exit_code"], 1);
}

TEST_F(CheckCommandTest, AFileThatCannotBeReadIsAnErrorWithAnEmptyProblemList) {
  const std::string broken = WriteFile("broken.onnx", "not onnx");
  const testing::CommandRun run = RunRnnstate({"check", broken, WriteStreamingModel("stream.onnx"), "--json"});
  EXPECT_EQ(run.exit_code, 3);  // the highest of 3 and 0
  const std::vector<Json> records = testing::JsonLines(run.out);
  ASSERT_EQ(records.size(), 3u) << run.out;
  EXPECT_EQ(records[0]["status"], "error");
  EXPECT_EQ(records[0]["problems"], Json::array());
  EXPECT_EQ(records[1]["status"], "ok");
  EXPECT_EQ(records[1]["problems"], Json::array());
  EXPECT_THAT(run.err, HasSubstr("rnnstate: error: " + broken + ": "));
}

TEST_F(CheckCommandTest, StreamableOnlyDoesNotRequireAStateThatCannotStream) {
  const std::string reverse = WriteModel("reverse.onnx", kReverseGru);
  EXPECT_EQ(RunRnnstate({"check", reverse}).exit_code, 1);
  const testing::CommandRun run = RunRnnstate({"check", reverse, "--streamable-only"});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.out, "");
}

}  // namespace
}  // namespace rnnstate::check_command_test
