// The external data of a model written to another directory (io/data_placement.h): linked or copied beside
// the output, never over another file, removed again with the directories made for it when the output is
// not written (but not from under another output that relies on it), and an output that would replace or be
// its own external data refused; the output directories made for an output (--out-dir) removed again, when
// empty and no other output relies on them, if the output is not written.

#include "io/data_placement.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "io/model_dirs.h"
#include "rnnstate/error.h"

namespace rnnstate::data_placement_test {
namespace {

namespace fs = std::filesystem;

class DataPlacement : public testing::ModelDirs {};

TEST_F(DataPlacement, WritingElsewhereLinksTheDataBeside) {
  ProvideExternalData({"w.bin"}, (root_ / "model").string(), (root_ / "out").string()).Keep();
  ASSERT_TRUE(fs::exists(root_ / "out" / "w.bin"));
  EXPECT_TRUE(fs::equivalent(root_ / "out" / "w.bin", root_ / "model" / "w.bin") ||
              fs::file_size(root_ / "out" / "w.bin") == 16);
  // A second run finds the same file and succeeds.
  EXPECT_NO_THROW(ProvideExternalData({"w.bin"}, (root_ / "model").string(), (root_ / "out").string()).Keep());
}

TEST_F(DataPlacement, NeverOverwritesAnotherFile) {
  Write(root_ / "out" / "w.bin", "other");
  try {
    ProvideExternalData({"w.bin"}, (root_ / "model").string(), (root_ / "out").string()).Keep();
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kCannotWrite);
  }
  std::ifstream in(root_ / "out" / "w.bin");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text, "other");
}

TEST_F(DataPlacement, SameDirectoryNeedsNothing) {
  EXPECT_NO_THROW(ProvideExternalData({"w.bin"}, (root_ / "model").string(), (root_ / "model").string()).Keep());
}

TEST_F(DataPlacement, APlacementNotKeptIsRemovedWithTheDirectoriesItMade) {
  fs::create_directories(root_ / "model" / "sub" / "deeper");
  Write(root_ / "model" / "sub" / "deeper" / "v.bin", "v");
  {
    auto placed =
        ProvideExternalData({"w.bin", "sub/deeper/v.bin"}, (root_ / "model").string(), (root_ / "out").string());
  }
  EXPECT_TRUE(fs::is_empty(root_ / "out"));  // the output was not written: nothing is left beside it
  EXPECT_TRUE(fs::exists(root_ / "model" / "w.bin"));
  EXPECT_TRUE(fs::exists(root_ / "model" / "sub" / "deeper" / "v.bin"));
}

TEST_F(DataPlacement, AFailedPlacementRemovesWhatItHadPlaced) {
  fs::create_directories(root_ / "out" / "sub");
  fs::create_directories(root_ / "model" / "sub");
  Write(root_ / "model" / "sub" / "v.bin", "v");
  Write(root_ / "out" / "sub" / "v.bin", "someone else's");
  EXPECT_THROW((void)ProvideExternalData({"w.bin", "sub/v.bin"}, (root_ / "model").string(), (root_ / "out").string()),
               Error);
  EXPECT_FALSE(fs::exists(root_ / "out" / "w.bin"));
  EXPECT_TRUE(fs::exists(root_ / "out" / "sub" / "v.bin"));  // the user's file and directory stay
}

TEST_F(DataPlacement, AFailedOutputNeverTakesTheDataAnotherOutputReliesOn) {
  const std::string model = (root_ / "model").string(), out = (root_ / "out").string();
  {
    auto first = ProvideExternalData({"w.bin"}, model, out);
    auto second = ProvideExternalData({"w.bin"}, model, out);  // finds the first one's link
    first.Keep();
  }  // the second output failed
  EXPECT_TRUE(fs::exists(root_ / "out" / "w.bin"));
  {
    auto again = ProvideExternalData({"w.bin"}, model, out);  // a third output, which fails too
    (void)again;
  }
  EXPECT_TRUE(fs::exists(root_ / "out" / "w.bin")) << "kept by an earlier output: the user's now";
  fs::remove(root_ / "out" / "w.bin");
  {
    auto first = ProvideExternalData({"w.bin"}, model, out);
    {
      auto second = ProvideExternalData({"w.bin"}, model, out);
      second.Keep();
    }
  }  // the first one failed after the second was written
  EXPECT_TRUE(fs::exists(root_ / "out" / "w.bin"));
}

