// `rnnstate init`: the first call's feed of each state input from the metadata, sized by --batch, by
// --dim of the batch's name or 1; --dim values that are not NAME=VALUE refused, unused ones warned about;
// a model without recorded pairs has no feeds.

#include <gtest/gtest.h>

#include "cli/command_run.h"
#include "test_names.h"

namespace rnnstate::init_command_test {
namespace {

using namespace test_names;

class InitCommandTest : public testing::CliFiles {
 protected:
  /// `rnnstate init` on kGru rewritten (its state [1, batch, 3], zeros by default) with `options`.
  testing::CommandRun Init(const std::vector<std::string>& options) {
    std::vector<std::string> arguments = {"init", WriteStreamingModel("stream.onnx")};
    arguments.insert(arguments.end(), options.begin(), options.end());
    return RunRnnstate(arguments);
  }
};

TEST_F(InitCommandTest, BatchSizesTheZerosOfTheFirstCall) {
  const testing::CommandRun run = Init({"--batch", "2"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, ::testing::MatchesRegex("[^ ]+  float32  \\[1,2,3\\]  zeros\n"));
  EXPECT_EQ(run.err, "");
}

TEST_F(InitCommandTest, WithoutBatchTheDimOfTheBatchsNameGivesItElseOne) {
  EXPECT_THAT(Init({"--dim", "batch=4"}).out, HasSubstr("  [1,4,3]  zeros\n"));
  EXPECT_THAT(Init({}).out, HasSubstr("  [1,1,3]  zeros\n"));
  EXPECT_THAT(Init({"--dim", "batch=4", "--batch", "2"}).out, HasSubstr("  [1,2,3]  zeros\n"));
}

TEST_F(InitCommandTest, ADimThatIsNotNameEqualsAValueIsAUsageError) {
  for (const char* dim : {"batch", "=4", "batch=-1", "batch=four"}) {
    const testing::CommandRun run = Init({"--dim", dim});
    EXPECT_EQ(run.exit_code, 2) << dim;
    EXPECT_THAT(run.err, HasSubstr("--dim '" + std::string(dim) + "': expected NAME=VALUE with VALUE >= 0")) << dim;
    EXPECT_EQ(run.out, "") << dim;
  }
}

TEST_F(InitCommandTest, ADimNoStateHasIsWarnedAboutAndIgnored) {
  const testing::CommandRun run = Init({"--dim", "frames=7"});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_THAT(run.err, HasSubstr("rnnstate: warning: "));
  EXPECT_THAT(run.err, HasSubstr("--dim frames=7: no state has a dimension of that name (ignored)"));
  EXPECT_THAT(run.out, HasSubstr("  [1,1,3]  zeros\n"));
}

TEST_F(InitCommandTest, JsonRecordsTheFeeds) {
  const testing::CommandRun run = Init({"--batch", "2", "--json"});
  EXPECT_EQ(run.exit_code, 0);
  const std::vector<Json> records = testing::JsonLines(run.out);
  ASSERT_EQ(records.size(), 2u) << run.out;
  ASSERT_TRUE(records[0]["feeds"].is_array());
  EXPECT_EQ(records[0]["feeds"].size(), 1u);
  EXPECT_EQ(records[1]["summary"], true);
}

TEST_F(InitCommandTest, AModelWithoutRecordedPairsHasNoFeedsAndAWarning) {
  const std::string gru = WriteModel("gru.onnx");
  const testing::CommandRun run = RunRnnstate({"init", gru, "--dim", "frames=7"});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.out, "");
  EXPECT_THAT(run.err, HasSubstr("no state pairs recorded (run rnnstate rewrite first)"));
  EXPECT_THAT(run.err, Not(HasSubstr("frames")));  // no pairs: nothing to say about a --dim
  const std::vector<Json> records = testing::JsonLines(RunRnnstate({"init", gru, "--json"}).out);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0]["feeds"], Json::array());
}

TEST_F(InitCommandTest, AFileThatCannotBeReadHasAnEmptyFeedList) {
  const testing::CommandRun run = RunRnnstate({"init", WriteFile("broken.onnx", "not onnx"), "--json"});
  EXPECT_EQ(run.exit_code, 3);
  const std::vector<Json> records = testing::JsonLines(run.out);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0]["status"], "error");
  EXPECT_EQ(records[0]["feeds"], Json::array());
}

}  // namespace
}  // namespace rnnstate::init_command_test
