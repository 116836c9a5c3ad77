// The work list of a command over files: directories walked for *.onnx, files reached twice kept once,
// where `rewrite` writes each output, the outputs it refuses, and the result of an argument with no model.

#include "cli/file_discovery.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "cli/command_run.h"
#include "test_names.h"

namespace rnnstate::file_discovery_test {
namespace {

using namespace test_names;
namespace fs = std::filesystem;

/// The `relative` member of each entry.
std::vector<std::string> Relatives(const std::vector<InputFile>& inputs) {
  std::vector<std::string> relatives;
  for (const InputFile& input : inputs) relatives.push_back(input.relative);
  return relatives;
}

class FindModelFilesTest : public testing::CliFiles {};

TEST(IsModelFileName, AnOnnxNameOrAPathEndingInOne) {
  EXPECT_TRUE(IsModelFileName("m.onnx"));
  EXPECT_TRUE(IsModelFileName("zoo/deep/m.streaming.onnx"));
  EXPECT_FALSE(IsModelFileName("m.onnx.bak"));
  EXPECT_FALSE(IsModelFileName("m.ONNX"));
  EXPECT_FALSE(IsModelFileName("onnx"));
}

TEST_F(FindModelFilesTest, WalksADirectoryAtAnyDepthForOnnxFilesSortedByTheirPathBelowIt) {
  WriteFile("zoo/b.onnx", "");
  WriteFile("zoo/a/z.onnx", "");
  WriteFile("zoo/a/deeper/m.onnx", "");
  WriteFile("zoo/notes.txt", "");
  WriteFile("zoo/model.onnx.bak", "");
  fs::create_directories(Path("zoo/dir.onnx"));  // a directory of that name is walked, not listed
  WriteFile("zoo/dir.onnx/inside.onnx", "");
  const std::vector<InputFile> found = FindModelFiles({Path("zoo")}, {});
  EXPECT_THAT(Relatives(found), ElementsAre("a/deeper/m.onnx", "a/z.onnx", "b.onnx", "dir.onnx/inside.onnx"));
  for (const InputFile& input : found) {
    EXPECT_EQ(input.root, Path("zoo"));
    EXPECT_EQ(input.path, (fs::path(Path("zoo")) / input.relative).string());
    EXPECT_EQ(input.error, "");
    EXPECT_NE(input.key, "");
  }
}

TEST_F(FindModelFilesTest, KeepsAFileArgumentAsItIsEvenMissingOrWithAnotherSuffix) {
  const std::string text = WriteFile("m.txt", "");
  const std::vector<InputFile> found = FindModelFiles({text, Path("missing.onnx")}, {});
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].path, text);
  EXPECT_EQ(found[0].root, "");
  EXPECT_EQ(found[0].relative, "m.txt");
  EXPECT_EQ(found[1].path, Path("missing.onnx"));
  EXPECT_EQ(found[1].error, "");  // it fails when it is loaded, not here
}

TEST_F(FindModelFilesTest, SkipsTheSuffixInDirectoriesOnlyAndNeverEntersTheSkippedDirectory) {
  WriteFile("zoo/m.onnx", "");
  const std::string output = WriteFile("zoo/m.streaming.onnx", "");
  WriteFile("zoo/out/old.onnx", "");
  DiscoveryOptions options;
  options.skip_suffix = kStreamingSuffix;
  options.skip_directory = Path("zoo/out");
  EXPECT_THAT(Relatives(FindModelFiles({Path("zoo")}, options)), ElementsAre("m.onnx"));
  EXPECT_THAT(Relatives(FindModelFiles({output}, options)), ElementsAre("m.streaming.onnx"));
  EXPECT_THAT(Relatives(FindModelFiles({Path("zoo")}, {})), ElementsAre("m.onnx", "m.streaming.onnx", "out/old.onnx"));
}

TEST_F(FindModelFilesTest, ADirectoryWithoutModelsIsAnEntryWithAnError) {
  WriteFile("empty/readme.txt", "");
  const std::vector<InputFile> found = FindModelFiles({Path("empty")}, {});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].path, Path("empty"));
  EXPECT_EQ(found[0].error, "no *.onnx files in this directory");
}

TEST_F(FindModelFilesTest, AFileReachedTwiceIsKeptOnceAtItsFirstPosition) {
  const std::string model = WriteFile("zoo/m.onnx", "");
  const std::string other = WriteFile("o.onnx", "");
  fs::create_symlink(model, Path("link.onnx"));
  const std::vector<InputFile> found =
      FindModelFiles({other, Path("zoo/../zoo/m.onnx"), Path("zoo"), Path("link.onnx"), other}, {});
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].path, other);
  EXPECT_EQ(found[1].path, Path("zoo/../zoo/m.onnx"));
}

TEST_F(FindModelFilesTest, EverySpellingOfOnePathIsOneFile) {
  const std::string model = WriteFile("zoo/m.onnx", "");
  const std::string zoo = Path("zoo");
  // Split from the string (the first three) or by fs::path (a doubled separator), relative to the current
  // directory or absolute: one key.
  const std::vector<InputFile> found =
      FindModelFiles({model, zoo + "/./m.onnx", zoo + "/sub/../m.onnx", zoo + "//m.onnx", zoo + "/.//m.onnx"}, {});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].path, model);
  fs::create_directories(Path("zoo/sub"));
  const fs::path cwd = fs::current_path();
  fs::current_path(zoo);
  const std::vector<InputFile> relative = FindModelFiles({"m.onnx", "./m.onnx", "sub/../m.onnx", model}, {});
  fs::current_path(cwd);
  ASSERT_EQ(relative.size(), 1u);
  EXPECT_EQ(relative[0].path, "m.onnx");
}