TEST_F(DataPlacement, AnOutputMayNotReplaceOrBeItsExternalData) {
  const std::string model = (root_ / "model").string();
  auto conflict = [&](const fs::path& output) { return OutputDataConflict({"w.bin"}, model, output.string()); };
  const std::string replaces = "would replace the model's external data file 'w.bin'";
  EXPECT_EQ(conflict(root_ / "model" / "w.bin"),
            "the output '" + (root_ / "model" / "w.bin").string() + "' " + replaces);
  EXPECT_NE(conflict(root_ / "out" / ".." / "model" / "w.bin").find(replaces), std::string::npos);
  fs::create_directory_symlink(root_ / "model", root_ / "alias");
  EXPECT_NE(conflict(root_ / "alias" / "w.bin").find(replaces), std::string::npos);
  fs::create_symlink(root_ / "model" / "w.bin", root_ / "out" / "link.bin");
  EXPECT_NE(conflict(root_ / "out" / "link.bin").find(replaces), std::string::npos);
  fs::create_hard_link(root_ / "model" / "w.bin", root_ / "out" / "hard.bin");
  EXPECT_NE(conflict(root_ / "out" / "hard.bin").find(replaces), std::string::npos);
  // In another directory, the data file goes beside the output under its own name.
  EXPECT_EQ(conflict(root_ / "out" / "w.bin"), "the output '" + (root_ / "out" / "w.bin").string() +
                                                   "' is where its own external data file 'w.bin' must go");
  EXPECT_EQ(conflict(root_ / "out" / "m.onnx"), "");
  EXPECT_EQ(conflict(root_ / "model" / "m.streaming.onnx"), "");
}

TEST_F(DataPlacement, OutputDirectoriesMadeForAnOutputNotWrittenAreRemovedAgain) {
  const fs::path deep = root_ / "out" / "a" / "b" / "c";
  {
    PlacedData made = CreateOutputDirectories(deep.string());
    EXPECT_TRUE(fs::is_directory(deep));
  }
  EXPECT_FALSE(fs::exists(root_ / "out" / "a"));
  EXPECT_TRUE(fs::exists(root_ / "out"));  // it was there before
  {
    PlacedData kept = CreateOutputDirectories(deep.string());
    kept.Keep();
  }
  EXPECT_TRUE(fs::is_directory(deep));
}

TEST_F(DataPlacement, AnOutputDirectoryAnotherOutputReliesOnStays) {
  const fs::path dir = root_ / "out" / "shared";
  {
    PlacedData first = CreateOutputDirectories(dir.string());
    {
      PlacedData second = CreateOutputDirectories(dir.string());
      second.Keep();
    }
  }  // the first output failed after the second was written
  EXPECT_TRUE(fs::is_directory(dir));
  // A directory holding a file when its output fails is not removed either.
  const fs::path other = root_ / "out" / "other";
  {
    PlacedData made = CreateOutputDirectories(other.string());
    Write(other / "user.txt", "kept");
  }
  EXPECT_TRUE(fs::exists(other / "user.txt"));
}

TEST_F(DataPlacement, AnOutputDirectoryThatWasThereStaysWhateverBecomesOfTheOutput) {
  const fs::path dir = root_ / "out" / "there" / "deep";
  fs::create_directories(dir);
  { PlacedData unused = CreateOutputDirectories(dir.string()); }
  EXPECT_TRUE(fs::is_directory(dir));
  // The same while another output's directories are pending: those go, the ones that were there stay.
  {
    PlacedData pending = CreateOutputDirectories((root_ / "out" / "new").string());
    { PlacedData unused = CreateOutputDirectories(dir.string()); }
    EXPECT_TRUE(fs::is_directory(dir));
  }
  EXPECT_FALSE(fs::exists(root_ / "out" / "new"));
  EXPECT_TRUE(fs::is_directory(dir));
}

TEST_F(DataPlacement, ADirectoryThatCannotBeMadeIsRefusedAndNothingIsLeft) {
  Write(root_ / "out" / "file", "in the way");
  try {
    (void)CreateOutputDirectories((root_ / "out" / "file" / "deeper").string());
    FAIL() << "a directory under a file was made";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kCannotWrite);
    EXPECT_NE(std::string(e.what()).find("cannot create directory '"), std::string::npos);
  }
  // A name too long for the file system fails after `fresh` was made: `fresh` goes again.
  EXPECT_THROW((void)CreateOutputDirectories((root_ / "out" / "fresh" / std::string(300, 'a')).string()), Error);
  EXPECT_FALSE(fs::exists(root_ / "out" / "fresh"));
}

}  // namespace
}  // namespace rnnstate::data_placement_test
