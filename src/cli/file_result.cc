#include "cli/file_result.h"

#include <algorithm>
#include <cmath>

#include "rnnstate/error.h"

namespace rnnstate {

FileResult ProcessGuarded(const std::string& path, const std::function<void(FileResult&)>& body) {
  FileResult result;
  result.path = path;
  auto fail = [&](ExitCode code, const std::string& message) {
    result.status = kStatusError;
    result.exit_code = static_cast<int>(code);
    result.error = message;
    result.text.clear();
    result.changed = false;
    result.states.clear();  // a failed file records no states (none were written)
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

}  // namespace rnnstate
