// Input files are opened only when they are regular files: a FIFO nobody writes to, a device or a socket
// is refused at once, never opened for a blocking read.

#include "io/regular_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "io/model_file.h"
#include "rnnstate/error.h"
#include "test_models.h"

namespace rnnstate::regular_file_test {
namespace {

namespace fs = std::filesystem;
using input::RegularFile;

class RegularFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "regular_file_test.XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    alarm(20);  // a blocking open would hang the test: fail it instead
  }
  void TearDown() override {
    alarm(0);
    fs::remove_all(dir_);
  }

  std::string PathOf(const std::string& name) const { return dir_ + "/" + name; }

  /// Expects both RegularFile::Open and ModelFile::Open to refuse `path` with `text` in the message.
  static void ExpectRefused(const std::string& path, const std::string& text) {
    for (const std::function<void()>& open :
         std::vector<std::function<void()>>{[&] { RegularFile::Open(path); }, [&] { ModelFile::Open(path); }}) {
      try {
        open();
        ADD_FAILURE() << path << " was opened";
      } catch (const Error& error) {
        EXPECT_EQ(error.code(), ExitCode::kBadInput);
        EXPECT_NE(std::string(error.what()).find(text), std::string::npos) << error.what();
      }
    }
  }

  std::string dir_;
};

TEST_F(RegularFileTest, OpensARegularFileForBlockingReads) {
  std::ofstream(PathOf("f.bin")) << "12345";
  fs::create_symlink(PathOf("f.bin"), PathOf("link.bin"));
  for (const char* name : {"f.bin", "link.bin"}) {
    const RegularFile file = RegularFile::Open(PathOf(name));
    EXPECT_EQ(file.size(), 5u);
    EXPECT_EQ(fcntl(file.fd(), F_GETFL) & O_NONBLOCK, 0);
    EXPECT_EQ(fcntl(file.fd(), F_GETFL) & O_ACCMODE, O_RDONLY);  // clearing O_NONBLOCK kept the rest
    EXPECT_EQ(fcntl(file.fd(), F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  }
}

TEST_F(RegularFileTest, FifoIsRefusedWithoutWaitingForAWriter) {
  ASSERT_EQ(mkfifo(PathOf("model.onnx").c_str(), 0600), 0);
  ExpectRefused(PathOf("model.onnx"), "not a regular file (a FIFO)");
  fs::create_symlink(PathOf("model.onnx"), PathOf("link.onnx"));
  ExpectRefused(PathOf("link.onnx"), "not a regular file (a FIFO)");
}

TEST_F(RegularFileTest, DevicesSocketsAndDirectoriesAreRefused) {
  ExpectRefused("/dev/null", "not a regular file (a character device)");
  ExpectRefused(dir_, "is a directory");
  ExpectRefused(PathOf("missing.onnx"), "cannot open");
  const std::string path = PathOf("s.sock");
  testing::MakeSocketFile(path);
  ExpectRefused(path, "not a regular file (a socket)");
}

}  // namespace
}  // namespace rnnstate::regular_file_test
