// Writing a file from pieces (io/file_output.h): the pieces in order, a large span of the input file copied
// from the input's descriptor, an existing file replaced with its permissions kept, a name as long as the
// file system allows still written (the temporary is no longer), and on failure the destination untouched,
// no temporary left and exit 5; what is neither a regular file nor a symlink is never replaced.

#include "io/file_output.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "model_dirs.h"
#include "rnnstate/error.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::file_output_test {
namespace {

using namespace test_names;
namespace fs = std::filesystem;

class FileOutput : public testing::ModelDirs {
 protected:
  /// The bytes of `path`.
  static std::string Read(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }
  /// The names in `out/`.
  std::vector<std::string> OutNames() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(root_ / "out")) names.push_back(entry.path().filename());
    return names;
  }
};

/// A piece holding `text` (which outlives it).
BytePiece PieceOf(const std::string& text) { return {reinterpret_cast<const uint8_t*>(text.data()), text.size()}; }

/// No input file: every piece is in the process's memory.
const output::InputFile kNoInput{-1, nullptr, 0, false};

TEST(DirectoryOf, IsTheDirectoryPartOrTheCurrentOne) {
  EXPECT_EQ(output::DirectoryOf("a/b/m.onnx"), "a/b");
  EXPECT_EQ(output::DirectoryOf("m.onnx"), ".");
  EXPECT_EQ(output::DirectoryOf("/m.onnx"), "/");
}

TEST_F(FileOutput, WritesThePiecesInOrderOverAFileKeepingItsPermissions) {
  const fs::path path = root_ / "out" / "m.onnx";
  Write(path, "old contents");
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  const std::string a = "first,", b = "second";
  output::WriteFileAtomically(path, {PieceOf(a), PieceOf(b)}, kNoInput, true);
  EXPECT_EQ(Read(path), "first,second");
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  EXPECT_THAT(OutNames(), ElementsAre("m.onnx"));  // no temporary left
}

// Empty pieces write nothing, wherever they are: before, between and after others, or all of them (writev
// of nothing but empty iovecs returns 0, which is not a failure to write).
TEST_F(FileOutput, EmptyPiecesWriteNothingWhereverTheyAre) {
  const fs::path path = root_ / "out" / "m.onnx";
  const std::string a = "first,", b = "second", none;
  output::WriteFileAtomically(path, {PieceOf(none), PieceOf(a), PieceOf(none), PieceOf(b), PieceOf(none)}, kNoInput,
                              true);
  EXPECT_EQ(Read(path), "first,second");
  output::WriteFileAtomically(path, {PieceOf(none), PieceOf(none)}, kNoInput, true);
  EXPECT_EQ(Read(path), "");
  output::WriteFileAtomically(path, {}, kNoInput, true);
  EXPECT_EQ(Read(path), "");
  EXPECT_THAT(OutNames(), ElementsAre("m.onnx"));
}

TEST_F(FileOutput, CopiesALargeSpanOfTheInputFile) {
  std::string data(300 << 10, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>('a' + (i * 7) % 26);
  const fs::path source = root_ / "model" / "big.bin";
  Write(source, data);
  const int fd = open(source.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  const output::InputFile input{fd, reinterpret_cast<const uint8_t*>(data.data()), data.size(), false};
  const std::string head = "head", tail = "tail";
  const size_t offset = 1000, size = 200 << 10;  // over the size copied by the kernel
  const BytePiece span{input.data + offset, size};
  output::WriteFileAtomically(root_ / "out" / "copy.bin", {PieceOf(head), span, PieceOf(tail)}, input, false);
  close(fd);
  EXPECT_EQ(Read(root_ / "out" / "copy.bin"), head + data.substr(offset, size) + tail);
}

TEST_F(FileOutput, WritesANameAsLongAsTheFileSystemAllows) {
  const fs::path path = root_ / "out" / std::string(255, 'm');
  const std::string text = "model";
  output::WriteFileAtomically(path, {PieceOf(text)}, kNoInput, false);
  EXPECT_EQ(Read(path), "model");
  EXPECT_EQ(OutNames().size(), 1u);
}

TEST_F(FileOutput, RefusesWhatIsNotARegularFileAndLeavesItAsItIs) {
  const fs::path fifo = root_ / "out" / "pipe";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string text = "model";
  ExpectError([&] { output::WriteFileAtomically(fifo, {PieceOf(text)}, kNoInput, false); }, ExitCode::kCannotWrite,
              "is not a regular file");
  EXPECT_TRUE(fs::is_fifo(fifo));
  ExpectError([&] { output::RequireReplaceable(root_ / "model"); }, ExitCode::kCannotWrite, "is not a regular file");
  fs::create_symlink(root_ / "model", root_ / "out" / "link");
  EXPECT_NO_THROW(output::RequireReplaceable(root_ / "out" / "link"));  // replaced, not followed
  EXPECT_NO_THROW(output::RequireReplaceable(root_ / "out" / "new.onnx"));
  EXPECT_THAT(OutNames(), ::testing::UnorderedElementsAre("pipe", "link"));
}

TEST_F(FileOutput, ADirectoryThatCannotHoldTheFileLeavesNothing) {
  const std::string text = "model";
  ExpectError(
      [&] { output::WriteFileAtomically(root_ / "out" / "missing" / "m.onnx", {PieceOf(text)}, kNoInput, false); },
      ExitCode::kCannotWrite, "cannot create a file in");
  EXPECT_TRUE(OutNames().empty());
}

}  // namespace
}  // namespace rnnstate::file_output_test
