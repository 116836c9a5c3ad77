// `rnnstate report`: a text table per file separated by a blank line, DOT, one JSON object for one file
// and JSON Lines records for several (a failed file's report null), --json against another --format.

#include <gtest/gtest.h>

#include "cli/command_run.h"
#include "test_names.h"

namespace rnnstate::report_command_test {
namespace {

using namespace test_names;

class ReportCommandTest : public testing::CliFiles {
 protected:
  /// stdout of `rnnstate report ARGUMENTS...`, expecting exit code `code`.
  std::string Report(const std::vector<std::string>& arguments, int code = 0) {
    std::vector<std::string> words = {"report"};
    words.insert(words.end(), arguments.begin(), arguments.end());
    const testing::CommandRun run = RunRnnstate(words);
    EXPECT_EQ(run.exit_code, code) << run.err;
    return run.out;
  }
};

TEST_F(ReportCommandTest, TextReportsOfSeveralFilesAreSeparatedByABlankLine) {
  const std::string gru = WriteModel("gru.onnx");
  const std::string lstm = WriteModel("lstm.onnx", kLstm);
  const std::string first = Report({gru});
  EXPECT_THAT(first, HasSubstr("GRU"));
  EXPECT_EQ(Report({gru, lstm}), first + "\n" + Report({lstm}));
}

TEST_F(ReportCommandTest, DotFormatIsAGraph) {
  EXPECT_THAT(Report({WriteModel("gru.onnx"), "--format", "dot"}), ::testing::StartsWith("digraph"));
}

TEST_F(ReportCommandTest, JsonOfOneFileIsTheReportObjectAlone) {
  const std::string gru = WriteModel("gru.onnx");
  const std::string out = Report({gru, "--json"});
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1);
  const Json report = ParseJson(out);
  EXPECT_TRUE(report.is_object());
  EXPECT_FALSE(report.contains("summary"));
  EXPECT_FALSE(report.contains("status"));
  EXPECT_EQ(Report({gru, "--format", "json"}), out);
  EXPECT_EQ(Report({gru, "--format", "json", "--json"}), out);
}

TEST_F(ReportCommandTest, JsonOfSeveralFilesIsOneRecordEachWithTheReportNullOnError) {
  const std::string gru = WriteModel("gru.onnx");
  const Json alone = ParseJson(Report({gru, "--json"}));
  const std::vector<Json> records =
      testing::JsonLines(Report({gru, WriteFile("broken.onnx", "not onnx"), "--json"}, 3));
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0]["report"], alone);
  EXPECT_EQ(records[1]["status"], "error");
  EXPECT_TRUE(records[1]["report"].is_null());
  EXPECT_EQ(records[2]["summary"], true);
}

TEST_F(ReportCommandTest, JsonOfADirectoryIsJsonLinesEvenForOneModel) {
  WriteModel("zoo/gru.onnx");
  const std::vector<Json> records = testing::JsonLines(Report({Path("zoo"), "--json"}));
  ASSERT_EQ(records.size(), 2u);
  EXPECT_TRUE(records[0]["report"].is_object());
  EXPECT_EQ(records[1]["files"], 1);
}

TEST_F(ReportCommandTest, JsonConflictingWithAnotherFormatOrAnUnknownFormatIsAUsageError) {
  const std::string gru = WriteModel("gru.onnx");
  const testing::CommandRun run = RunRnnstate({"report", gru, "--json", "--format", "dot"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "rnnstate: error: --json conflicts with --format dot\n");
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(RunRnnstate({"report", gru, "--format", "xml"}).exit_code, 2);
}

}  // namespace
}  // namespace rnnstate::report_command_test
