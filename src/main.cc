// rnnstate: command-line entry. Parses options into plain structs, calls the library, prints results
// on stdout and diagnostics on stderr, and maps errors to the documented exit codes.

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <regex>
#include <thread>

#include "model_io.h"
#include "rnnstate/batch.h"
#include "rnnstate/commands.h"
#include "rnnstate/error.h"
#include "rnnstate/file_discovery.h"
#include "version.h"

namespace {

using rnnstate::Error;
using rnnstate::ExitCode;
using rnnstate::FileResult;
using rnnstate::InputFile;

/// Options every command over files has.
struct FilesArgs {
  std::vector<std::string> paths;
  int jobs = 0;  ///< 0: one per core
  bool fail_fast = false;
  bool json = false;
};

struct RewriteArgs {
  FilesArgs files;
  std::string output;
  std::string out_dir;
  bool in_place = false;
  bool dry_run = false;
  bool strict = false;
  bool fsync = false;
  bool no_fsync = false;
  std::string mode = "defaults";
  std::string nodes;
  std::string input_names = "{node}.{kind}_in";
  std::string output_names = "{node}.{kind}_out";
  bool streamable_only = false;
  std::string pack = "none";
  std::string layout = "node";
  std::string packed_input;  // "": not given (state_in)
  std::string packed_output;
  std::vector<std::string> time_axes;
};

struct ReportArgs {
  FilesArgs files;
  std::string format = "text";
};

struct InitArgs {
  FilesArgs files;
  std::optional<int64_t> batch;
  std::vector<std::string> dims;  ///< NAME=VALUE
};

struct ExportArgs {
  std::string target;
  std::string model;
  bool json = false;
};

/// Every option of the command line; each subcommand fills its own member.
struct Args {
  bool quiet = false;
  RewriteArgs rewrite;
  ReportArgs report;
  FilesArgs check;
  bool check_streamable_only = false;
  InitArgs init;
  ExportArgs exports;
};

const char* const kPathsHelp = "ONNX models, or directories searched recursively for *.onnx";

constexpr const char* kExamples = R"(Examples:
  rnnstate report model.onnx                  show each recurrent node and its state wiring
  rnnstate report model.onnx --json           the same as JSON (schema in README.md)
  rnnstate report model.onnx --format dot | dot -Tsvg > model.svg
                                              a picture of the state wiring
  rnnstate rewrite model.onnx -o stream.onnx  expose every state; unfed inputs keep old behaviour
  rnnstate rewrite model.onnx --state-inputs required -o stream.onnx
                                              state inputs without defaults (onnxruntime-node/web)
  rnnstate rewrite model.onnx --dry-run       print what would change, write nothing
  rnnstate rewrite zoo/ --out-dir out/        every *.onnx below zoo/, mirrored under out/
  rnnstate rewrite model.onnx --pack tensor --state-inputs required -o packed.onnx
                                              all states in one [batch, N] input and output
  rnnstate export triton packed.onnx          Triton config.pbtxt: sequence_batching state
  rnnstate check zoo/ --json                  CI gate: exit 1 unless every state is exposed and recorded

Exit codes: 0 ok, 1 check failed, 2 usage, 3 unreadable input, 4 unsupported model, 5 cannot write,
6 internal error. Over several files: the highest code of any file.
)";

void SetUpLogging(bool quiet) {
  auto logger = spdlog::stderr_color_st("rnnstate");
  logger->set_pattern("rnnstate: %l: %v");
  logger->set_level(quiet ? spdlog::level::err : spdlog::level::info);
  spdlog::set_default_logger(logger);
}

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
  options.packed_input_given = !args.packed_input.empty();
  options.packed_output_given = !args.packed_output.empty();
  if (options.packed_input_given) options.packed_input = args.packed_input;
  if (options.packed_output_given) options.packed_output = args.packed_output;
  if (options.packed_input.empty() || options.packed_output.empty() || options.packed_input == options.packed_output) {
    throw Error(ExitCode::kUsage, "--packed-input and --packed-output must be two different, non-empty names");
  }
  for (const std::string& axis : args.time_axes) options.time_axes.push_back(rnnstate::ParseTimeAxis(axis));
  if (!args.nodes.empty()) {
    try {
      options.node_filter = std::regex(args.nodes);
    } catch (const std::regex_error& e) {
      throw Error(ExitCode::kUsage, "--nodes '" + args.nodes + "' is not a valid regular expression");
    }
  }
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
  rnnstate::PrepareForWorkers();
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

