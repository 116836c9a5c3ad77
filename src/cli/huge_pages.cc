#include "cli/huge_pages.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "cli/file_discovery.h"

namespace rnnstate::cli {

namespace {

namespace fs = std::filesystem;

constexpr char kTunable[] = "glibc.malloc.hugetlb";

/// Whether valgrind runs this process: its tools preload their own libraries (vgpreload_*.so).
bool UnderValgrind() {
  const char* preload = std::getenv("LD_PRELOAD");
  return preload != nullptr && std::strstr(preload, "vgpreload") != nullptr;
}

}  // namespace

std::uintmax_t LargestModelBytes(int argc, char** argv, std::uintmax_t enough) {
  std::uintmax_t largest = 0;
  auto see = [&](const fs::directory_entry& file) {
    std::error_code error;
    if (!file.is_regular_file(error)) return;
    const std::uintmax_t size = file.file_size(error);
    if (!error) largest = std::max(largest, size);
  };
  for (int i = 1; i < argc && largest < enough; ++i) {
    std::error_code error;
    const fs::directory_entry named(argv[i], error);
    if (error) continue;
    if (!named.is_directory(error)) {
      see(named);
      continue;
    }
    fs::recursive_directory_iterator it(named.path(), fs::directory_options::skip_permission_denied, error);
    for (; !error && it != fs::recursive_directory_iterator() && largest < enough; it.increment(error)) {
      if (IsModelFileName(it->path().native())) see(*it);
    }
  }
  return largest;
}

std::string TunablesWithHugePages(const char* current) {
  if (current == nullptr || *current == '\0') return std::string(kTunable) + "=1";
  if (std::strstr(current, kTunable) != nullptr) return "";
  return std::string(current) + ":" + kTunable + "=1";
}

bool HugePagesRequested(const char* value) {
  return value != nullptr && *value != '\0' && std::strcmp(value, "0") != 0;
}

void RestartWithHugePages(int argc, char** argv) {
  if (!HugePagesRequested(std::getenv("RNNSTATE_HUGE_PAGES")) || std::getenv("RNNSTATE_NO_HUGE_PAGES") != nullptr ||
      UnderValgrind()) {
    return;
  }
  const char* current = std::getenv("GLIBC_TUNABLES");
  const std::string tunables = TunablesWithHugePages(current);
  // The environment first: the restarted process, which finds its tunable set, looks at no file.
  if (tunables.empty() || LargestModelBytes(argc, argv, kHugePagesFromBytes) < kHugePagesFromBytes) return;
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
