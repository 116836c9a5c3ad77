#pragma once
/// \file
/// Running a command over many model files: finding the files (directories walked recursively), choosing
/// each output path, processing the files on worker threads while printing results in input order, and
/// the per-file and summary JSON Lines records (schema in README.md, "Many files").

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "rnnstate/json.h"
#include "rnnstate/metadata.h"

namespace rnnstate {

/// The file name suffix `rewrite` gives its outputs by default (`model.onnx` -> `model.streaming.onnx`).
inline constexpr const char* kStreamingSuffix = ".streaming.onnx";

/// One entry of the work list built from the path arguments.
struct InputFile {
  std::string path;      ///< the file to read (an argument, or joined from a directory argument)
  std::string root;      ///< the directory argument it was found under; "" for a file argument
  std::string relative;  ///< path below `root` (the file name for a file argument), for --out-dir
  /// Non-empty when this entry stands for an argument that yields no model (a directory without
  /// `*.onnx` files, an unreadable directory); `path` is then that argument.
  std::string error;
  /// Identifies the file however it was named (`a/../m.onnx`, a symlink); set by FindModelFiles.
  std::string key;
};

/// How directories are walked.
struct DiscoveryOptions {
  /// Files found in directories whose name ends with this are left out ("" keeps all); files named
  /// on the command line are always kept.
  std::string skip_suffix;
  /// A directory not to descend into (the --out-dir, so that re-runs do not read their own outputs).
  std::string skip_directory;
};

/// Expands path arguments in order: a directory yields its `*.onnx` files at any depth, sorted by their
/// path below it; any other argument is kept as it is (a missing file then fails when it is loaded).
/// A file reached twice is kept once, at its first position.
std::vector<InputFile> FindModelFiles(const std::vector<std::string>& arguments, const DiscoveryOptions& options);

/// Where `rewrite` writes each output.
enum class OutputMode {
  kSuffix,    ///< beside the input: `model.onnx` -> `model.streaming.onnx`
  kOutDir,    ///< under a directory, mirroring each input's path below its directory argument
  kInPlace,   ///< over the input
  kExplicit,  ///< one given path (-o; one input file only)
};

/// `model.onnx` -> `model.streaming.onnx` (any other name gets the suffix appended).
std::string SuffixOutputPath(const std::string& input);

/// The output path of `input` in `mode`; `target` is the --out-dir or the -o path.
std::string OutputPathFor(const InputFile& input, OutputMode mode, const std::string& target);

/// Why these outputs cannot be written in one run — an output written twice, or an output that is
/// another input or (outside in-place mode) its own input — or "" when they can. `outputs[i]` belongs
/// to `inputs[i]` (as returned by FindModelFiles, with their keys); entries with an error are ignored.
std::string OutputConflict(const std::vector<InputFile>& inputs, const std::vector<std::string>& outputs,
                           bool in_place);

/// Wall time of the stages of one file, in milliseconds.
struct Timings {
  double load_ms = 0;
  double process_ms = 0;
  double write_ms = 0;
};

/// Runs `body` and adds its wall time to `*ms` (also when it throws).
template <typename Body>
auto Timed(double* ms, Body&& body) {
  struct Add {
    double* ms;
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    ~Add() { *ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count(); }
  } add{ms};
  return body();
}

/// Per-file status values in results and JSON records.
inline constexpr const char* kStatusOk = "ok";                ///< done; for rewrite: changed and written
inline constexpr const char* kStatusUnchanged = "unchanged";  ///< rewrite: nothing to change
inline constexpr const char* kStatusFailed = "failed";        ///< check: the model has problems (exit 1)
inline constexpr const char* kStatusError = "error";          ///< the file could not be processed (3-6)

/// What one command did with one file.
struct FileResult {
  std::string path;
  std::string status = kStatusOk;
  int exit_code = 0;
  std::string output;             ///< written (--dry-run: planned) output path; "" when none
  std::vector<StatePair> states;  ///< the state pairs of the result (see README)
  Json details = Json::object();  ///< command-specific record members ("problems", "report")
  std::vector<std::string> warnings;
  Timings timings;
  std::string error;     ///< why the file failed, without the path; "" when it did not
  std::string text;      ///< what text output prints on stdout for this file
  bool changed = false;  ///< rewrite: the output differs from the input model
};

/// Runs `body` on a fresh result for `path`, turning any exception into an error result with its exit
/// code (an Error's own code; kInternal for anything else).
FileResult ProcessGuarded(const std::string& path, const std::function<void(FileResult&)>& body);

/// A result for an InputFile that carries an error (exit code kBadInput).
FileResult DiscoveryErrorResult(const InputFile& input);

/// The JSON Lines record of one file: {"path", "status", "output", "states", ...details, "warnings",
/// "timings", "error", "exit_code"}.
Json FileResultJson(const FileResult& result);

/// Totals of a batch.
struct BatchSummary {
  size_t files = 0;    ///< files in the work list
  size_t ok = 0;       ///< files with exit code 0
  size_t failed = 0;   ///< files with a non-zero exit code
  size_t changed = 0;  ///< rewrite: files whose output differs from the input
  size_t not_run = 0;  ///< files never started because of --fail-fast
  int exit_code = 0;   ///< the batch's exit code: the highest exit code of its files

  /// Counts one file's result.
  void Add(const FileResult& result);
};

/// The final JSON Lines record: {"summary": true, "files", "ok", "failed", "changed", "not_run", "exit_code"}.
Json SummaryJson(const BatchSummary& summary);

/// One line for humans: "5 files: 4 ok, 1 failed (exit 3)".
std::string SummaryText(const BatchSummary& summary);

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

/// Processes `labels.size()` files: `work(i)` runs on worker threads and must not throw (see
/// ProcessGuarded) nor print; `emit(result)` runs on the calling thread, in index order, as soon as
/// the results before it are emitted. With fail_fast, files not yet started when one fails are never
/// started (counted in not_run); files already running finish and are emitted.
BatchSummary RunBatch(const std::vector<std::string>& labels, const BatchOptions& options,
                      const std::function<FileResult(size_t)>& work,
                      const std::function<void(const FileResult&)>& emit);

}  // namespace rnnstate
