// `rnnstate verify`: every argument after the command is the helper's checker's (its --help too), and a
// binary without the checker beside it or installed fails with exit 3 naming where it looked. (The checker
// itself runs in Node.js: tests/unit/cli/node_verify_test.cc and the e2e suites.)

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "cli/command_run.h"
#include "cli/node_verify.h"
#include "test_names.h"

namespace rnnstate::verify_command_test {
namespace {

using namespace test_names;

class VerifyCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The unit tests' binary stands in for rnnstate: build/tests/ has no checker beside it.
    for (const std::filesystem::path& candidate :
         VerifyScriptCandidates(std::filesystem::read_symlink("/proc/self/exe"))) {
      if (std::filesystem::exists(candidate)) GTEST_SKIP() << "a checker exists at " << candidate;
    }
  }
};

TEST_F(VerifyCommandTest, WithoutTheCheckerFailsWithExitThreeNamingWhereItLooked) {
  const testing::CommandRun run = RunRnnstate({"verify", "model.onnx", "stream.onnx"});
  EXPECT_EQ(run.exit_code, 3);
  EXPECT_THAT(run.err, ::testing::StartsWith("rnnstate: error: "));
  EXPECT_THAT(run.err, HasSubstr("rnnstate-stream/cli.mjs"));
  EXPECT_EQ(run.out, "");
}

TEST_F(VerifyCommandTest, EveryArgumentIsTheCheckersOptionsAndHelpIncluded) {
  // Options rnnstate's parser does not know, and --help, reach the (missing) checker: not exit 2, not rnnstate's help.
  for (const std::vector<std::string>& arguments :
       {std::vector<std::string>{"verify", "--chunks", "1,7", "a.onnx", "b.onnx"},
        std::vector<std::string>{"verify", "--help"}, std::vector<std::string>{"verify", "-h"},
        std::vector<std::string>{"-q", "verify", "a.onnx", "b.onnx", "--seed", "3"}}) {
    const testing::CommandRun run = RunRnnstate(arguments);
    EXPECT_EQ(run.exit_code, 3) << ::testing::PrintToString(arguments) << run.err;
    EXPECT_EQ(run.out, "") << ::testing::PrintToString(arguments);
  }
}

}  // namespace
}  // namespace rnnstate::verify_command_test
