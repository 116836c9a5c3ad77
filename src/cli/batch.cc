#include "cli/batch.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include "cli/heap_arenas.h"
#include "rnnstate/pipeline.h"

namespace rnnstate {

int DefaultJobs() { return std::max(1u, std::thread::hardware_concurrency()); }

bool StderrIsTerminal() { return ::isatty(STDERR_FILENO) == 1; }

namespace {

/// One status line on stderr, redrawn in place and cleared before anything else is printed.
class ProgressLine {
 public:
  explicit ProgressLine(bool enabled) : enabled_(enabled) {}

  void Show(size_t done, size_t total, const std::string& label) {
    if (!enabled_) return;
    std::string line = "[" + std::to_string(done) + "/" + std::to_string(total) + "] " + label;
    // A wrapped line cannot be erased with a carriage return: keep it within the terminal width.
    size_t width = TerminalWidth();
    if (line.size() >= width) line = line.substr(0, 3) + "..." + line.substr(line.size() - (width - 7));
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
    std::fflush(stderr);
    shown_ = true;
  }

  void Clear() {
    if (!shown_) return;
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    shown_ = false;
  }

 private:
  static size_t TerminalWidth() {
    winsize size{};
    if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 16) return size.ws_col;
    return 80;
  }

  bool enabled_;
  bool shown_ = false;
};

/// The state shared by the workers and the emitting thread.
struct SharedQueue {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::optional<FileResult>> results;
  size_t next = 0;      ///< next file to start
  size_t finished = 0;  ///< files finished
  bool stop = false;    ///< --fail-fast: start nothing more
};

void WorkerLoop(SharedQueue& queue, bool fail_fast, const std::function<FileResult(size_t)>& work) {
  while (true) {
    size_t index;
    {
      std::lock_guard<std::mutex> lock(queue.mutex);
      if (queue.stop || queue.next >= queue.results.size()) return;
      index = queue.next++;
    }
    FileResult result = work(index);
    {
      std::lock_guard<std::mutex> lock(queue.mutex);
      if (fail_fast && result.exit_code != 0) queue.stop = true;
      queue.results[index] = std::move(result);
      ++queue.finished;
    }
    queue.changed.notify_all();
  }
}

/// RunBatch with one worker: each file is processed on the calling thread, then emitted.
BatchSummary RunInline(const std::vector<std::string>& labels, const BatchOptions& options,
                       const std::function<FileResult(size_t)>& work,
                       const std::function<void(const FileResult&)>& emit) {
  BatchSummary summary;
  ProgressLine progress(options.progress);
  for (size_t i = 0; i < labels.size(); ++i) {
    progress.Show(i, labels.size(), labels[i]);
    FileResult result = work(i);
    progress.Clear();
    emit(result);
    summary.Add(result);
    if (options.fail_fast && result.exit_code != 0) break;
  }
  summary.not_run = labels.size() - summary.files;
  summary.files = labels.size();
  return summary;
}

}  // namespace

BatchSummary RunBatch(const std::vector<std::string>& labels, const BatchOptions& options,
                      const std::function<FileResult(size_t)>& work,
                      const std::function<void(const FileResult&)>& emit) {
  SharedQueue queue;
  queue.results.resize(labels.size());
  size_t workers = std::min<size_t>(std::max(options.jobs, 1), labels.size());
  // One worker works on this thread: glibc grows the heap of the main thread in large steps and that of
  // any other thread a page at a time, with a system call each (a tenth of the time of a big model).
  // One file, or -j 1: onnx registers its operator schemas at the first lookup, on this thread, so that
  // a file refused before its analysis (unreadable, not ONNX: most of the hostile inputs scripts feed)
  // does not pay for it: about two thirds of a small model's report, 44M of 67M instructions.
  cli::LimitHeapArenas(workers);
  if (workers <= 1) return RunInline(labels, options, work, emit);
  // Several threads: registered before they start (the workers only read the registry).
  PrepareForWorkers();
  std::vector<std::thread> threads;
  for (size_t i = 0; i < workers; ++i) {
    threads.emplace_back([&] { WorkerLoop(queue, options.fail_fast, work); });
  }

  BatchSummary summary;
  ProgressLine progress(options.progress);
  std::unique_lock<std::mutex> lock(queue.mutex);
  for (size_t emitted = 0; emitted < labels.size(); ++emitted) {
    // Files are started in order, so once stopped and idle every started file is finished.
    auto ready = [&] { return queue.results[emitted].has_value() || (queue.stop && queue.finished == queue.next); };
    while (!ready()) {
      progress.Show(queue.finished, labels.size(), labels[emitted]);
      queue.changed.wait(lock);
    }
    if (!queue.results[emitted]) break;
    FileResult result = std::move(*queue.results[emitted]);
    queue.results[emitted].reset();
    lock.unlock();
    progress.Clear();
    emit(result);
    summary.Add(result);
    // Also between results that are ready at once, so that a fast run still shows where it is.
    if (emitted + 1 < labels.size()) progress.Show(emitted + 1, labels.size(), labels[emitted + 1]);
    lock.lock();
  }
  lock.unlock();
  for (auto& thread : threads) thread.join();
  progress.Clear();
  summary.not_run = labels.size() - summary.files;
  summary.files = labels.size();
  return summary;
}

}  // namespace rnnstate
