// cli/huge_pages: the GLIBC_TUNABLES value the restart sets, and when it does not restart. (The restart
// itself replaces the process; tests/cli/cli_test.sh counts its exec with strace.)

#include "cli/huge_pages.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "cli/scoped_env.h"
#include "test_names.h"

namespace rnnstate::huge_pages_test {
namespace {

using namespace test_names;
using cli::HugePagesRequested;
using cli::kHugePagesFromBytes;
using cli::LargestModelBytes;
using cli::RestartWithHugePages;
using cli::TunablesWithHugePages;

TEST(TunablesWithHugePages, AddsTheTunableToWhatIsThere) {
  EXPECT_EQ(TunablesWithHugePages(nullptr), "glibc.malloc.hugetlb=1");
  EXPECT_EQ(TunablesWithHugePages(""), "glibc.malloc.hugetlb=1");
  EXPECT_EQ(TunablesWithHugePages("glibc.malloc.arena_max=2"), "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1");
}

TEST(TunablesWithHugePages, LeavesAUsersOwnChoiceAlone) {
  EXPECT_EQ(TunablesWithHugePages("glibc.malloc.hugetlb=0"), "");
  EXPECT_EQ(TunablesWithHugePages("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=2"), "");
}

/// A fresh directory of the test's temporary directory, removed with the object.
struct TempTree {
  std::filesystem::path root;
  explicit TempTree(const std::string& name) : root(std::filesystem::path(::testing::TempDir()) / name) {
    std::filesystem::remove_all(root);
    std::filesystem::create_directories(root);
  }
  ~TempTree() { std::filesystem::remove_all(root); }
  std::string Write(const std::string& relative, size_t bytes) const {
    const std::filesystem::path path = root / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << std::string(bytes, 'x');
    return path.string();
  }
};

TEST(LargestModelBytes, TheLargestRegularFileNamedAndNotTheProgram) {
  const TempTree tree("huge_pages_files");
  const std::string small = tree.Write("small.onnx", 1000), big = tree.Write("big.onnx", 3000);
  std::string program = tree.Write("program", 9000), option = "-o", missing = (tree.root / "none.onnx").string();
  char* argv[] = {
      program.data(), option.data(), const_cast<char*>(small.c_str()), missing.data(), const_cast<char*>(big.c_str()),
      nullptr};
  EXPECT_EQ(LargestModelBytes(5, argv, 1u << 20), 3000u);
  EXPECT_EQ(LargestModelBytes(3, argv, 1u << 20), 1000u);
  EXPECT_EQ(LargestModelBytes(1, argv, 1u << 20), 0u);
}

TEST(LargestModelBytes, TheModelsBelowADirectoryAsDiscoveryFindsThem) {
  const TempTree tree("huge_pages_tree");
  tree.Write("a.onnx", 1000);
  tree.Write("deep/er/b.onnx", 2000);
  tree.Write("notes.txt", 50000);     // not a model: discovery skips it
  tree.Write("c.onnx.bak", 40000);    // nor this
  tree.Write("dir.onnx/d.txt", 100);  // a directory named like a model
  std::string program = "rnnstate", folder = tree.root.string();
  char* argv[] = {program.data(), folder.data(), nullptr};
  EXPECT_EQ(LargestModelBytes(2, argv, 1u << 20), 2000u);
}

TEST(LargestModelBytes, StopsAtTheFirstLargeEnough) {
  const TempTree tree("huge_pages_enough");
  std::string big = tree.Write("big.onnx", 3000);
  tree.Write("later/bigger.onnx", 5000);
  std::string program = "rnnstate", later = (tree.root / "later").string();
  char* argv[] = {program.data(), big.data(), later.data(), nullptr};
  EXPECT_EQ(LargestModelBytes(3, argv, 1u << 20), 5000u);
  EXPECT_EQ(LargestModelBytes(3, argv, 2000), 3000u);  // the directory after it is not walked
}

TEST(HugePagesRequested, OnlyASetNonEmptyValueOtherThanZero) {
  EXPECT_FALSE(HugePagesRequested(nullptr));
  EXPECT_FALSE(HugePagesRequested(""));
  EXPECT_FALSE(HugePagesRequested("0"));
  EXPECT_TRUE(HugePagesRequested("1"));
  EXPECT_TRUE(HugePagesRequested("yes"));
  EXPECT_TRUE(HugePagesRequested("00"));
}

// Each case returns (a restart would replace this test binary) and leaves the environment as it was.
TEST(RestartWithHugePages, ReturnsUnlessAskedOrWhenTheTunableIsSetOrTheUserOptsOut) {
  // A file large enough to restart for: only the cases below keep it from happening.
  const std::filesystem::path file = std::filesystem::path(::testing::TempDir()) / "huge_pages_big.onnx";
  std::ofstream(file) << std::string(kHugePagesFromBytes, 'z');
  char name[] = "rnnstate_unit_tests";
  std::string path = file.string();
  char* argv[] = {name, path.data(), nullptr};
  {
    // Not asked for: the default.
    const ScopedEnv tunables("GLIBC_TUNABLES", std::nullopt);
    for (const std::optional<std::string>& value :
         {std::optional<std::string>(), std::optional<std::string>("0"), std::optional<std::string>("")}) {
      const ScopedEnv asked("RNNSTATE_HUGE_PAGES", value);
      RestartWithHugePages(2, argv);
      EXPECT_EQ(std::getenv("GLIBC_TUNABLES"), nullptr);
    }
  }
  const ScopedEnv asked("RNNSTATE_HUGE_PAGES", "1");  // from here on: asked for
  {
    const ScopedEnv tunables("GLIBC_TUNABLES", "glibc.malloc.hugetlb=0");
    RestartWithHugePages(2, argv);
    EXPECT_STREQ(std::getenv("GLIBC_TUNABLES"), "glibc.malloc.hugetlb=0");
  }
  {
    const ScopedEnv tunables("GLIBC_TUNABLES", std::nullopt);
    const ScopedEnv opt_out("RNNSTATE_NO_HUGE_PAGES", "1");
    RestartWithHugePages(2, argv);
    EXPECT_EQ(std::getenv("GLIBC_TUNABLES"), nullptr);
  }
  {
    const ScopedEnv tunables("GLIBC_TUNABLES", std::nullopt);
    const ScopedEnv valgrind("LD_PRELOAD", "/usr/libexec/valgrind/vgpreload_core-amd64-linux.so");
    RestartWithHugePages(2, argv);
    EXPECT_EQ(std::getenv("GLIBC_TUNABLES"), nullptr);
  }
  {
    const ScopedEnv tunables("GLIBC_TUNABLES", std::nullopt);
    RestartWithHugePages(1, argv);  // no file named: nothing to gain
    EXPECT_EQ(std::getenv("GLIBC_TUNABLES"), nullptr);
  }
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace rnnstate::huge_pages_test
