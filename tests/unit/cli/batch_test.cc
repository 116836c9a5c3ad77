// Running a command over many files: work on worker threads, results emitted on the calling thread in
// input order whatever order they finish in, a failing file counted, --fail-fast starting no new file.

#include "cli/batch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "test_names.h"

namespace rnnstate::batch_test {
namespace {

using namespace test_names;

/// Labels "f0", "f1", ... for `count` files.
std::vector<std::string> Labels(size_t count) {
  std::vector<std::string> labels;
  for (size_t i = 0; i < count; ++i) labels.push_back("f" + std::to_string(i));
  return labels;
}

/// A result for file `i`: exit code 3 when `i` is in `failing`.
FileResult ResultOf(size_t i, const std::vector<size_t>& failing = {}) {
  FileResult result;
  result.path = "f" + std::to_string(i);
  if (std::find(failing.begin(), failing.end(), i) != failing.end()) {
    result.status = kStatusError;
    result.exit_code = 3;
  }
  return result;
}

/// Runs a batch of `count` files and returns the paths emitted, in order, and the summary.
struct Emitted {
  std::vector<std::string> paths;
  BatchSummary summary;
};
Emitted Batch(size_t count, const BatchOptions& options, const std::function<FileResult(size_t)>& work) {
  Emitted emitted;
  const std::thread::id caller = std::this_thread::get_id();
  emitted.summary = RunBatch(Labels(count), options, work, [&](const FileResult& result) {
    EXPECT_EQ(std::this_thread::get_id(), caller) << "emitted on a worker thread";
    emitted.paths.push_back(result.path);
  });
  return emitted;
}

TEST(DefaultJobs, IsTheNumberOfHardwareThreadsAndAtLeastOne) {
  EXPECT_GE(DefaultJobs(), 1);
  if (std::thread::hardware_concurrency() > 0) {
    EXPECT_EQ(DefaultJobs(), static_cast<int>(std::thread::hardware_concurrency()));
  }
}

TEST(StderrIsTerminal, IsFalseWhenStderrIsAFile) {
  ::testing::internal::CaptureStderr();  // stderr redirected to a temporary file
  const bool terminal = StderrIsTerminal();
  ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(terminal);
}

TEST(RunBatch, EmitsInInputOrderWhenLaterFilesFinishFirst) {
  BatchOptions options;
  options.jobs = 3;
  // The first files take longest, so that the workers finish them last.
  const Emitted emitted = Batch(6, options, [](size_t i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5 * (6 - i)));
    return ResultOf(i);
  });
  EXPECT_THAT(emitted.paths, ElementsAre("f0", "f1", "f2", "f3", "f4", "f5"));
  EXPECT_EQ(emitted.summary.files, 6u);
  EXPECT_EQ(emitted.summary.ok, 6u);
  EXPECT_EQ(emitted.summary.exit_code, 0);
}

TEST(RunBatch, AFailingFileNeverStopsTheOthersAndSetsTheExitCode) {
  for (int jobs : {1, 4}) {
    BatchOptions options;
    options.jobs = jobs;
    const Emitted emitted = Batch(5, options, [](size_t i) { return ResultOf(i, {1}); });
    EXPECT_THAT(emitted.paths, SizeIs(5)) << jobs << " jobs";
    EXPECT_EQ(emitted.summary.ok, 4u) << jobs << " jobs";
    EXPECT_EQ(emitted.summary.failed, 1u) << jobs << " jobs";
    EXPECT_EQ(emitted.summary.not_run, 0u) << jobs << " jobs";
    EXPECT_EQ(emitted.summary.exit_code, 3) << jobs << " jobs";
  }
}

TEST(RunBatch, FailFastWithOneJobStartsNothingAfterTheFirstFailure) {
  BatchOptions options;
  options.fail_fast = true;
  std::vector<size_t> started;
  const Emitted emitted = Batch(5, options, [&](size_t i) {
    started.push_back(i);
    return ResultOf(i, {1, 3});
  });
  EXPECT_THAT(started, ElementsAre(0, 1));
  EXPECT_THAT(emitted.paths, ElementsAre("f0", "f1"));
  EXPECT_EQ(emitted.summary.files, 5u);
  EXPECT_EQ(emitted.summary.not_run, 3u);
  EXPECT_EQ(emitted.summary.failed, 1u);
  EXPECT_EQ(emitted.summary.exit_code, 3);
}

TEST(RunBatch, FailFastWithSeveralJobsEmitsAnUnbrokenPrefixAndCountsTheRestNotRun) {
  BatchOptions options;
  options.jobs = 2;
  options.fail_fast = true;
  // File 0 fails at once while the other worker is busy with slow files: few of the ten are started.
  const Emitted emitted = Batch(10, options, [](size_t i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(30));
    return ResultOf(i, {0});
  });
  EXPECT_EQ(emitted.summary.files, 10u);
  // At least one not run (without --fail-fast none is); how many depends on the scheduler, which a loaded
  // machine or a sanitizer build slows.
  EXPECT_GE(emitted.summary.not_run, 1u);
  EXPECT_EQ(emitted.paths.size() + emitted.summary.not_run, 10u);
  for (size_t i = 0; i < emitted.paths.size(); ++i) EXPECT_EQ(emitted.paths[i], "f" + std::to_string(i));
  EXPECT_EQ(emitted.summary.exit_code, 3);
}

TEST(RunBatch, MoreJobsThanFilesAndNoFilesAtAll) {
  BatchOptions options;
  options.jobs = 64;
  EXPECT_THAT(Batch(2, options, [](size_t i) { return ResultOf(i); }).paths, ElementsAre("f0", "f1"));
  const Emitted none = Batch(0, options, [](size_t i) { return ResultOf(i); });
  EXPECT_THAT(none.paths, IsEmpty());
  EXPECT_EQ(none.summary.files, 0u);
  EXPECT_EQ(none.summary.exit_code, 0);
}

}  // namespace
}  // namespace rnnstate::batch_test
