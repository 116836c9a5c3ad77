#pragma once
/// \file
/// Running a command over many model files: the files are processed on worker threads while results are
/// printed in input order (see file_discovery.h for the work list, file_result.h for the results).

#include <functional>
#include <string>
#include <vector>

#include "cli/file_result.h"

namespace rnnstate {

/// How a batch runs.
struct BatchOptions {
  int jobs = 1;            ///< worker threads (at most one per file)
  bool fail_fast = false;  ///< start no new file after one fails
  bool progress = false;   ///< draw a progress line on stderr (a terminal)
};

/// Number of hardware threads, at least 1 (the default for -j).
int DefaultJobs();

/// True when stderr is a terminal (progress display).
bool StderrIsTerminal();

/// Processes `labels.size()` files: `work(i)` runs on worker threads (on the calling thread when there
/// is only one worker: one file, or one job) and must not throw (see
/// ProcessGuarded) nor print; `emit(result)` runs on the calling thread, in index order, as soon as
/// the results before it are emitted. With fail_fast, files not yet started when one fails are never
/// started (counted in not_run); files already running finish and are emitted.
BatchSummary RunBatch(const std::vector<std::string>& labels, const BatchOptions& options,
                      const std::function<FileResult(size_t)>& work,
                      const std::function<void(const FileResult&)>& emit);

}  // namespace rnnstate
