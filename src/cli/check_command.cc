// `rnnstate check`: its options, its run over the files and the check of one file through the façade
// (rnnstate/pipeline.h): the CI gate.

#include <CLI/CLI.hpp>

#include "cli/command.h"
#include "cli/file_runs.h"
#include "io/model_io.h"
#include "rnnstate/error.h"
#include "rnnstate/pipeline.h"

namespace rnnstate::cli {

namespace {

constexpr const char* kCheckExamples = R"(
  rnnstate check zoo/ --json                  CI gate: exit 1 unless every state is exposed and recorded)";

/// `check`'s options.
struct CheckCommandOptions {
  FilesOptions files;
  CheckOptions check;  ///< how a model is judged (pipeline.h), filled by the parser
};

void AddCheckOptions(CLI::App& command, CheckCommandOptions& options) {
  AddFilesOptions(command, options.files);
  command.add_flag("--json", options.files.json, "JSON Lines: one record per file, then a summary");
  command.add_flag("--streamable-only", options.check.streamable_only,
                   "Do not require states that cannot stream (reverse, bidirectional, sequence_lens) to be exposed");
}

/// Checks `input`: status failed with exit code kCheckFailed when there are problems; each is in
/// details["problems"] ({"kind", "message"}) and, as `PATH: message`, in `text`.
FileResult CheckFile(const std::string& input, const CheckOptions& options) {
  FileResult check = ProcessGuarded(input, [&](FileResult& result) {
    OpenedModel opened = Timed(&result.timings.load_ms, [&] { return OpenModel(input); });
    const onnx::ModelProto& model = opened.file.model();
    CheckResult checked = Timed(&result.timings.process_ms,
                                [&] { return CheckForStreaming(model, options, InlineTensors::kCheckedWhenOpened); });
    result.states = std::move(checked.recorded);
    result.warnings = WarningTexts(checked.warnings);
    const std::vector<CheckProblem>& problems = checked.problems;
    Json list = Json::array();
    for (const auto& problem : problems) {
      list.push_back({{"kind", CheckProblemKindName(problem.kind)}, {"message", problem.message}});
      result.text += input + ": " + problem.message + "\n";
    }
    result.details["problems"] = std::move(list);
    if (checked.unlisted_problems > 0) {
      result.text += input + ": ... and " + std::to_string(checked.unlisted_problems) + " more problems (the first " +
                     std::to_string(kMaxListedProblems) + " of each kind are listed)\n";
      result.details["unlisted_problems"] = checked.unlisted_problems;
    }
    if (problems.empty()) return;
    const size_t total = problems.size() + checked.unlisted_problems;
    result.status = kStatusFailed;
    result.exit_code = static_cast<int>(ExitCode::kCheckFailed);
    result.error = "check failed: " + std::to_string(total) + " problem" + (total == 1 ? "" : "s");
  });
  if (!check.details.contains("problems")) check.details["problems"] = Json::array();
  return check;
}

int RunCheck(const CheckCommandOptions& options, bool quiet) {
  std::vector<InputFile> inputs = FindModelFiles(options.files.paths, {});
  Printing printing = options.files.json ? Printing::kJsonLines : Printing::kText;
  return RunFiles(inputs, options.files, printing, quiet,
                  [&](size_t i) { return CheckFile(inputs[i].path, options.check); });
}

}  // namespace

Command CheckCommand() {
  return {"check", "CI gate: exit 1 when a recurrent state is not exposed or the rnnstate metadata is stale",
          kCheckExamples, Declare<CheckCommandOptions, AddCheckOptions, RunCheck>};
}

}  // namespace rnnstate::cli
