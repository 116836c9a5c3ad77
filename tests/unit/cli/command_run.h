#pragma once
/// \file
/// For the tests of tests/unit/cli: a fresh directory per test with models written into it from ONNX text,
/// and rnnstate command lines run in this process (RunCommandLine) with their exit code, stdout and stderr.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "rnnstate/json.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::testing {

/// What one command line did.
struct CommandRun {
  int exit_code = -1;
  std::string out;  ///< its stdout
  std::string err;  ///< its stderr
};

/// Runs `rnnstate ARGUMENTS...` in this process, its stdout and stderr captured.
inline CommandRun RunRnnstate(std::vector<std::string> arguments) {
  arguments.insert(arguments.begin(), "rnnstate");
  std::vector<char*> argv;
  for (std::string& word : arguments) argv.push_back(word.data());
  argv.push_back(nullptr);
  CommandRun run;
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  try {
    run.exit_code = cli::RunCommandLine(static_cast<int>(arguments.size()), argv.data());
  } catch (...) {
    // Released before the failure is reported, or the report would be captured too.
    run.out = ::testing::internal::GetCapturedStdout();
    run.err = ::testing::internal::GetCapturedStderr();
    throw;
  }
  run.out = ::testing::internal::GetCapturedStdout();
  run.err = ::testing::internal::GetCapturedStderr();
  return run;
}

/// The JSON Lines of `out`, parsed.
inline std::vector<Json> JsonLines(const std::string& out) {
  std::vector<Json> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) lines.push_back(ParseJson(line));
  return lines;
}

/// A fixture owning a fresh directory below ::testing::TempDir() per test, removed after it.
class CliFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("rnnstate_cli_" + std::to_string(::getpid()) + "_" + test->test_suite_name() + "_" + test->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  /// The path of `relative` below the test's directory.
  std::string Path(const std::string& relative) const { return (dir_ / relative).string(); }

  /// Writes `content` to `relative` below the test's directory (its parents created); returns its path.
  std::string WriteFile(const std::string& relative, const std::string& content) const {
    const std::filesystem::path path = dir_ / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << content;
    return path.string();
  }

  /// Writes the model of ONNX text `text` (by default kGru: one GRU without initial state) serialized.
  std::string WriteModel(const std::string& relative, const std::string& text = kGru) const {
    return WriteFile(relative, Bytes(ParseModel(text)));
  }

  /// Writes kGru and its rewrite by `rnnstate rewrite` with `options` to `relative`; returns its path.
  std::string WriteStreamingModel(const std::string& relative, const std::vector<std::string>& options = {}) const {
    std::vector<std::string> arguments = {"rewrite", WriteModel(relative + ".original"), "-o", Path(relative)};
    arguments.insert(arguments.end(), options.begin(), options.end());
    const CommandRun run = RunRnnstate(arguments);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return Path(relative);
  }

  /// The content of the file at `path` ("" when there is none).
  static std::string Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  std::filesystem::path dir_;
};

}  // namespace rnnstate::testing

namespace rnnstate::test_names {

using testing::JsonLines;
using testing::RunRnnstate;

}  // namespace rnnstate::test_names
