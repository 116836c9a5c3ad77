#pragma once
/// \file
/// What one command did with one file (FileResult), the per-file and summary JSON Lines records
/// (schema in docs/files.md), and the totals of a batch.

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "rnnstate/json.h"
#include "rnnstate/metadata.h"

namespace rnnstate {

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
  std::vector<StatePair> states;  ///< the state pairs of the result (see docs/metadata.md)
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

}  // namespace rnnstate
