// rnnstate: command-line entry. Parses options into plain structs, calls the library, prints results
// on stdout and diagnostics on stderr, and maps errors to the documented exit codes.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <functional>
#include <iostream>
#include <memory>

#include "cli/cli_args.h"
#include "cli/cli_run.h"
#include "cli/closest_name.h"
#include "cli/command_line.h"
#include "cli/version.h"
#include "cli/commands.h"
#include "rnnstate/error.h"

namespace {

using rnnstate::Error;
using rnnstate::ExitCode;
using namespace rnnstate::cli;  // the option structs and the subcommands
const char* const kPathsHelp = "ONNX models, or directories searched recursively for *.onnx";

// Each command's examples end its own --help; `rnnstate --help` ends with all of them.
constexpr const char* kRewriteExamples = R"(
  rnnstate rewrite model.onnx -o stream.onnx  expose every state; unfed inputs keep old behaviour
  rnnstate rewrite model.onnx --state-inputs required -o stream.onnx
                                              state inputs without defaults (onnxruntime-node/web)
  rnnstate rewrite model.onnx --dry-run       print what would change, write nothing
  rnnstate rewrite zoo/ --out-dir out/        every *.onnx below zoo/, mirrored under out/
  rnnstate rewrite model.onnx --pack tensor --state-inputs required -o packed.onnx
                                              all states in one [batch, N] input and output)";
constexpr const char* kReportExamples = R"(
  rnnstate report model.onnx                  show each recurrent node and its state wiring
  rnnstate report model.onnx --json           the same as JSON (schema in docs/guide.md)
  rnnstate report model.onnx --format dot | dot -Tsvg > model.svg
                                              a picture of the state wiring)";
constexpr const char* kCheckExamples = R"(
  rnnstate check zoo/ --json                  CI gate: exit 1 unless every state is exposed and recorded)";
constexpr const char* kInitExamples = R"(
  rnnstate init stream.onnx --batch 4         the first call's feed of each state input, for 4 streams)";
constexpr const char* kExportExamples = R"(
  rnnstate export triton packed.onnx -o repo  Triton model repository entry repo/packed/ (config.pbtxt,
                                              1/model.onnx) with the states as implicit state
  rnnstate export openvino stream.onnx --json the pairs for OpenVINO's MakeStateful)";
constexpr const char* kVerifyExamples = R"(
  rnnstate verify model.onnx stream.onnx      stream.onnx in chunks with its state fed back == model.onnx
                                              on the whole sequence, in ONNX Runtime (Node.js); one frame
                                              per call: the calls, the state fed back)";

constexpr const char* kExitCodes = R"(
Exit codes: 0 ok, 1 check or verify failed, 2 usage, 3 unreadable or invalid input (verify: also Node.js or
onnxruntime-node missing), 4 unsupported model (verify: refused, e.g. a fixed-length time axis or a state marked
not carried), 5 cannot write, 6 internal error. Over several files: the highest code of any file.
)";

/// The options of every command over files.
void AddFilesOptions(CLI::App* command, FilesArgs& args) {
  command->add_option("paths", args.paths, kPathsHelp)->required();
  command->add_option("-j,--jobs", args.jobs, "Files processed in parallel (default: number of cores)")
      ->check(CLI::Range(1, 1024));
  command->add_flag("--fail-fast", args.fail_fast, "Start no new file after one fails");
}

