// What the commands over files share: their options (paths, -j, --fail-fast), which path arguments are
// directories or one single file, and the run that prints each file's result in input order (text, JSON
// Lines or one report object), each error on stderr, the summary, and returns the highest exit code.

#include "cli/file_runs.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "cli/command_run.h"
#include "test_names.h"

namespace rnnstate::file_runs_test {
namespace {

using namespace test_names;
namespace fs = std::filesystem;

class FileRunsTest : public testing::CliFiles {
 protected:
  /// RunFiles over `paths` (found as the commands find them), each file's result made by `process`;
  /// `out` and `err` what it printed.
  int Run(const std::vector<std::string>& paths, cli::Printing printing, bool quiet,
          const std::function<FileResult(const std::string&)>& process) {
    cli::FilesOptions options;
    options.paths = paths;
    options.jobs = 2;
    const std::vector<InputFile> inputs = FindModelFiles(paths, {});
    ::testing::internal::CaptureStdout();
    ::testing::internal::CaptureStderr();
    const int code = cli::RunFiles(inputs, options, printing, quiet, [&](size_t i) { return process(inputs[i].path); });
    out_ = ::testing::internal::GetCapturedStdout();
    err_ = ::testing::internal::GetCapturedStderr();
    return code;
  }

  /// A result whose text is "PATH done\n" and whose report is {"path": PATH}.
  static FileResult Done(const std::string& path) {
    FileResult result;
    result.path = path;
    result.text = path + " done\n";
    result.details["report"] = {{"path", path}};
    return result;
  }

  std::string out_;
  std::string err_;
};

TEST_F(FileRunsTest, IsDirectoryFollowsSymlinksAndIsFalseForFilesAndMissingPaths) {
  fs::create_directories(Path("d"));
  fs::create_directory_symlink(Path("d"), Path("link"));
  EXPECT_TRUE(cli::IsDirectory(Path("d")));
  EXPECT_TRUE(cli::IsDirectory(Path("link")));
  EXPECT_FALSE(cli::IsDirectory(WriteFile("f.onnx", "")));
  EXPECT_FALSE(cli::IsDirectory(Path("missing")));
}

TEST_F(FileRunsTest, IsSingleFileForExactlyOnePathThatIsNotADirectory) {
  fs::create_directories(Path("d"));
  cli::FilesOptions options;
  options.paths = {WriteFile("f.onnx", "")};
  EXPECT_TRUE(cli::IsSingleFile(options));
  options.paths = {Path("missing.onnx")};
  EXPECT_TRUE(cli::IsSingleFile(options));
  options.paths = {Path("d")};
  EXPECT_FALSE(cli::IsSingleFile(options));
  options.paths = {Path("f.onnx"), Path("f.onnx")};
  EXPECT_FALSE(cli::IsSingleFile(options));
}

TEST_F(FileRunsTest, TextPrintsEachFilesTextInInputOrderAndASummaryOnStderr) {
  const std::vector<std::string> paths = {WriteFile("b.onnx", ""), WriteFile("a.onnx", "")};
  EXPECT_EQ(Run(paths, cli::Printing::kText, false, Done), 0);
  EXPECT_EQ(out_, paths[0] + " done\n" + paths[1] + " done\n");
  EXPECT_EQ(err_, "rnnstate: 2 files: 2 ok, 0 failed (exit 0)\n");
}

TEST_F(FileRunsTest, QuietOrOneFileHasNoSummary) {
  const std::vector<std::string> paths = {WriteFile("b.onnx", ""), WriteFile("a.onnx", "")};
  EXPECT_EQ(Run(paths, cli::Printing::kText, true, Done), 0);
  EXPECT_EQ(err_, "");
  EXPECT_EQ(Run({paths[0]}, cli::Printing::kText, false, Done), 0);
  EXPECT_EQ(err_, "");
}

TEST_F(FileRunsTest, JsonLinesPrintsARecordPerFileThenTheSummaryRecord) {
  const std::vector<std::string> paths = {WriteFile("m.onnx", ""), WriteFile("n.onnx", "")};
  EXPECT_EQ(Run(paths, cli::Printing::kJsonLines, false, Done), 0);
  const std::vector<Json> lines = testing::JsonLines(out_);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0]["path"], paths[0]);
  EXPECT_EQ(lines[1]["path"], paths[1]);
  EXPECT_EQ(lines[0]["report"]["path"], paths[0]);
  EXPECT_EQ(DumpJson(lines[2]),
            R"({"summary":true,"files":2,"ok":2,"failed":0,"changed":0,"not_run":0,"exit_code":0})");
  EXPECT_EQ(err_, "");
}

TEST_F(FileRunsTest, SingleJsonPrintsTheReportObjectAlone) {
  const std::string path = WriteFile("m.onnx", "");
  EXPECT_EQ(Run({path}, cli::Printing::kSingleJson, false, Done), 0);
  EXPECT_EQ(out_, DumpJson(Json{{"path", path}}) + "\n");
}

TEST_F(FileRunsTest, AnArgumentWithoutModelsAndAFailingFileAreNamedOnStderrAndTheHighestCodeIsReturned) {
  fs::create_directories(Path("empty"));
  const std::string model = WriteFile("m.onnx", "");
  auto unsupported = [](const std::string& path) {
    return ProcessGuarded(path, [](FileResult&) { throw Error(ExitCode::kUnsupported, "too old"); });
  };
  EXPECT_EQ(Run({Path("empty"), model}, cli::Printing::kText, false, unsupported), 4);
  EXPECT_EQ(out_, "");
  EXPECT_THAT(err_, HasSubstr("rnnstate: error: " + Path("empty") + ": no *.onnx files in this directory\n"));
  EXPECT_THAT(err_, HasSubstr("rnnstate: error: " + model + ": too old\n"));
  EXPECT_THAT(err_, HasSubstr("rnnstate: 2 files: 0 ok, 2 failed (exit 4)\n"));
}

TEST_F(FileRunsTest, TheSharedOptionsRequireAPathAndAJobCountFromOneTo1024) {
  const std::string model = WriteModel("m.onnx");
  for (const std::vector<std::string>& arguments :
       {std::vector<std::string>{"report"}, std::vector<std::string>{"report", model, "-j", "0"},
        std::vector<std::string>{"check", model, "--jobs", "1025"}}) {
    EXPECT_EQ(testing::RunRnnstate(arguments).exit_code, 2) << ::testing::PrintToString(arguments);
  }
  EXPECT_EQ(testing::RunRnnstate({"report", model, "-j", "1024"}).exit_code, 0);
}

TEST_F(FileRunsTest, FailFastReachesTheRun) {
  const std::vector<std::string> paths = {WriteFile("a.onnx", "not onnx"), WriteModel("b.onnx")};
  const testing::CommandRun run =
      testing::RunRnnstate({"report", paths[0], paths[1], "--json", "-j", "1", "--fail-fast"});
  EXPECT_EQ(run.exit_code, 3);
  const std::vector<Json> records = testing::JsonLines(run.out);
  ASSERT_EQ(records.size(), 2u) << run.out;
  EXPECT_EQ(records[0]["path"], paths[0]);
  EXPECT_EQ(records[1]["not_run"], 1);
}

}  // namespace
}  // namespace rnnstate::file_runs_test
