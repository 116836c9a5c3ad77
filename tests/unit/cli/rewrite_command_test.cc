// `rnnstate rewrite`: where each output goes (the default suffix, -o, --in-place, --out-dir), what it
// prints per file, --dry-run, --json, the plan options reaching the rewrite, and its usage errors.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "cli/command_run.h"
#include "test_names.h"

namespace rnnstate::rewrite_command_test {
namespace {

using namespace test_names;
namespace fs = std::filesystem;

class RewriteCommandTest : public testing::CliFiles {
 protected:
  /// `rnnstate rewrite ARGUMENTS...`.
  static testing::CommandRun Rewrite(const std::vector<std::string>& arguments) {
    std::vector<std::string> words = {"rewrite"};
    words.insert(words.end(), arguments.begin(), arguments.end());
    return RunRnnstate(words);
  }

  /// The model at `path`, parsed.
  static onnx::ModelProto Load(const std::string& path) {
    onnx::ModelProto model;
    EXPECT_TRUE(model.ParseFromString(Read(path))) << path;
    return model;
  }
};

TEST_F(RewriteCommandTest, ByDefaultWritesBesideTheInputWithTheStreamingSuffix) {
  const std::string model = WriteModel("m.onnx");
  const std::string before = Read(model);
  const testing::CommandRun run = Rewrite({model});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, model + " -> " + Path("m.streaming.onnx") + ": 1 state pair\n");
  EXPECT_THAT(RecordedPairs(Load(Path("m.streaming.onnx"))), SizeIs(1));
  EXPECT_EQ(Read(model), before);  // the input is never modified
}

TEST_F(RewriteCommandTest, OutputOptionWritesThatFile) {
  const std::string model = WriteModel("m.onnx");
  const testing::CommandRun run = Rewrite({model, "-o", Path("s.onnx")});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, model + " -> " + Path("s.onnx") + ": 1 state pair\n");
  EXPECT_FALSE(fs::exists(Path("m.streaming.onnx")));
  EXPECT_THAT(RecordedPairs(Load(Path("s.onnx"))), SizeIs(1));
}

TEST_F(RewriteCommandTest, InPlaceReplacesTheInputOnceThenHasNothingToDo) {
  const std::string model = WriteModel("m.onnx");
  EXPECT_EQ(Rewrite({model, "--in-place"}).exit_code, 0);
  const std::string rewritten = Read(model);
  EXPECT_THAT(RecordedPairs(Load(model)), SizeIs(1));
  const testing::CommandRun again = Rewrite({model, "--in-place"});
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_EQ(again.out, model + ": nothing to do\n");
  EXPECT_EQ(Read(model), rewritten);
}

TEST_F(RewriteCommandTest, OutDirMirrorsTheTreeBelowEachDirectoryArgument) {
  WriteModel("zoo/a/m.onnx");
  WriteModel("zoo/n.onnx", kLstm);
  const testing::CommandRun run = Rewrite({Path("zoo"), "--out-dir", Path("out")});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(fs::exists(Path("out/a/m.onnx")));
  EXPECT_TRUE(fs::exists(Path("out/n.onnx")));
  EXPECT_THAT(run.err, HasSubstr("2 files: 2 ok, 0 failed, 2 changed (exit 0)"));
}

TEST_F(RewriteCommandTest, ARerunOverADirectoryDoesNotTakeItsOutputsForInputs) {
  WriteModel("zoo/m.onnx");
  EXPECT_EQ(Rewrite({Path("zoo")}).exit_code, 0);
  const testing::CommandRun again = Rewrite({Path("zoo")});
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_EQ(again.out, Path("zoo/m.onnx") + " -> " + Path("zoo/m.streaming.onnx") + ": 1 state pair\n");
  EXPECT_FALSE(fs::exists(Path("zoo/m.streaming.streaming.onnx")));
}

TEST_F(RewriteCommandTest, DryRunWritesNothingAndLabelsItsLinesWhenThereAreSeveralFiles) {
  const std::string m = WriteModel("m.onnx");
  const std::string n = WriteModel("n.onnx", kLstm);
  const testing::CommandRun one = Rewrite({m, "--dry-run"});
  EXPECT_EQ(one.exit_code, 0) << one.err;
  EXPECT_THAT(one.out, HasSubstr("new input"));
  EXPECT_THAT(one.out, ::testing::EndsWith("\nwould write " + Path("m.streaming.onnx") + "\n"));
  const testing::CommandRun two = Rewrite({m, n, "--dry-run"});
  EXPECT_EQ(two.exit_code, 0);
  std::istringstream lines(two.out);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_TRUE(line.rfind(m + ": ", 0) == 0 || line.rfind(n + ": ", 0) == 0) << line;
  }
  EXPECT_FALSE(fs::exists(Path("m.streaming.onnx")));
  EXPECT_FALSE(fs::exists(Path("n.streaming.onnx")));
}