/// `rewrite`'s options.
void DeclareRewrite(CLI::App& command, RewriteArgs& rewrite) {
  AddFilesOptions(&command, rewrite.files);
  command.add_option("-o,--output", rewrite.output,
                     "Output path, for one input file (default: MODEL.streaming.onnx beside each input)");
  command.add_option("--out-dir", rewrite.out_dir,
                     "Write outputs here, mirroring the tree below each directory argument");
  // An empty path would read as "not given" and write the default output instead: a usage error.
  const CLI::Validator path([](std::string& value) { return value.empty() ? "needs a path, not an empty string" : ""; },
                            "");
  for (const char* name : {"--output", "--out-dir"}) command.get_option(name)->check(path);
  command.add_flag("--in-place", rewrite.in_place, "Replace each input file (atomically)");
  command.add_flag("--dry-run", rewrite.dry_run, "Print the plan, write nothing");
  command.add_flag("--json", rewrite.files.json, "JSON Lines: one record per file, then a summary");
  command
      .add_option("--state-inputs", rewrite.mode,
                  "defaults: unfed state inputs reproduce the original model (ONNX Runtime C/C++/Python/C#/Java); "
                  "required: plain inputs, feed zeros first (onnxruntime-node/-web)")
      ->check(CLI::IsMember({"defaults", "required"}));
  command.add_option("--nodes", rewrite.nodes, "Only rewrite nodes whose name (or graph/name) matches this regular expression (RE2 syntax)");
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
  command.add_option("--packed-input", rewrite.packed_input, "Name of the packed state input (default state_in)")
      ->each([&rewrite](const std::string&) { rewrite.packed_input_given = true; });
  command.add_option("--packed-output", rewrite.packed_output, "Name of the packed state output (default state_out)")
      ->each([&rewrite](const std::string&) { rewrite.packed_output_given = true; });
  command
      .add_option("--time-axis", rewrite.time_axes,
                  "open a fixed-length export along INPUT:AXIS: make the axis symbolic and derive every value "
                  "holding its length (Loop trip counts, Reshape targets, Slice ends) from the fed input "
                  "(repeatable)")
      ->type_name("INPUT:AXIS")
      ->allow_extra_args(false);  // one value per --time-axis: the paths that follow are paths
  command
      .add_option("--input-context", rewrite.input_contexts,
                  "INPUT:AXIS:N carry the last N frames along AXIS of data input INPUT to the next call as a state "
                  "pair: each call sees them in front of its INPUT (Silero VAD: input:1:64) (repeatable)")
      ->type_name("INPUT:AXIS:N")
      ->allow_extra_args(false);
  command.add_flag("--no-conv-context", rewrite.no_conv_context,
                   "Leave causal convolutions and pooling over time as they are (by default each carries its "
                   "context to the next call as a state pair, so that the model streams)");
  command
      .add_flag("--lookahead", rewrite.lookahead,
                "Also carry convolutions and pooling over time that look ahead (\"same\" padding): each call "
                "returns the frames that are final, the outputs lag by the model's lookahead (recorded as "
                "the stream's delay)")
      ->excludes("--no-conv-context");
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
void DeclareReport(CLI::App& command, ReportArgs& report) {
  AddFilesOptions(&command, report.files);
  command.add_option("--format", report.format, "text (a table), json (schema in docs/guide.md) or dot (Graphviz)")
      ->check(CLI::IsMember({"text", "json", "dot"}))
      ->each([&report](const std::string&) { report.format_given = true; });
  command.add_flag("--json", report.files.json, "Same as --format json");
}

/// `check`'s options.
void DeclareCheck(CLI::App& command, CheckArgs& check) {
  AddFilesOptions(&command, check.files);
  command.add_flag("--json", check.files.json, "JSON Lines: one record per file, then a summary");
  command.add_flag("--streamable-only", check.streamable_only,
                   "Do not require states that cannot stream (reverse, bidirectional, sequence_lens) to be exposed");
}

/// `init`'s options.
void DeclareInit(CLI::App& command, InitArgs& init) {
  AddFilesOptions(&command, init.files);
  command
      .add_option("--batch", init.batch,
                  "Batch size of the first call (default: the value --dim gives the batch dimension, else 1)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  command.add_option("--dim", init.dims, "Value of another symbolic dimension of a state, NAME=VALUE (repeatable)")
      ->allow_extra_args(false);
  command.add_flag("--json", init.files.json, "JSON Lines: one record per file (its \"feeds\"), then a summary");
}

/// `export`'s arguments.
void DeclareExport(CLI::App& command, ExportArgs& exports) {
  command
      .add_option("target", exports.target,
                  "triton: a model-repository entry (config.pbtxt, 1/model.onnx); openvino: MakeStateful's pairs")
      ->required()
      ->check(CLI::IsMember({"triton", "openvino"}));
  command.add_option("model", exports.model, "A rewritten ONNX model (its rnnstate metadata)")->required();
  command.add_flag("--json", exports.json, "openvino: {\"param_res_names\": {...}, \"states\": [...]}");
  command.add_option("-o,--output", exports.repository,
                     "triton: the model repository to write NAME/config.pbtxt and NAME/1/model.onnx into "
                     "(default: print config.pbtxt)");
  command.add_option("--name", exports.name, "triton: the model's name in the repository (default: the file's stem)");
  command
      .add_option_function<int64_t>(
          "--max-batch-size", [&exports](const int64_t& n) { exports.max_batch_size = n; },
          "triton: max_batch_size of the config (default 8, or 0 when Triton cannot batch the model: "
          "its data time-major or its batch fixed)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 30));
}

/// `verify`: every argument after the command is the checker's, --help included.
void DeclareVerify(CLI::App& command, VerifyArgs& verify) {
  command.prefix_command();
  command.set_help_flag();
  command.fallthrough(false);  // -h and --help too: not the parser's (`rnnstate -q` works before the command)
  command.callback([&command, &verify] { verify.arguments = command.remaining(); });
}

/// A declared subcommand, ready to run on the options the parser fills: takes `quiet` (-q), returns the
/// exit code.
using Runner = std::function<int(bool quiet)>;

/// A subcommand's handler: `Declare` adds its options to `command`, filling an `Options` of its own, and
/// `Run` (cli_run.h) runs on them once parsed.
template <typename Options, void (*Declare)(CLI::App&, Options&), int (*Run)(const Options&, bool)>
Runner Handler(CLI::App& command) {
  auto options = std::make_shared<Options>();
  Declare(command, *options);
  return [options](bool quiet) { return Run(*options, quiet); };
}

/// One subcommand: its name, its one-line help, the examples that end its --help and its handler. A new
/// subcommand is one row here, its options struct (cli_args.h), their declaration (above) and its Run
/// (cli_run.h).
struct Subcommand {
  const char* name;
  const char* help;
  const char* examples;
  Runner (*handler)(CLI::App& command);
};

const Subcommand kSubcommands[] = {
    {"rewrite", "Promote recurrent state to graph inputs and outputs", kRewriteExamples,
     Handler<RewriteArgs, DeclareRewrite, RunRewrite>},
    {"report", "Show the recurrent nodes and their state wiring", kReportExamples,
     Handler<ReportArgs, DeclareReport, RunReport>},
    {"check", "CI gate: exit 1 when a recurrent state is not exposed or the rnnstate metadata is stale", kCheckExamples,
     Handler<CheckArgs, DeclareCheck, RunCheck>},
    {"init", "Print the first call's feed of every state input (shape, dtype, zeros or empty) from the metadata",
     kInitExamples, Handler<InitArgs, DeclareInit, RunInit>},
    {"export", "State wiring for a serving runtime: a Triton model-repository entry, OpenVINO's MakeStateful pairs",
     kExportExamples, Handler<ExportArgs, DeclareExport, RunExport>},
    {"verify",
     "Prove a rewrite streams: chunked with the state fed back == one whole run, in ONNX Runtime (runs the "
     "rnnstate-stream helper in Node.js; rnnstate verify --help)",
     kVerifyExamples, Handler<VerifyArgs, DeclareVerify, RunVerify>},
};

/// The first argument that is not an option — the command's name (the options before it take no
/// value) — when it names no command: "unknown command 'rewirte'; did you mean 'rewrite'?". Empty when
/// the command is known or absent.
std::string UnknownCommand(int argc, char** argv) {
  std::vector<std::string> names;
  for (const Subcommand& subcommand : kSubcommands) names.emplace_back(subcommand.name);
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.empty() || word[0] == '-') continue;
    if (std::find(names.begin(), names.end(), word) != names.end()) return "";
    const std::optional<std::string> meant = rnnstate::ClosestName(word, names);
    if (meant) return "unknown command '" + word + "'; did you mean '" + *meant + "'?";
    std::string list;
    for (const std::string& name : names) list += (list.empty() ? "" : ", ") + name;
    return "unknown command '" + word + "' (the commands: " + list + ")";
  }
  return "";
}

/// The examples of every command, then the exit codes: what `rnnstate --help` ends with.
std::string AllExamples() {
  std::string text = "Examples:";
  for (const Subcommand& subcommand : kSubcommands) text += subcommand.examples;
  return text + "\n" + kExitCodes;
}

}  // namespace

