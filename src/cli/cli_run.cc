// What each subcommand does once its options are parsed: runs the library over the files, prints each
// file's result in input order (stdout) and its diagnostics (stderr), and returns the exit code.

#include "cli/cli_run.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <functional>
#include <iostream>

#include "cli/batch.h"
#include "cli/file_discovery.h"
#include "cli/node_verify.h"
#include "io/model_io.h"
#include "cli/commands.h"
#include "rnnstate/error.h"

namespace rnnstate::cli {

void SetUpLogging(bool quiet) {
  auto logger = spdlog::stderr_color_st("rnnstate");
  logger->set_pattern("rnnstate: %l: %v");
  logger->set_level(quiet ? spdlog::level::err : spdlog::level::info);
  spdlog::set_default_logger(logger);
}

namespace {

bool IsDirectory(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

/// One path argument naming a file (not a directory): today's single-file forms (-o, one JSON report).
bool IsSingleFile(const FilesArgs& args) { return args.paths.size() == 1 && !IsDirectory(args.paths[0]); }

rnnstate::PlanOptions MakePlanOptions(const RewriteArgs& args) {
  rnnstate::PlanOptions options;
  options.mode = args.mode == "required" ? rnnstate::StateInputMode::kRequired : rnnstate::StateInputMode::kDefaults;
  options.input_template = args.input_names;
  options.output_template = args.output_names;
  options.streamable_only = args.streamable_only;
  options.pack = args.pack == "tensor"     ? rnnstate::PackKind::kTensor
                 : args.pack == "sequence" ? rnnstate::PackKind::kSequence
                                           : rnnstate::PackKind::kNone;
  options.layout = args.layout == "batch-first" ? rnnstate::StateLayout::kBatchFirst : rnnstate::StateLayout::kAsNode;
  options.packed_input = args.packed_input;
  options.packed_output = args.packed_output;
  options.packed_input_given = args.packed_input_given;
  options.packed_output_given = args.packed_output_given;
  if (options.packed_input.empty() || options.packed_output.empty() || options.packed_input == options.packed_output) {
    throw Error(ExitCode::kUsage, "--packed-input and --packed-output must be two different, non-empty names");
  }
  for (const std::string& axis : args.time_axes) options.time_axes.push_back(rnnstate::ParseTimeAxis(axis));
  for (const std::string& context : args.input_contexts) {
    options.input_contexts.push_back(rnnstate::ParseInputContext(context));
  }
  options.conv_context = !args.no_conv_context;
  options.lookahead = args.lookahead;
  if (!args.nodes.empty()) options.node_filter = rnnstate::NodePattern(args.nodes);
  return options;
}

/// How results go to stdout.
enum class Printing {
  kText,        ///< each file's text
  kJsonLines,   ///< one record per file, then the summary record
  kSingleJson,  ///< `report --json` on one file: the report object alone
};

/// Runs `process(i)` for each of `inputs` (on worker threads) and prints each result in input order;
/// returns the batch exit code.
int RunFiles(const std::vector<InputFile>& inputs, const FilesArgs& args, Printing printing, bool quiet,
             const std::function<FileResult(size_t)>& process) {
  std::vector<std::string> labels;
  for (const auto& input : inputs) labels.push_back(input.path);
  rnnstate::BatchOptions options;
  options.jobs = args.jobs > 0 ? args.jobs : rnnstate::DefaultJobs();
  options.fail_fast = args.fail_fast;
  options.progress = inputs.size() > 1 && !quiet && rnnstate::StderrIsTerminal();
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
  rnnstate::BatchSummary summary = rnnstate::RunBatch(labels, options, work, emit);
  if (printing == Printing::kJsonLines) std::cout << rnnstate::DumpJson(rnnstate::SummaryJson(summary)) << "\n";
  if (printing == Printing::kText && inputs.size() > 1 && !quiet) {
    std::cerr << "rnnstate: " << rnnstate::SummaryText(summary) << "\n";
  }
  return summary.exit_code;
}

/// Where outputs go, from -o / --in-place / --out-dir (at most one of them).
rnnstate::OutputMode ChooseOutputMode(const RewriteArgs& args) {
  int chosen = !args.output.empty() + args.in_place + !args.out_dir.empty();
  if (chosen > 1) throw Error(ExitCode::kUsage, "use only one of -o, --in-place and --out-dir");
  if (!args.output.empty() && !IsSingleFile(args.files)) {
    throw Error(ExitCode::kUsage, "-o takes exactly one input file; use --out-dir (or the default suffix) for several");
  }
  if (!args.output.empty()) return rnnstate::OutputMode::kExplicit;
  if (args.in_place) return rnnstate::OutputMode::kInPlace;
  if (!args.out_dir.empty()) return rnnstate::OutputMode::kOutDir;
  return rnnstate::OutputMode::kSuffix;
}

}  // namespace

int RunRewrite(const RewriteArgs& args, bool quiet) {
  rnnstate::OutputMode mode = ChooseOutputMode(args);
  rnnstate::RewriteSettings settings;
  settings.plan = MakePlanOptions(args);
  settings.strict = args.strict;
  settings.dry_run = args.dry_run;
  settings.in_place = args.in_place;
  settings.create_directories = mode == rnnstate::OutputMode::kOutDir;
  rnnstate::DiscoveryOptions discovery;
  // Re-runs over a directory must not take earlier outputs for inputs.
  if (mode == rnnstate::OutputMode::kSuffix) discovery.skip_suffix = rnnstate::kStreamingSuffix;
  discovery.skip_directory = args.out_dir;
  std::vector<InputFile> inputs = rnnstate::FindModelFiles(args.files.paths, discovery);
  settings.label_lines = inputs.size() > 1;
  // Outputs are flushed to disk when they replace the user's original (--in-place) or when asked to.
  // A new output, like one from cp or onnx.save, is left to the kernel: a crash can lose it, never the
  // input. One fsync per file costs more than the rewrite of a small model: a batch is flushed once at
  // the end.
  const bool sync = args.in_place ? !args.no_fsync : args.fsync;
  settings.defer_sync = (inputs.size() > 1 || !sync) && !args.dry_run;
  std::vector<std::string> outputs;
  for (const auto& input : inputs) {
    outputs.push_back(
        rnnstate::OutputPathFor(input, mode, mode == rnnstate::OutputMode::kOutDir ? args.out_dir : args.output));
  }
  std::string conflict = rnnstate::OutputConflict(inputs, outputs, args.in_place);
  if (!conflict.empty()) throw Error(ExitCode::kUsage, conflict);
  Printing printing = args.files.json ? Printing::kJsonLines : Printing::kText;
  int code = RunFiles(inputs, args.files, printing, quiet,
                      [&](size_t i) { return rnnstate::RewriteFile(inputs[i].path, outputs[i], settings); });
  if (settings.defer_sync && sync) rnnstate::SyncOutputs(outputs);
  return code;
}

int RunReport(const ReportArgs& args, bool quiet) {
  std::string format_name = args.format;
  if (args.files.json) {
    if (args.format_given && format_name != "json") {
      throw Error(ExitCode::kUsage, "--json conflicts with --format " + format_name);
    }
    format_name = "json";
  }
  rnnstate::ReportFormat format = format_name == "json"  ? rnnstate::ReportFormat::kJson
                                  : format_name == "dot" ? rnnstate::ReportFormat::kDot
                                                         : rnnstate::ReportFormat::kText;
  Printing printing = Printing::kText;
  if (format == rnnstate::ReportFormat::kJson) {
    printing = IsSingleFile(args.files) ? Printing::kSingleJson : Printing::kJsonLines;
  }
  std::vector<InputFile> inputs = rnnstate::FindModelFiles(args.files.paths, {});
  return RunFiles(inputs, args.files, printing, quiet, [&](size_t i) {
    FileResult result = rnnstate::ReportFile(inputs[i].path, format);
    // Text reports of several files are separated by a blank line.
    if (format == rnnstate::ReportFormat::kText && i > 0) result.text.insert(0, "\n");
    return result;
  });
}

int RunCheck(const CheckArgs& args, bool quiet) {
  std::vector<InputFile> inputs = rnnstate::FindModelFiles(args.files.paths, {});
  Printing printing = args.files.json ? Printing::kJsonLines : Printing::kText;
  return RunFiles(inputs, args.files, printing, quiet,
                  [&](size_t i) { return rnnstate::CheckFile(inputs[i].path, args.streamable_only); });
}

int RunInit(const InitArgs& args, bool quiet) {
  rnnstate::InitSettings settings;
  settings.batch = args.batch;
  for (const std::string& dim : args.dims) {
    const size_t equals = dim.find('=');
    int64_t value = -1;
    try {
      if (equals != std::string::npos && equals > 0) value = std::stoll(dim.substr(equals + 1));
    } catch (const std::exception&) {
    }
    if (value < 0) throw Error(ExitCode::kUsage, "--dim '" + dim + "': expected NAME=VALUE with VALUE >= 0");
    settings.dims[dim.substr(0, equals)] = value;
  }
  std::vector<InputFile> inputs = rnnstate::FindModelFiles(args.files.paths, {});
  Printing printing = args.files.json ? Printing::kJsonLines : Printing::kText;
  return RunFiles(inputs, args.files, printing, quiet,
                  [&](size_t i) { return rnnstate::InitFile(inputs[i].path, settings); });
}

int RunExport(const ExportArgs& args, bool quiet) {
  if (IsDirectory(args.model)) throw Error(ExitCode::kUsage, "export takes one model file, not a directory");
  if (args.json && args.target != "openvino") throw Error(ExitCode::kUsage, "--json is for export openvino");
  if (args.target != "triton" && (!args.repository.empty() || !args.name.empty())) {
    throw Error(ExitCode::kUsage, "-o and --name are for export triton");
  }
  if (args.name.find('/') != std::string::npos || args.name == "." || args.name == "..") {
    throw Error(ExitCode::kUsage, "--name '" + args.name + "' is not a directory name");
  }
  rnnstate::ExportSettings settings;
  settings.target = args.target == "triton" ? rnnstate::ExportTarget::kTriton : rnnstate::ExportTarget::kOpenVino;
  settings.json = args.json;
  settings.repository = args.repository;
  settings.name = args.name;
  settings.max_batch_size = args.max_batch_size;
  FilesArgs files;
  files.paths = {args.model};
  std::vector<InputFile> inputs = rnnstate::FindModelFiles(files.paths, {});
  return RunFiles(inputs, files, Printing::kText, quiet,
                  [&](size_t i) { return rnnstate::ExportFile(inputs[i].path, settings); });
}

int RunVerify(const VerifyArgs& args, bool) {
  std::error_code error;
  const std::filesystem::path executable = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) throw Error(ExitCode::kInternal, "cannot tell where this binary is: " + error.message());
  return rnnstate::RunNodeVerify(rnnstate::FindVerifyScript(executable), args.arguments);
}

}  // namespace rnnstate::cli
