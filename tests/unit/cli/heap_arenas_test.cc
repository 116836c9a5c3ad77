// cli/heap_arenas: how many malloc heaps threads get with and without the limit, counted by glibc's
// malloc_info in a process of their own (glibc fixes the limit at the first allocation of a thread other
// than the main one, which this test binary made long before: each case re-executes it, death-test style).

#include "cli/heap_arenas.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "test_names.h"

namespace rnnstate::heap_arenas_test {
namespace {

using namespace test_names;
using cli::ArenasChosenBy;
using cli::LimitHeapArenas;

/// How many heaps malloc has after `threads` threads each allocated while all were alive (a heap freed
/// by a thread that ended is given to the next thread: they must overlap to need one each).
int HeapsAfterThreads(int threads) {
  std::mutex mutex;
  std::condition_variable all_allocated;
  int allocated = 0;
  std::vector<std::thread> started;
  for (int i = 0; i < threads; ++i) {
    started.emplace_back([&] {
      void* block = std::malloc(1 << 16);
      std::unique_lock<std::mutex> lock(mutex);
      ++allocated;
      all_allocated.notify_all();
      all_allocated.wait(lock, [&] { return allocated == threads; });
      std::free(block);
    });
  }
  for (auto& thread : started) thread.join();
  char* text = nullptr;
  size_t size = 0;
  FILE* out = open_memstream(&text, &size);
  malloc_info(0, out);
  std::fclose(out);
  int heaps = 0;
  for (std::string info(text, size); info.find("<heap nr=") != std::string::npos;) {
    info.erase(0, info.find("<heap nr=") + 1);
    ++heaps;
  }
  std::free(text);
  return heaps;
}

#if defined(__SANITIZE_ADDRESS__)
#define SKIP_UNDER_SANITIZERS() GTEST_SKIP() << "the sanitizers' allocator is not glibc's"
#else
#define SKIP_UNDER_SANITIZERS() (void)0
#endif

/// Exits 0 when `heaps` is what HeapsAfterThreads(3) counts, else 1 (and says what it counted).
[[noreturn]] void ExitUnlessHeaps(int heaps) {
  const int counted = HeapsAfterThreads(3);
  if (counted != heaps) std::fprintf(stderr, "heaps: %d\n", counted);
  std::exit(counted == heaps ? 0 : 1);
}

class LimitHeapArenasDeathTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(LimitHeapArenasDeathTest, WithoutTheLimitEachThreadTakesAHeapOfItsOwn) {
  SKIP_UNDER_SANITIZERS();
  unsetenv("MALLOC_ARENA_MAX");
  EXPECT_EXIT(ExitUnlessHeaps(4), ::testing::ExitedWithCode(0), "");
}

TEST_F(LimitHeapArenasDeathTest, OneWorkersHelperThreadsShareTheMainThreadsHeap) {
  SKIP_UNDER_SANITIZERS();
  EXPECT_EXIT(
      {
        unsetenv("MALLOC_ARENA_MAX");
        unsetenv("GLIBC_TUNABLES");
        LimitHeapArenas(1);
        ExitUnlessHeaps(1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(LimitHeapArenasDeathTest, NoWorkersIsOneHeapAndTwoWorkersTwo) {
  SKIP_UNDER_SANITIZERS();
  EXPECT_EXIT(
      {
        unsetenv("MALLOC_ARENA_MAX");
        unsetenv("GLIBC_TUNABLES");
        LimitHeapArenas(0);
        ExitUnlessHeaps(1);
      },
      ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(
      {
        unsetenv("MALLOC_ARENA_MAX");
        unsetenv("GLIBC_TUNABLES");
        LimitHeapArenas(2);
        ExitUnlessHeaps(2);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(LimitHeapArenasDeathTest, AUsersOwnChoiceStands) {
  SKIP_UNDER_SANITIZERS();
  EXPECT_EXIT(
      {
        setenv("MALLOC_ARENA_MAX", "8", 1);  // read by glibc at start-up only: here it is only seen
        LimitHeapArenas(1);
        ExitUnlessHeaps(4);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(ArenasChosenBy, EitherVariableNamingTheLimit) {
  EXPECT_FALSE(ArenasChosenBy(nullptr, nullptr));
  EXPECT_FALSE(ArenasChosenBy(nullptr, "glibc.malloc.hugetlb=1"));
  EXPECT_TRUE(ArenasChosenBy("2", nullptr));
  EXPECT_TRUE(ArenasChosenBy("", nullptr));
  EXPECT_TRUE(ArenasChosenBy(nullptr, "glibc.malloc.hugetlb=1:glibc.malloc.arena_max=4"));
}

}  // namespace
}  // namespace rnnstate::heap_arenas_test