TEST_F(FindModelFilesTest, ListsDanglingSymlinksSoThatTheyFailWhenLoaded) {
  fs::create_directories(Path("zoo"));
  fs::create_symlink(Path("nowhere.onnx"), Path("zoo/dangling.onnx"));
  EXPECT_THAT(Relatives(FindModelFiles({Path("zoo")}, {})), ElementsAre("dangling.onnx"));
}

TEST(SuffixOutputPath, ReplacesTheOnnxExtensionOrAppends) {
  EXPECT_EQ(SuffixOutputPath("model.onnx"), "model.streaming.onnx");
  EXPECT_EQ(SuffixOutputPath("dir.onnx/m.onnx"), "dir.onnx/m.streaming.onnx");
  EXPECT_EQ(SuffixOutputPath("model.pb"), "model.pb.streaming.onnx");
  EXPECT_EQ(SuffixOutputPath(".onnx"), ".onnx.streaming.onnx");  // no stem to keep
}

TEST(OutputPathFor, EachModeHasItsPlace) {
  const InputFile found{"zoo/a/m.onnx", "zoo", "a/m.onnx", "", "key"};
  EXPECT_EQ(OutputPathFor(found, OutputMode::kSuffix, ""), "zoo/a/m.streaming.onnx");
  EXPECT_EQ(OutputPathFor(found, OutputMode::kOutDir, "out"), "out/a/m.onnx");
  EXPECT_EQ(OutputPathFor(found, OutputMode::kInPlace, "ignored"), "zoo/a/m.onnx");
  EXPECT_EQ(OutputPathFor(found, OutputMode::kExplicit, "s.onnx"), "s.onnx");
  const InputFile named{"x/m.onnx", "", "m.onnx", "", "key"};
  EXPECT_EQ(OutputPathFor(named, OutputMode::kOutDir, "out"), "out/m.onnx");
}

class OutputConflictTest : public testing::CliFiles {
 protected:
  void SetUp() override {
    CliFiles::SetUp();
    WriteFile("a.onnx", "");
    WriteFile("b.onnx", "");
    inputs_ = FindModelFiles({Path("a.onnx"), Path("b.onnx")}, {});
  }
  std::vector<InputFile> inputs_;
};

TEST_F(OutputConflictTest, DistinctNewOutputsCanBeWritten) {
  EXPECT_EQ(OutputConflict(inputs_, {Path("a.s.onnx"), Path("b.s.onnx")}, false), "");
}

TEST_F(OutputConflictTest, AnOutputWrittenTwiceNamesBothInputs) {
  const std::string conflict = OutputConflict(inputs_, {Path("s.onnx"), Path("./s.onnx")}, false);
  EXPECT_THAT(conflict, HasSubstr("would be written twice"));
  EXPECT_THAT(conflict, HasSubstr(Path("a.onnx")));
  EXPECT_THAT(conflict, HasSubstr(Path("b.onnx")));
}

TEST_F(OutputConflictTest, AnOutputThatIsADirectoryIsRefused) {
  fs::create_directories(Path("out"));
  EXPECT_THAT(OutputConflict(inputs_, {Path("out"), Path("b.s.onnx")}, false), HasSubstr("is a directory"));
}

TEST_F(OutputConflictTest, AnOutputOverItsOwnInputNeedsInPlace) {
  const std::vector<std::string> same = {Path("a.onnx"), Path("b.onnx")};
  EXPECT_THAT(OutputConflict(inputs_, same, false), HasSubstr("would replace it (use --in-place)"));
  EXPECT_EQ(OutputConflict(inputs_, same, true), "");
}

TEST_F(OutputConflictTest, AnOutputOverAnotherInputIsRefusedEvenInPlace) {
  const std::vector<std::string> swapped = {Path("b.onnx"), Path("a.onnx")};
  EXPECT_THAT(OutputConflict(inputs_, swapped, true), HasSubstr("would replace the input '" + Path("b.onnx") + "'"));
}

TEST_F(OutputConflictTest, EntriesWithAnErrorAreIgnored) {
  inputs_[1].error = "no *.onnx files in this directory";
  EXPECT_EQ(OutputConflict(inputs_, {Path("s.onnx"), Path("s.onnx")}, false), "");
}

TEST(DiscoveryErrorResult, IsAnErrorWithExitCodeThreeAndTheEntrysReason) {
  const FileResult result = DiscoveryErrorResult(InputFile{"empty", "empty", "", "no *.onnx files", ""});
  EXPECT_EQ(result.path, "empty");
  EXPECT_EQ(result.status, kStatusError);
  EXPECT_EQ(result.exit_code, static_cast<int>(ExitCode::kBadInput));
  EXPECT_EQ(result.error, "no *.onnx files");
}

}  // namespace
}  // namespace rnnstate::file_discovery_test
