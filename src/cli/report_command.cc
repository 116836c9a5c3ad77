// `rnnstate report`: its options, its run over the files and the report of one file through the façade
// (rnnstate/pipeline.h): text, JSON or DOT.

#include <CLI/CLI.hpp>

#include "cli/command.h"
#include "cli/file_runs.h"
#include "io/model_io.h"
#include "rnnstate/error.h"
#include "rnnstate/pipeline.h"

namespace rnnstate::cli {

namespace {

constexpr const char* kReportExamples = R"(
  rnnstate report model.onnx                  show each recurrent node and its state wiring
  rnnstate report model.onnx --json           the same as JSON (schema in docs/guide.md)
  rnnstate report model.onnx --format dot | dot -Tsvg > model.svg
                                              a picture of the state wiring)";

/// `report`'s options.
struct ReportOptions {
  FilesOptions files;
  std::string format = "text";
  bool format_given = false;  ///< --format was on the command line (it may conflict with --json)
};

void AddReportOptions(CLI::App& command, ReportOptions& report) {
  AddFilesOptions(command, report.files);
  command.add_option("--format", report.format, "text (a table), json (schema in docs/guide.md) or dot (Graphviz)")
      ->check(CLI::IsMember({"text", "json", "dot"}))
      ->each([&report](const std::string&) { report.format_given = true; });
  command.add_flag("--json", report.files.json, "Same as --format json");
}

/// Reports on `input`. `text` holds the table or the DOT source; for kJson, details["report"] holds the
/// report object. `states` are the pairs recorded in the model.
FileResult ReportFile(const std::string& input, ReportFormat format) {
  FileResult report = ProcessGuarded(input, [&](FileResult& result) {
    OpenedModel opened = Timed(&result.timings.load_ms, [&] { return OpenModel(input); });
    const onnx::ModelProto& model = opened.file.model();
    Timed(&result.timings.process_ms, [&] {
      Report reported = ReportModel(model, input, format, InlineTensors::kCheckedWhenOpened);
      result.states = std::move(reported.recorded);
      if (format == ReportFormat::kJson) {
        result.details["report"] = std::move(reported.json);
      } else {
        result.text = std::move(reported.text);
      }
    });
  });
  // Records of one command share their members: a failed file has "report": null.
  if (format == ReportFormat::kJson && !report.details.contains("report")) report.details["report"] = nullptr;
  return report;
}

int RunReport(const ReportOptions& report, bool quiet) {
  std::string format_name = report.format;
  if (report.files.json) {
    if (report.format_given && format_name != "json") {
      throw Error(ExitCode::kUsage, "--json conflicts with --format " + format_name);
    }
    format_name = "json";
  }
  ReportFormat format = format_name == "json"  ? ReportFormat::kJson
                        : format_name == "dot" ? ReportFormat::kDot
                                               : ReportFormat::kText;
  Printing printing = Printing::kText;
  if (format == ReportFormat::kJson) {
    printing = IsSingleFile(report.files) ? Printing::kSingleJson : Printing::kJsonLines;
  }
  std::vector<InputFile> inputs = FindModelFiles(report.files.paths, {});
  return RunFiles(inputs, report.files, printing, quiet, [&](size_t i) {
    FileResult result = ReportFile(inputs[i].path, format);
    // Text reports of several files are separated by a blank line.
    if (format == ReportFormat::kText && i > 0) result.text.insert(0, "\n");
    return result;
  });
}

}  // namespace

Command ReportCommand() {
  return {"report", "Show the recurrent nodes and their state wiring", kReportExamples,
          Declare<ReportOptions, AddReportOptions, RunReport>};
}

}  // namespace rnnstate::cli
