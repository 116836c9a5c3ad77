// `rnnstate rewrite`: its options, its run over the files (outputs per -o / --in-place / --out-dir / the
// suffix) and the rewrite of one file through the façade (rnnstate/pipeline.h).

#include <CLI/CLI.hpp>
#include <filesystem>

#include "cli/command.h"
#include "cli/file_runs.h"
#include "io/data_placement.h"
#include "io/model_io.h"
#include "rnnstate/error.h"
#include "rnnstate/options.h"
#include "rnnstate/pipeline.h"

namespace rnnstate::cli {

namespace {

constexpr const char* kRewriteExamples = R"(
  rnnstate rewrite model.onnx -o stream.onnx  expose every state; unfed inputs keep old behaviour
  rnnstate rewrite model.onnx --state-inputs required -o stream.onnx
                                              state inputs without defaults (onnxruntime-node/web)
  rnnstate rewrite model.onnx --dry-run       print what would change, write nothing
  rnnstate rewrite zoo/ --out-dir out/        every *.onnx below zoo/, mirrored under out/
  rnnstate rewrite model.onnx --pack tensor --state-inputs required -o packed.onnx
                                              all states in one [batch, N] input and output)";

/// `rewrite`'s options.
struct RewriteOptions {
  FilesOptions files;
  std::string output;
  std::string out_dir;
  bool in_place = false;  ///< output == input; an unchanged model is not rewritten
  bool dry_run = false;   ///< plan only, write nothing
  bool strict = false;    ///< a skipped state is an error (exit 4)
  bool fsync = false;
  bool no_fsync = false;
  /// What the rewrite does, with its defaults (options.h): the parser fills the templates, the packed
  /// names, the choices and the flags in place.
  PlanOptions plan;
  // Read when the command runs, so that their usage errors come after the outputs' (PlanOf).
  std::string nodes;
  std::vector<std::string> time_axes;
  std::vector<std::string> input_contexts;
};

/// How one run writes each file, from the options and the work list.
struct RewriteWriting {
  bool create_directories = false;  ///< create the output's missing parent directories (--out-dir)
  bool label_lines = false;         ///< prefix --dry-run plan lines with the input path (several files)
  bool defer_sync = false;          ///< do not fsync each output; the run calls SyncOutputs at the end
};

/// Adds `--NAME` choosing one of `values` to `command`: `set` receives the value given.
CLI::Option* AddChoice(CLI::App& command, const std::string& name, const std::string& help,
                       const std::vector<std::string>& values, std::function<void(const std::string&)> set) {
  return command.add_option_function<std::string>(name, std::move(set), help)->check(CLI::IsMember(values));
}

/// What the rewrite does (the plan) and how it is named.
void AddPlanOptions(CLI::App& command, RewriteOptions& rewrite) {
  PlanOptions& plan = rewrite.plan;
  AddChoice(command, "--state-inputs",
            "defaults: unfed state inputs reproduce the original model (ONNX Runtime C/C++/Python/C#/Java); "
            "required: plain inputs, feed zeros first (onnxruntime-node/-web)",
            {"defaults", "required"}, [&plan](const std::string& value) {
              plan.mode = value == "required" ? StateInputMode::kRequired : StateInputMode::kDefaults;
            });
  command.add_option("--nodes", rewrite.nodes, "Only rewrite nodes whose name (or graph/name) matches this regular expression (RE2 syntax)");
  command.add_option("--input-names", plan.input_template, "Template for new state inputs ({node}, {kind}, {op})");
  command.add_option("--output-names", plan.output_template, "Template for new state outputs");
  AddChoice(command, "--pack",
            "none; tensor: all states in one [batch, N] tensor input and output per element type; sequence: "
            "in one Sequence input and output (first call: feed it empty)",
            {"none", "tensor", "sequence"}, [&plan](const std::string& value) {
              plan.pack = value == "tensor" ? PackKind::kTensor : value == "sequence" ? PackKind::kSequence : PackKind::kNone;
            });
  AddChoice(command, "--state-layout",
            "node: states as the node takes them ([D,B,H]); batch-first: [B,D,H] (Triton's implicit state)",
            {"node", "batch-first"}, [&plan](const std::string& value) {
              plan.layout = value == "batch-first" ? StateLayout::kBatchFirst : StateLayout::kAsNode;
            });
  command.add_option("--packed-input", plan.packed_input, "Name of the packed state input (default state_in)")
      ->each([&plan](const std::string&) { plan.packed_input_given = true; });
  command.add_option("--packed-output", plan.packed_output, "Name of the packed state output (default state_out)")
      ->each([&plan](const std::string&) { plan.packed_output_given = true; });
}

/// What is carried beyond the recurrent nodes' states: fixed lengths opened, contexts, windows over time.
void AddStreamOptions(CLI::App& command, RewriteOptions& rewrite) {
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
  PlanOptions& plan = rewrite.plan;
  command.add_flag_callback("--no-conv-context", [&plan] { plan.conv_context = false; },
                            "Leave causal convolutions and pooling over time as they are (by default each carries its "
                            "context to the next call as a state pair, so that the model streams)");
  command
      .add_flag("--lookahead", plan.lookahead,
                "Also carry convolutions and pooling over time that look ahead (\"same\" padding) and "
                "upsamplings that lag (ConvTranspose with symmetric padding): each call returns the frames that "
                "are final, the outputs lag by the model's lookahead (recorded as the stream's delay)")
      ->excludes("--no-conv-context");
}

void AddRewriteOptions(CLI::App& command, RewriteOptions& rewrite) {
  AddFilesOptions(command, rewrite.files);
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
  AddPlanOptions(command, rewrite);
  AddStreamOptions(command, rewrite);
  command.add_flag("--strict", rewrite.strict, "Fail (exit 4) when any state cannot be rewritten");
  command.add_flag("--streamable-only", rewrite.plan.streamable_only,
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

/// The plan the parser filled, completed with what is read when the command runs.
PlanOptions PlanOf(const RewriteOptions& rewrite) {
  PlanOptions plan = rewrite.plan;
  if (plan.packed_input.empty() || plan.packed_output.empty() || plan.packed_input == plan.packed_output) {
    throw Error(ExitCode::kUsage, "--packed-input and --packed-output must be two different, non-empty names");
  }
  for (const std::string& axis : rewrite.time_axes) plan.time_axes.push_back(ParseTimeAxis(axis));
  for (const std::string& context : rewrite.input_contexts) plan.input_contexts.push_back(ParseInputContext(context));
  if (!rewrite.nodes.empty()) plan.node_filter = NodePattern(rewrite.nodes);
  return plan;
}

/// Where outputs go, from -o / --in-place / --out-dir (at most one of them).
OutputMode ChooseOutputMode(const RewriteOptions& rewrite) {
  int chosen = !rewrite.output.empty() + rewrite.in_place + !rewrite.out_dir.empty();
  if (chosen > 1) throw Error(ExitCode::kUsage, "use only one of -o, --in-place and --out-dir");
  if (!rewrite.output.empty() && !IsSingleFile(rewrite.files)) {
    throw Error(ExitCode::kUsage, "-o takes exactly one input file; use --out-dir (or the default suffix) for several");
  }
  if (!rewrite.output.empty()) return OutputMode::kExplicit;
  if (rewrite.in_place) return OutputMode::kInPlace;
  if (!rewrite.out_dir.empty()) return OutputMode::kOutDir;
  return OutputMode::kSuffix;
}

std::string PairCount(size_t pairs) { return std::to_string(pairs) + " state pair" + (pairs == 1 ? "" : "s"); }

/// --dry-run: the plan, one line per state, then what a real run would do. The whole rewrite runs on a
/// copy, so that a dry run reaches every verdict and warning a real run reaches (--strict, a rewrite that
/// fails validation, "full validation skipped"), and so that layout and packing, planned from the
/// rewritten model, can be shown.
void DryRun(const std::string& input, const std::string& output, const RewriteOptions& rewrite,
            const RewriteWriting& writing, const OpenedModel& opened, FileResult& result) {
  onnx::ModelProto copy = opened.file.model();
  RewriteResult outcome = Timed(&result.timings.process_ms, [&] {
    return RewriteForStreaming(copy, rewrite.plan, rewrite.strict, opened.directory, InlineTensors::kCheckedWhenOpened);
  });
  result.warnings = WarningTexts(outcome.warnings);
  result.states = outcome.pairs;
  std::string prefix = writing.label_lines ? input + ": " : "";
  for (const auto& line : outcome.plan_lines) result.text += prefix + line + "\n";
  const bool changes = outcome.changed;
  result.status = changes ? kStatusOk : kStatusUnchanged;
  result.changed = changes;
  if (changes || !rewrite.in_place) result.output = output;
  result.text += prefix + (changes ? "would write " + output : "nothing to do") + "\n";
}

void WriteRewritten(const OpenedModel& opened, const std::string& output, const RewriteWriting& writing,
                    FileResult& result) {
  try {
    Timed(&result.timings.write_ms, [&] {
      // Directories made for this output go again if it cannot be written (a full disk, a name too long).
      PlacedData directories = writing.create_directories
                                   ? CreateOutputDirectories(std::filesystem::path(output).parent_path().string())
                                   : PlacedData();
      WriteModel(opened, output, writing.defer_sync ? ModelFile::Durability::kDeferred : ModelFile::Durability::kSync);
      directories.Keep();
    });
  } catch (Error& e) {
    e.AppendContext(output);
    throw;
  }
}

/// Rewrites `input` to `output` (`rewrite.plan` complete: PlanOf). Result: status ok (changed) or
/// unchanged, `states` the pairs recorded in the output, `text` the line(s) printed for the file.
FileResult RewriteFile(const std::string& input, const std::string& output, const RewriteOptions& rewrite,
                       const RewriteWriting& writing) {
  return ProcessGuarded(input, [&](FileResult& result) {
    OpenedModel opened = Timed(&result.timings.load_ms, [&] { return OpenModel(input); });
    // Only known once the model is open: an output that would destroy its external data is refused, as
    // an output that would replace an input is before any file is processed (OutputConflict).
    if (std::string conflict = OutputDataConflict(opened.external_data, opened.directory, output); !conflict.empty()) {
      throw Error(ExitCode::kUsage, conflict);
    }
    onnx::ModelProto& model = opened.file.model();
    if (rewrite.dry_run) return DryRun(input, output, rewrite, writing, opened, result);
    RewriteResult outcome = Timed(&result.timings.process_ms, [&] {
      return RewriteForStreaming(model, rewrite.plan, rewrite.strict, opened.directory,
                                 InlineTensors::kCheckedWhenOpened);
    });
    result.warnings = WarningTexts(outcome.warnings);
    const size_t pair_count = outcome.pairs.size();
    result.states = std::move(outcome.pairs);  // the result keeps them: not copied
    result.changed = outcome.changed;
    result.status = outcome.changed ? kStatusOk : kStatusUnchanged;
    if (!outcome.changed && rewrite.in_place) {
      result.text = input + ": nothing to do\n";
      return;
    }
    WriteRewritten(opened, output, writing, result);
    result.output = output;
    result.text = input + " -> " + output + ": " +
                  (!outcome.has_recurrent_nodes && pair_count == 0
                       ? std::string("no recurrent nodes, written unchanged")
                       : PairCount(pair_count) + (outcome.changed ? "" : " (unchanged)")) +
                  "\n";
  });
}

int RunRewrite(const RewriteOptions& options, bool quiet) {
  OutputMode mode = ChooseOutputMode(options);
  RewriteOptions rewrite = options;
  rewrite.plan = PlanOf(options);
  RewriteWriting writing;
  writing.create_directories = mode == OutputMode::kOutDir;
  DiscoveryOptions discovery;
  // Re-runs over a directory must not take earlier outputs for inputs.
  if (mode == OutputMode::kSuffix) discovery.skip_suffix = kStreamingSuffix;
  discovery.skip_directory = rewrite.out_dir;
  std::vector<InputFile> inputs = FindModelFiles(rewrite.files.paths, discovery);
  writing.label_lines = inputs.size() > 1;
  // Outputs are flushed to disk when they replace the user's original (--in-place) or when asked to.
  // A new output, like one from cp or onnx.save, is left to the kernel: a crash can lose it, never the
  // input. One fsync per file costs more than the rewrite of a small model: a batch is flushed once at
  // the end.
  const bool sync = rewrite.in_place ? !rewrite.no_fsync : rewrite.fsync;
  writing.defer_sync = (inputs.size() > 1 || !sync) && !rewrite.dry_run;
  std::vector<std::string> outputs;
  for (const auto& input : inputs) {
    outputs.push_back(OutputPathFor(input, mode, mode == OutputMode::kOutDir ? rewrite.out_dir : rewrite.output));
  }
  std::string conflict = OutputConflict(inputs, outputs, rewrite.in_place);
  if (!conflict.empty()) throw Error(ExitCode::kUsage, conflict);
  Printing printing = rewrite.files.json ? Printing::kJsonLines : Printing::kText;
  int code = RunFiles(inputs, rewrite.files, printing, quiet,
                      [&](size_t i) { return RewriteFile(inputs[i].path, outputs[i], rewrite, writing); });
  if (writing.defer_sync && sync) SyncOutputs(outputs);
  return code;
}

}  // namespace

Command RewriteCommand() {
  return {"rewrite", "Promote recurrent state to graph inputs and outputs", kRewriteExamples,
          Declare<RewriteOptions, AddRewriteOptions, RunRewrite>};
}

}  // namespace rnnstate::cli