TEST_F(RewriteCommandTest, JsonRecordsTheOutputTheStatesAndWhatChanged) {
  const std::string model = WriteModel("m.onnx");
  const testing::CommandRun run = Rewrite({model, "--json"});
  EXPECT_EQ(run.exit_code, 0);
  const std::vector<Json> records = testing::JsonLines(run.out);
  ASSERT_EQ(records.size(), 2u) << run.out;
  EXPECT_EQ(records[0]["status"], "ok");
  EXPECT_EQ(records[0]["output"], Path("m.streaming.onnx"));
  EXPECT_EQ(records[0]["states"].size(), 1u);
  EXPECT_EQ(records[1]["changed"], 1);
}

TEST_F(RewriteCommandTest, AModelWithoutRecurrentNodesIsWrittenUnchanged) {
  const std::string model = WriteModel("relu.onnx", R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[2] x) => (float[2] y) {
  y = Relu (x)
})");
  const testing::CommandRun run = Rewrite({model, "--json"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const std::vector<Json> records = testing::JsonLines(run.out);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0]["status"], "unchanged");
  EXPECT_EQ(records[1]["changed"], 0);
  EXPECT_EQ(Rewrite({model}).out,
            model + " -> " + Path("relu.streaming.onnx") + ": no recurrent nodes, written unchanged\n");
}

TEST_F(RewriteCommandTest, StateInputsRequiredLeavesTheNewInputWithoutADefault) {
  const std::string model = WriteModel("m.onnx");
  for (const char* mode : {"defaults", "required"}) {
    ASSERT_EQ(Rewrite({model, "--state-inputs", mode}).exit_code, 0) << mode;
    const onnx::ModelProto rewritten = Load(Path("m.streaming.onnx"));
    const std::vector<StatePair> pairs = RecordedPairs(rewritten);
    ASSERT_THAT(pairs, SizeIs(1)) << mode;
    EXPECT_THAT(InputNames(rewritten.graph()), Contains(pairs[0].input)) << mode;
    // A default is an initializer of the input's name (an input ONNX Runtime may leave unfed).
    const std::vector<std::string> initializers = InitializerNames(rewritten.graph());
    const bool has_default = std::count(initializers.begin(), initializers.end(), pairs[0].input) > 0;
    EXPECT_EQ(has_default, std::string(mode) == "defaults") << mode;
  }
}

TEST_F(RewriteCommandTest, NamingTemplatesReachTheRewrite) {
  const std::string model = WriteModel("m.onnx");
  const testing::CommandRun run =
      Rewrite({model, "--input-names", "in_{node}_{kind}", "--output-names", "out_{node}_{kind}"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::vector<StatePair> pairs = RecordedPairs(Load(Path("m.streaming.onnx")));
  ASSERT_THAT(pairs, SizeIs(1));
  EXPECT_EQ(pairs[0].input, "in_GRU_0_h");  // the unnamed GRU is named GRU_0
  EXPECT_EQ(pairs[0].output, "out_GRU_0_h");
}

TEST_F(RewriteCommandTest, ConflictingOrEmptyOutputOptionsAreUsageErrorsAndWriteNothing) {
  const std::string m = WriteModel("m.onnx");
  const std::string n = WriteModel("n.onnx");
  fs::create_directories(Path("zoo"));
  const std::vector<std::vector<std::string>> refused = {
      {m, "-o", Path("s.onnx"), "--in-place"},
      {m, "--in-place", "--out-dir", Path("out")},
      {m, n, "-o", Path("s.onnx")},
      {Path("zoo"), "-o", Path("s.onnx")},
      {m, "-o", ""},
      {m, "--out-dir", ""},
      {m, "-o", m},
      {m, "-o", Path("zoo")},
      {m, "--packed-input", "state", "--packed-output", "state"},
      {m, "--nodes", "("},
      {m, "--fsync", "--no-fsync"},
      {m, "--pack", "list"},
  };
  for (const std::vector<std::string>& arguments : refused) {
    const testing::CommandRun run = Rewrite(arguments);
    EXPECT_EQ(run.exit_code, 2) << ::testing::PrintToString(arguments) << run.err;
  }
  EXPECT_THAT(Rewrite({m, "-o", m}).err, HasSubstr("would replace it (use --in-place)"));
  EXPECT_THAT(Rewrite({m, "-o", Path("s.onnx"), "--in-place"}).err,
              HasSubstr("use only one of -o, --in-place and --out-dir"));
  EXPECT_FALSE(fs::exists(Path("s.onnx")));
  EXPECT_FALSE(fs::exists(Path("out")));
  EXPECT_FALSE(fs::exists(Path("m.streaming.onnx")));
}

}  // namespace
}  // namespace rnnstate::rewrite_command_test
