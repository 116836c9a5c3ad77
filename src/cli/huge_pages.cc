#include "cli/huge_pages.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace rnnstate::cli {

namespace {

constexpr char kTunable[] = "glibc.malloc.hugetlb";

/// Whether valgrind runs this process: its tools preload their own libraries (vgpreload_*.so).
bool UnderValgrind() {
  const char* preload = std::getenv("LD_PRELOAD");
  return preload != nullptr && std::strstr(preload, "vgpreload") != nullptr;
}

}  // namespace

std::uintmax_t NamedFileBytes(int argc, char** argv) {
  std::uintmax_t total = 0;
  for (int i = 1; i < argc; ++i) {
    std::error_code error;
    if (!std::filesystem::is_regular_file(argv[i], error)) continue;
    const std::uintmax_t size = std::filesystem::file_size(argv[i], error);
    if (!error) total += size;
  }
  return total;
}

std::string TunablesWithHugePages(const char* current) {
  if (current == nullptr || *current == '\0') return std::string(kTunable) + "=1";
  if (std::strstr(current, kTunable) != nullptr) return "";
  return std::string(current) + ":" + kTunable + "=1";
}

void RestartWithHugePages(int argc, char** argv) {
  if (std::getenv("RNNSTATE_NO_HUGE_PAGES") != nullptr || UnderValgrind()) return;
  const char* current = std::getenv("GLIBC_TUNABLES");
  const std::string tunables = TunablesWithHugePages(current);
  // The environment first: the restarted process, which finds its tunable set, looks at no file.
  if (tunables.empty() || NamedFileBytes(argc, argv) < kHugePagesFromBytes) return;
  const std::string before = current == nullptr ? "" : current;
  if (setenv("GLIBC_TUNABLES", tunables.c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);
  // No /proc, or no exec allowed: go on with 4 KiB pages, the environment as it was.
  if (current == nullptr) {
    unsetenv("GLIBC_TUNABLES");
  } else {
    setenv("GLIBC_TUNABLES", before.c_str(), 1);
  }
}

}  // namespace rnnstate::cli