namespace rnnstate::cli {

int RunCommandLine(int argc, char** argv) {
  CLI::App app{"rnnstate: expose the hidden state of RNN/GRU/LSTM nodes in ONNX models for streaming"};
  app.footer(AllExamples());
  CLI::Option* version = app.set_version_flag(
      "--version", [&app] { return app.count("--json") ? rnnstate::VersionJson() : rnnstate::VersionText(); },
      "Print the version, source revision and onnx/protobuf versions, then exit");
  app.add_flag("--json", "With --version: print it as one JSON object")->needs(version);
  app.require_subcommand(1);
  app.fallthrough();  // -q works after the subcommand too
  bool quiet = false;
  app.add_flag("-q,--quiet", quiet, "Only print errors on stderr");

  std::vector<std::pair<CLI::App*, Runner>> commands;
  for (const Subcommand& subcommand : kSubcommands) {
    CLI::App* command = app.add_subcommand(subcommand.name, subcommand.help);
    command->footer(std::string("Examples:") + subcommand.examples + "\n" + kExitCodes);
    commands.emplace_back(command, subcommand.handler(*command));
  }
  if (const std::string unknown = UnknownCommand(argc, argv); !unknown.empty()) {
    std::cerr << "rnnstate: error: " << unknown << "\n(rnnstate --help lists the commands)\n";
    return static_cast<int>(ExitCode::kUsage);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : static_cast<int>(ExitCode::kUsage);
  }
  SetUpLogging(quiet);
  try {
    for (const auto& [command, run] : commands) {
      if (*command) return run(quiet);
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

}  // namespace rnnstate::cli
