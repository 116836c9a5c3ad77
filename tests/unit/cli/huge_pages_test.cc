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
using cli::kHugePagesFromBytes;
using cli::NamedFileBytes;
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

TEST(NamedFileBytes, CountsTheRegularFilesOnlyAndNotTheProgram) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "huge_pages_test";
  std::filesystem::create_directories(dir);
  const std::string small = (dir / "small.onnx").string(), big = (dir / "big.onnx").string();
  std::ofstream(small) << std::string(1000, 'x');
  std::ofstream(big) << std::string(3000, 'y');
  std::string program = big, option = "-o", folder = dir.string(), missing = (dir / "none.onnx").string();
  char* argv[] = {program.data(), option.data(),  const_cast<char*>(small.c_str()),
                  folder.data(),  missing.data(), const_cast<char*>(big.c_str()),
                  nullptr};
  EXPECT_EQ(NamedFileBytes(6, argv), 4000u);
  EXPECT_EQ(NamedFileBytes(3, argv), 1000u);
  EXPECT_EQ(NamedFileBytes(1, argv), 0u);
  std::filesystem::remove_all(dir);
}

// Each case returns (a restart would replace this test binary) and leaves the environment as it was.
TEST(RestartWithHugePages, ReturnsWhenTheTunableIsSetOrTheUserOptsOut) {
  // A file large enough to restart for: only the cases below keep it from happening.
  const std::filesystem::path file = std::filesystem::path(::testing::TempDir()) / "huge_pages_big.onnx";
  std::ofstream(file) << std::string(kHugePagesFromBytes, 'z');
  char name[] = "rnnstate_unit_tests";
  std::string path = file.string();
  char* argv[] = {name, path.data(), nullptr};
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