int RunRewrite(const Args& all, const CLI::App&) {
  const RewriteArgs& args = all.rewrite;
  const bool quiet = all.quiet;
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

int RunReport(const Args& all, const CLI::App& command) {
  const ReportArgs& args = all.report;
  const bool quiet = all.quiet;
  std::string format_name = args.format;
  if (args.files.json) {
    if (command.count("--format") > 0 && format_name != "json") {
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

int RunCheck(const Args& all, const CLI::App&) {
  const FilesArgs& args = all.check;
  const bool quiet = all.quiet;
  std::vector<InputFile> inputs = rnnstate::FindModelFiles(args.paths, {});
  Printing printing = args.json ? Printing::kJsonLines : Printing::kText;
  return RunFiles(inputs, args, printing, quiet,
                  [&](size_t i) { return rnnstate::CheckFile(inputs[i].path, all.check_streamable_only); });
}

int RunInit(const Args& all, const CLI::App&) {
  const InitArgs& args = all.init;
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
  return RunFiles(inputs, args.files, printing, all.quiet,
                  [&](size_t i) { return rnnstate::InitFile(inputs[i].path, settings); });
}

int RunExport(const Args& all, const CLI::App&) {
  const ExportArgs& args = all.exports;
  if (IsDirectory(args.model)) throw Error(ExitCode::kUsage, "export takes one model file, not a directory");
  if (args.json && args.target != "openvino") throw Error(ExitCode::kUsage, "--json is for export openvino");
  const rnnstate::ExportTarget target =
      args.target == "triton" ? rnnstate::ExportTarget::kTriton : rnnstate::ExportTarget::kOpenVino;
  FilesArgs files;
  files.paths = {args.model};
  std::vector<InputFile> inputs = rnnstate::FindModelFiles(files.paths, {});
  return RunFiles(inputs, files, Printing::kText, all.quiet,
                  [&](size_t i) { return rnnstate::ExportFile(inputs[i].path, target, args.json); });
}

/// The options of every command over files.
void AddFilesOptions(CLI::App* command, FilesArgs& args) {
  command->add_option("paths", args.paths, kPathsHelp)->required();
  command->add_option("-j,--jobs", args.jobs, "Files processed in parallel (default: number of cores)")
      ->check(CLI::Range(1, 1024));
  command->add_flag("--fail-fast", args.fail_fast, "Start no new file after one fails");
}

/// `rewrite`'s options.
void DeclareRewrite(CLI::App& command, Args& all) {
  RewriteArgs& rewrite = all.rewrite;
  AddFilesOptions(&command, rewrite.files);
  command.add_option("-o,--output", rewrite.output,
                     "Output path, for one input file (default: MODEL.streaming.onnx beside each input)");
  command.add_option("--out-dir", rewrite.out_dir,
                     "Write outputs here, mirroring the tree below each directory argument");
  command.add_flag("--in-place", rewrite.in_place, "Replace each input file (atomically)");
  command.add_flag("--dry-run", rewrite.dry_run, "Print the plan, write nothing");
  command.add_flag("--json", rewrite.files.json, "JSON Lines: one record per file, then a summary");
  command
      .add_option("--state-inputs", rewrite.mode,
                  "defaults: unfed state inputs reproduce the original model (ONNX Runtime C/C++/Python/C#/Java); "
                  "required: plain inputs, feed zeros first (onnxruntime-node/-web)")
      ->check(CLI::IsMember({"defaults", "required"}));
  command.add_option("--nodes", rewrite.nodes, "Only rewrite nodes whose name (or graph/name) matches this regex");
  command.add_option("--input-names", rewrite.input_names, "Template for new state inputs ({node}, {kind}, {op})");
  command.add_option("--output-names", rewrite.output_names, "Template for new state outputs");
  command
      .add_option("--pack", rewrite.pack,
                  "none; tensor: all states in one [batch, N] tensor input and output per element type; sequence: "
                  "in one Sequence input and output (first call: feed it empty)")
      ->check(CLI::IsMember({"none", "tensor", "sequence"}));
  command
      .add_option("--state-layout", rewrite.layout,
                  "node: states as the node takes them ([D,B,H]); batch-first: [B,D,H] (Triton's implicit state)")
      ->check(CLI::IsMember({"node", "batch-first"}));
  command.add_option("--packed-input", rewrite.packed_input, "Name of the packed state input (default state_in)");
  command.add_option("--packed-output", rewrite.packed_output, "Name of the packed state output (default state_out)");
  command
      .add_option("--time-axis", rewrite.time_axes,
                  "INPUT:AXIS a Loop walks with a constant trip count equal to its static length (tf2onnx): "
                  "make that axis symbolic and derive the trip count from the fed input (repeatable)")
      ->type_name("INPUT:AXIS");
  command.add_flag("--strict", rewrite.strict, "Fail (exit 4) when any state cannot be rewritten");
  command.add_flag("--streamable-only", rewrite.streamable_only,
                   "Leave states that cannot stream (reverse, bidirectional, sequence_lens) as they are");
  CLI::Option* fsync_flag =
      command.add_flag("--fsync", rewrite.fsync,
                       "Flush every output to disk before it is renamed into place (default: only with --in-place)");
  command
      .add_flag("--no-fsync", rewrite.no_fsync,
                "Do not flush outputs to disk, not even with --in-place (still atomic, but a power loss soon after "
                "may lose them)")
      ->excludes(fsync_flag);
}

/// `report`'s options.
void DeclareReport(CLI::App& command, Args& all) {
  ReportArgs& report = all.report;
  AddFilesOptions(&command, report.files);
  command.add_option("--format", report.format, "text (a table), json (schema in README.md) or dot (Graphviz)")
      ->check(CLI::IsMember({"text", "json", "dot"}));
  command.add_flag("--json", report.files.json, "Same as --format json");
}

/// `check`'s options.
void DeclareCheck(CLI::App& command, Args& all) {
  FilesArgs& check = all.check;
  AddFilesOptions(&command, check);
  command.add_flag("--json", check.json, "JSON Lines: one record per file, then a summary");
  command.add_flag("--streamable-only", all.check_streamable_only,
                   "Do not require states that cannot stream (reverse, bidirectional, sequence_lens) to be exposed");
}

/// `init`'s options.
void DeclareInit(CLI::App& command, Args& all) {
  InitArgs& init = all.init;
  AddFilesOptions(&command, init.files);
  command
      .add_option("--batch", init.batch,
                  "Batch size of the first call (default: the value --dim gives the batch dimension, else 1)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  command.add_option("--dim", init.dims, "Value of another symbolic dimension of a state, NAME=VALUE (repeatable)");
  command.add_flag("--json", init.files.json, "JSON Lines: one record per file (its \"feeds\"), then a summary");
}

/// `export`'s arguments.
void DeclareExport(CLI::App& command, Args& all) {
  ExportArgs& exports = all.exports;
  command
      .add_option("target", exports.target,
                  "triton: the sequence_batching state section of config.pbtxt; openvino: MakeStateful's pairs")
      ->required()
      ->check(CLI::IsMember({"triton", "openvino"}));
  command.add_option("model", exports.model, "A rewritten ONNX model (its rnnstate metadata)")->required();
  command.add_flag("--json", exports.json, "openvino: {\"param_res_names\": {...}, \"states\": [...]}");
}

/// One subcommand: its name and one-line help, how it declares its options, and how it runs (with its
/// own parsed command, for options whose presence matters). Adding a subcommand is one row.
struct Subcommand {
  const char* name;
  const char* help;
  void (*declare)(CLI::App& command, Args& args);
  int (*run)(const Args& args, const CLI::App& command);
};

const Subcommand kSubcommands[] = {
    {"rewrite", "Promote recurrent state to graph inputs and outputs", DeclareRewrite, RunRewrite},
    {"report", "Show the recurrent nodes and their state wiring", DeclareReport, RunReport},
    {"check", "CI gate: exit 1 when a recurrent state is not exposed or the rnnstate metadata is stale", DeclareCheck,
     RunCheck},
    {"init", "Print the first call's feed of every state input (shape, dtype, zeros or empty) from the metadata",
     DeclareInit, RunInit},
    {"export", "Print the state wiring for a serving runtime: Triton's implicit state, OpenVINO's MakeStateful",
     DeclareExport, RunExport},
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rnnstate: expose the hidden state of RNN/GRU/LSTM nodes in ONNX models for streaming"};
  app.footer(kExamples);
  CLI::Option* version = app.set_version_flag(
      "--version", [&app] { return app.count("--json") ? rnnstate::VersionJson() : rnnstate::VersionText(); },
      "Print the version, source revision and onnx/protobuf versions, then exit");
  app.add_flag("--json", "With --version: print it as one JSON object")->needs(version);
  app.require_subcommand(1);
  app.fallthrough();  // -q works after the subcommand too
  Args args;
  app.add_flag("-q,--quiet", args.quiet, "Only print errors on stderr");

  std::vector<CLI::App*> commands;
  for (const Subcommand& subcommand : kSubcommands) {
    CLI::App* command = app.add_subcommand(subcommand.name, subcommand.help);
    subcommand.declare(*command, args);
    commands.push_back(command);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : static_cast<int>(ExitCode::kUsage);
  }
  SetUpLogging(args.quiet);
  // onnx registers every operator schema on first use (~10 ms): done here, beside the walk of the
  // command's files; the workers' first lookup waits for it (a function-local static).
  std::thread schema_warmup(rnnstate::PrepareForWorkers);
  struct JoinOnExit {
    std::thread& thread;
    ~JoinOnExit() { thread.join(); }
  } join_warmup{schema_warmup};
  try {
    for (size_t i = 0; i < commands.size(); ++i) {
      if (*commands[i]) return kSubcommands[i].run(args, *commands[i]);
    }
    return static_cast<int>(ExitCode::kUsage);  // unreachable: require_subcommand(1)
  } catch (const Error& e) {
    std::cerr << "rnnstate: error: " << e.what() << "\n";
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::cerr << "rnnstate: internal error: " << e.what() << "\n";
    return static_cast<int>(ExitCode::kInternal);
  } catch (...) {
    std::cerr << "rnnstate: internal error\n";
    return static_cast<int>(ExitCode::kInternal);
  }
}
