#include "rnnstate/batch.h"

#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>

#include "rnnstate/error.h"

namespace rnnstate {

namespace fs = std::filesystem;

namespace {

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Keys identifying a file however it was named (`a/../m.onnx` and `m.onnx`, a symlink and its
/// target), or the path itself when it cannot be resolved. Resolving a path costs a system call per
/// component, so each directory is resolved once and a file costs one lstat.
class FileKeys {
 public:
  std::string Key(const std::string& path) {
    fs::path file(path);
    fs::path name = file.filename();
    struct stat info {};
    bool is_link = lstat(path.c_str(), &info) == 0 && S_ISLNK(info.st_mode);
    if (is_link || name.empty() || name == "." || name == "..") return Resolve(file);
    fs::path parent = file.parent_path();
    auto [it, fresh] = directories_.try_emplace(parent.string());
    if (fresh) it->second = Resolve(parent.empty() ? fs::path(".") : parent);
    return (fs::path(it->second) / name).string();
  }

 private:
  static std::string Resolve(const fs::path& path) {
    std::error_code ec;
    fs::path resolved = fs::weakly_canonical(path, ec);
    return ec ? path.string() : resolved.string();
  }

  std::unordered_map<std::string, std::string> directories_;
};

bool IsSameDirectory(const fs::path& a, const std::string& b) {
  if (b.empty()) return false;
  std::error_code ec;
  return fs::equivalent(a, b, ec);
}

/// The `*.onnx` files below `directory`, relative to it, sorted; sets `error` when it cannot be read.
std::vector<std::string> WalkDirectory(const std::string& directory, const DiscoveryOptions& options,
                                       std::string* error) {
  std::vector<std::string> found;
  std::error_code ec;
  fs::recursive_directory_iterator it(directory, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code entry_ec;
    const fs::path& path = it->path();
    if (it->is_directory(entry_ec)) {
      if (IsSameDirectory(path, options.skip_directory)) it.disable_recursion_pending();
      continue;
    }
    std::string name = path.filename().string();
    if (!EndsWith(name, ".onnx") || !it->is_regular_file(entry_ec)) continue;
    if (!options.skip_suffix.empty() && EndsWith(name, options.skip_suffix)) continue;
    found.push_back(path.lexically_relative(directory).generic_string());
  }
  if (ec) *error = "cannot read directory: " + ec.message();
  std::sort(found.begin(), found.end());
  return found;
}

void AddDirectory(const std::string& argument, const DiscoveryOptions& options, std::vector<InputFile>& out) {
  std::string error;
  std::vector<std::string> found = WalkDirectory(argument, options, &error);
  if (error.empty() && found.empty()) error = "no *.onnx files in this directory";
  if (!error.empty()) {
    out.push_back(InputFile{argument, argument, "", error, ""});
    return;
  }
  for (const auto& relative : found) {
    out.push_back(InputFile{(fs::path(argument) / relative).string(), argument, relative, "", ""});
  }
}

}  // namespace

std::vector<InputFile> FindModelFiles(const std::vector<std::string>& arguments, const DiscoveryOptions& options) {
  std::vector<InputFile> expanded;
  for (const auto& argument : arguments) {
    std::error_code ec;
    if (fs::is_directory(argument, ec)) {
      AddDirectory(argument, options, expanded);
    } else {
      expanded.push_back(InputFile{argument, "", fs::path(argument).filename().string(), "", ""});
    }
  }
  std::vector<InputFile> unique;
  std::set<std::string> seen;
  FileKeys keys;
  for (auto& input : expanded) {
    if (input.error.empty()) {
      input.key = keys.Key(input.path);
      if (!seen.insert(input.key).second) continue;
    }
    unique.push_back(std::move(input));
  }
  return unique;
}

std::string SuffixOutputPath(const std::string& input) {
  std::string stem = input;
  const std::string extension = ".onnx";
  if (stem.size() > extension.size() && EndsWith(stem, extension)) stem.resize(stem.size() - extension.size());
  return stem + kStreamingSuffix;
}

std::string OutputPathFor(const InputFile& input, OutputMode mode, const std::string& target) {
  switch (mode) {
    case OutputMode::kSuffix:
      return SuffixOutputPath(input.path);
    case OutputMode::kOutDir:
      return (fs::path(target) / input.relative).string();
    case OutputMode::kInPlace:
      return input.path;
    case OutputMode::kExplicit:
      return target;
  }
  return target;
}

std::string OutputConflict(const std::vector<InputFile>& inputs, const std::vector<std::string>& outputs,
                           bool in_place) {
  std::map<std::string, size_t> input_at;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].error.empty()) input_at.emplace(inputs[i].key, i);
  }
  FileKeys keys;
  std::map<std::string, size_t> output_at;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].error.empty()) continue;
    std::string key = keys.Key(outputs[i]);
    auto [previous, fresh] = output_at.emplace(key, i);
    if (!fresh) {
      return "'" + outputs[i] + "' would be written twice (from '" + inputs[previous->second].path + "' and '" +
             inputs[i].path + "')";
    }
    auto input = input_at.find(key);
    if (input == input_at.end() || (in_place && input->second == i)) continue;
    if (input->second == i) return "the output of '" + inputs[i].path + "' would replace it (use --in-place)";
    return "the output of '" + inputs[i].path + "' would replace the input '" + inputs[input->second].path + "'";
  }
  return "";
}

