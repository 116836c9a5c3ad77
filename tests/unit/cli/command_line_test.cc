// One rnnstate command line run in this process: --help and --version, a mistyped command answered with
// the closest one, usage errors and errors of a command mapped to the documented exit codes, -q anywhere.

#include "cli/command_line.h"

#include <gtest/gtest.h>

#include "cli/command_run.h"
#include "cli/version.h"
#include "test_names.h"

namespace rnnstate::command_line_test {
namespace {

using namespace test_names;

class RunCommandLineTest : public testing::CliFiles {};

TEST_F(RunCommandLineTest, HelpListsEveryCommandThenTheExitCodes) {
  const testing::CommandRun run = RunRnnstate({"--help"});
  EXPECT_EQ(run.exit_code, 0);
  for (const char* name : {"rewrite", "report", "check", "init", "export", "verify"}) {
    EXPECT_THAT(run.out, HasSubstr("\n  " + std::string(name) + " ")) << name;
  }
  EXPECT_THAT(run.out, HasSubstr("Examples:\n  rnnstate rewrite model.onnx -o stream.onnx"));
  EXPECT_THAT(run.out, HasSubstr("Exit codes: 0 ok, 1 check or verify failed, 2 usage"));
  EXPECT_EQ(run.err, "");
}

TEST_F(RunCommandLineTest, ACommandsHelpEndsWithItsOwnExamplesThenTheExitCodes) {
  const testing::CommandRun run = RunRnnstate({"check", "--help"});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_THAT(run.out, HasSubstr("--streamable-only"));
  EXPECT_THAT(run.out, HasSubstr("Examples:\n  rnnstate check zoo/ --json"));
  EXPECT_THAT(run.out, Not(HasSubstr("rnnstate rewrite model.onnx")));
  EXPECT_THAT(run.out, HasSubstr("Exit codes:"));
}

TEST_F(RunCommandLineTest, VersionPrintsTheVersionTextOrWithJsonItsJson) {
  testing::CommandRun run = RunRnnstate({"--version"});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.out, VersionText() + "\n");
  run = RunRnnstate({"--version", "--json"});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.out, VersionJson() + "\n");
  EXPECT_EQ(RunRnnstate({"--json", "report", Path("m.onnx")}).exit_code, 2);  // --json needs --version
}

TEST_F(RunCommandLineTest, NoCommandOrAnUnknownOptionIsAUsageError) {
  EXPECT_EQ(RunRnnstate({}).exit_code, 2);
  const testing::CommandRun run = RunRnnstate({"report", "--bogus", Path("m.onnx")});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("--bogus"));
  EXPECT_EQ(run.out, "");
}

TEST_F(RunCommandLineTest, AMistypedCommandIsAUsageErrorSuggestingTheClosestCommand) {
  const testing::CommandRun run = RunRnnstate({"-q", "rewirte", Path("m.onnx")});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err,
            "rnnstate: error: unknown command 'rewirte'; did you mean 'rewrite'?\n"
            "(rnnstate --help lists the commands)\n");
  EXPECT_EQ(run.out, "");
}

TEST_F(RunCommandLineTest, AWordFarFromEveryCommandIsAnsweredWithTheList) {
  const testing::CommandRun run = RunRnnstate({"model.onnx"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("unknown command 'model.onnx' (the commands: rewrite, report, check, init, "
                                 "export, verify)\n"));
}

TEST_F(RunCommandLineTest, AnErrorACommandThrowsIsPrintedWithItsExitCode) {
  const testing::CommandRun run = RunRnnstate({"rewrite", WriteModel("a.onnx"), WriteModel("b.onnx"), "-o", "x.onnx"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, ::testing::StartsWith("rnnstate: error: -o takes exactly one input file"));
}

TEST_F(RunCommandLineTest, QuietWorksBeforeAndAfterTheCommand) {
  const std::vector<std::string> files = {WriteFile("a.onnx", "not onnx"), WriteFile("b.onnx", "not onnx")};
  const testing::CommandRun loud = RunRnnstate({"report", files[0], files[1]});
  EXPECT_EQ(loud.exit_code, 3);
  EXPECT_THAT(loud.err, HasSubstr("rnnstate: 2 files: 0 ok, 2 failed (exit 3)"));
  for (const auto& arguments : {std::vector<std::string>{"-q", "report", files[0], files[1]},
                                std::vector<std::string>{"report", files[0], files[1], "-q"}}) {
    const testing::CommandRun quiet = RunRnnstate(arguments);
    EXPECT_EQ(quiet.exit_code, 3);
    EXPECT_THAT(quiet.err, HasSubstr("rnnstate: error: " + files[1]));  // errors are still printed
    EXPECT_THAT(quiet.err, Not(HasSubstr("2 files")));
  }
}

TEST_F(RunCommandLineTest, RunsAgainInTheSameProcess) {
  // Each run sets up its own logging: a second run in one process must not find the first's in its way.
  const std::string missing = Path("missing.onnx");
  for (int run = 0; run < 2; ++run) {
    const testing::CommandRun second = RunRnnstate({"check", missing});
    EXPECT_EQ(second.exit_code, 3) << "run " << run;
    EXPECT_THAT(second.err, HasSubstr("rnnstate: error: " + missing)) << "run " << run;
  }
}

}  // namespace
}  // namespace rnnstate::command_line_test
