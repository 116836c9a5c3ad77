// What the commands over files share: their common options, and the run that prints each file's result in
// input order (stdout) and its diagnostics (stderr).

#include "cli/file_runs.h"

#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>

#include "cli/batch.h"

namespace rnnstate::cli {

void AddFilesOptions(CLI::App& command, FilesOptions& options) {
  command.add_option("paths", options.paths, "ONNX models, or directories searched recursively for *.onnx")
      ->required();
  command.add_option("-j,--jobs", options.jobs, "Files processed in parallel (default: number of cores)")
      ->check(CLI::Range(1, 1024));
  command.add_flag("--fail-fast", options.fail_fast, "Start no new file after one fails");
}

bool IsDirectory(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

bool IsSingleFile(const FilesOptions& options) {
  return options.paths.size() == 1 && !IsDirectory(options.paths[0]);
}

int RunFiles(const std::vector<InputFile>& inputs, const FilesOptions& options, Printing printing, bool quiet,
             const std::function<FileResult(size_t)>& process) {
  std::vector<std::string> labels;
  for (const auto& input : inputs) labels.push_back(input.path);
  rnnstate::BatchOptions batch;
  batch.jobs = options.jobs > 0 ? options.jobs : rnnstate::DefaultJobs();
  batch.fail_fast = options.fail_fast;
  batch.progress = inputs.size() > 1 && !quiet && rnnstate::StderrIsTerminal();
  auto work = [&](size_t i) {
    return inputs[i].error.empty() ? process(i) : rnnstate::DiscoveryErrorResult(inputs[i]);
  };
  auto emit = [&](const FileResult& result) {
    for (const auto& warning : result.warnings) spdlog::warn("{}: {}", result.path, warning);
    if (result.status == rnnstate::kStatusError) {
      std::cerr << "rnnstate: error: " << result.path << ": " << result.error << "\n";
    }
    if (printing == Printing::kJsonLines) std::cout << rnnstate::DumpJson(rnnstate::FileResultJson(result)) << "\n";
    if (printing == Printing::kText) std::cout << result.text;
    auto report = result.details.find("report");
    if (printing == Printing::kSingleJson && report != result.details.end() && !report->is_null()) {
      std::cout << rnnstate::DumpJson(*report) << "\n";
    }
    std::cout.flush();
  };
  rnnstate::BatchSummary summary = rnnstate::RunBatch(labels, batch, work, emit);
  if (printing == Printing::kJsonLines) std::cout << rnnstate::DumpJson(rnnstate::SummaryJson(summary)) << "\n";
  if (printing == Printing::kText && inputs.size() > 1 && !quiet) {
    std::cerr << "rnnstate: " << rnnstate::SummaryText(summary) << "\n";
  }
  return summary.exit_code;
}

}  // namespace rnnstate::cli