FileResult ProcessGuarded(const std::string& path, const std::function<void(FileResult&)>& body) {
  FileResult result;
  result.path = path;
  auto fail = [&](ExitCode code, const std::string& message) {
    result.status = kStatusError;
    result.exit_code = static_cast<int>(code);
    result.error = message;
    result.text.clear();
    result.changed = false;
  };
  try {
    body(result);
  } catch (const Error& e) {
    fail(e.code(), e.what());
  } catch (const std::exception& e) {
    fail(ExitCode::kInternal, std::string("internal error: ") + e.what());
  } catch (...) {
    fail(ExitCode::kInternal, "internal error");
  }
  return result;
}

FileResult DiscoveryErrorResult(const InputFile& input) {
  return ProcessGuarded(input.path, [&](FileResult&) { throw Error(ExitCode::kBadInput, input.error); });
}

namespace {

Json Milliseconds(double ms) { return Json(std::round(ms * 1000.0) / 1000.0); }

Json Strings(const std::vector<std::string>& items) {
  Json array = Json::array();
  for (const auto& item : items) array.push_back(item);
  return array;
}

}  // namespace

Json FileResultJson(const FileResult& result) {
  Json record = {{"path", result.path},
                 {"status", result.status},
                 {"output", result.output.empty() ? Json() : Json(result.output)},
                 {"states", StatePairsJson(result.states)}};
  for (const auto& [key, value] : result.details.items()) record[key] = value;
  record["warnings"] = Strings(result.warnings);
  record["timings"] = {{"load_ms", Milliseconds(result.timings.load_ms)},
                       {"process_ms", Milliseconds(result.timings.process_ms)},
                       {"write_ms", Milliseconds(result.timings.write_ms)}};
  record["error"] = result.error.empty() ? Json() : Json(result.error);
  record["exit_code"] = result.exit_code;
  return record;
}

void BatchSummary::Add(const FileResult& result) {
  ++files;
  if (result.exit_code == 0)
    ++ok;
  else
    ++failed;
  if (result.changed) ++changed;
  // The highest code is the most severe one: 1 (check failed) < 3..6 (the file could not be processed).
  exit_code = std::max(exit_code, result.exit_code);
}

Json SummaryJson(const BatchSummary& summary) {
  return {{"summary", true},          {"files", summary.files},     {"ok", summary.ok},
          {"failed", summary.failed}, {"changed", summary.changed}, {"not_run", summary.not_run},
          {"exit_code", summary.exit_code}};
}

std::string SummaryText(const BatchSummary& summary) {
  std::string text = std::to_string(summary.files) + " file" + (summary.files == 1 ? "" : "s") + ": " +
                     std::to_string(summary.ok) + " ok, " + std::to_string(summary.failed) + " failed";
  if (summary.changed) text += ", " + std::to_string(summary.changed) + " changed";
  if (summary.not_run) text += ", " + std::to_string(summary.not_run) + " not run (--fail-fast)";
  return text + " (exit " + std::to_string(summary.exit_code) + ")";
}

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

}  // namespace

BatchSummary RunBatch(const std::vector<std::string>& labels, const BatchOptions& options,
                      const std::function<FileResult(size_t)>& work,
                      const std::function<void(const FileResult&)>& emit) {
  SharedQueue queue;
  queue.results.resize(labels.size());
  size_t workers = std::min<size_t>(std::max(options.jobs, 1), labels.size());
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
