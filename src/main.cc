// rnnstate: command-line entry. Parses options into plain structs, calls the library, prints results
// on stdout and diagnostics on stderr, and maps errors to the documented exit codes.

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <regex>

#include "rnnstate/error.h"
#include "rnnstate/model_io.h"
#include "rnnstate/pipeline.h"
#include "rnnstate/report.h"

namespace {

using rnnstate::Error;
using rnnstate::ExitCode;

struct RewriteArgs {
  std::string input;
  std::string output;
  bool in_place = false;
  bool dry_run = false;
  bool strict = false;
  std::string mode = "defaults";
  std::string nodes;
  std::string input_names = "{node}.{kind}_in";
  std::string output_names = "{node}.{kind}_out";
};

struct ReportArgs {
  std::string input;
  bool json = false;
};

constexpr const char* kExamples = R"(Examples:
  rnnstate report model.onnx                  show each recurrent node and its state wiring
  rnnstate report model.onnx --json           the same as JSON (schema in README.md)
  rnnstate rewrite model.onnx -o stream.onnx  expose every state; unfed inputs keep old behaviour
  rnnstate rewrite model.onnx --state-inputs required -o stream.onnx
                                              state inputs without defaults (onnxruntime-node/web)
  rnnstate rewrite model.onnx --dry-run       print what would change, write nothing

Exit codes: 0 ok, 2 usage, 3 unreadable input, 4 unsupported model, 5 cannot write, 6 internal error.
)";

void SetUpLogging(bool quiet) {
  auto logger = spdlog::stderr_color_st("rnnstate");
  logger->set_pattern("rnnstate: %l: %v");
  logger->set_level(quiet ? spdlog::level::err : spdlog::level::info);
  spdlog::set_default_logger(logger);
}

/// `model.onnx` -> `model.streaming.onnx`, beside the input.
std::string DefaultOutputPath(const std::string& input) {
  std::string stem = input;
  const std::string suffix = ".onnx";
  if (stem.size() > suffix.size() && stem.compare(stem.size() - suffix.size(), suffix.size(), suffix) == 0) {
    stem.resize(stem.size() - suffix.size());
  }
  return stem + ".streaming.onnx";
}

rnnstate::PlanOptions MakePlanOptions(const RewriteArgs& args) {
  rnnstate::PlanOptions options;
  options.mode = args.mode == "required" ? rnnstate::StateInputMode::kRequired : rnnstate::StateInputMode::kDefaults;
  options.input_template = args.input_names;
  options.output_template = args.output_names;
  if (!args.nodes.empty()) {
    try {
      options.node_filter = std::regex(args.nodes);
    } catch (const std::regex_error& e) {
      throw Error(ExitCode::kUsage, "--nodes '" + args.nodes + "' is not a valid regular expression");
    }
  }
  return options;
}

/// Prefixes errors with the file they concern.
template <typename Body>
auto WithFile(const std::string& file, Body&& body) {
  try {
    return body();
  } catch (Error& e) {
    e.AppendContext(file);
    throw;
  }
}

int RunReport(const ReportArgs& args) {
  return WithFile(args.input, [&] {
    onnx::ModelProto model = rnnstate::LoadModel(args.input);
    rnnstate::RewriteOutcome outcome = rnnstate::PlanRewrite(model, rnnstate::PlanOptions{});
    if (args.json) {
      std::cout << rnnstate::ReportJson(args.input, model, outcome.analysis, outcome.plan).Dump() << "\n";
    } else {
      std::cout << rnnstate::ReportText(args.input, model, outcome.analysis, outcome.plan);
    }
    return 0;
  });
}

int RunRewrite(const RewriteArgs& args) {
  if (args.in_place && !args.output.empty()) throw Error(ExitCode::kUsage, "use either -o or --in-place, not both");
  rnnstate::PlanOptions options = MakePlanOptions(args);
  std::string output = args.in_place ? args.input : args.output.empty() ? DefaultOutputPath(args.input) : args.output;
  return WithFile(args.input, [&] {
    onnx::ModelProto model = rnnstate::LoadModel(args.input);
    if (args.dry_run) {
      rnnstate::RewriteOutcome outcome = rnnstate::PlanRewrite(model, options);
      for (const auto& warning : outcome.warnings) spdlog::warn("{}: {}", args.input, warning);
      for (const auto& edit : outcome.plan.edits) {
        std::cout << edit.graph_name << " " << edit.node_name << " " << rnnstate::StateKindName(edit.kind) << ": "
                  << edit.Describe() << "\n";
      }
      std::cout << (outcome.plan.ChangesModel() ? "would write " + output : "nothing to do") << "\n";
      return 0;
    }
    rnnstate::RewriteOutcome outcome = rnnstate::RewriteModel(model, options, args.strict);
    for (const auto& warning : outcome.warnings) spdlog::warn("{}: {}", args.input, warning);
    if (!outcome.changed && args.in_place) {
      std::cout << args.input << ": nothing to do\n";
      return 0;
    }
    WithFile(output, [&] {
      rnnstate::WriteModelAtomically(model, output);
      return 0;
    });
    size_t pairs = outcome.plan.pairs.size();
    std::cout << args.input << " -> " << output << ": "
              << (outcome.analysis.nodes.empty() ? std::string("no recurrent nodes, written unchanged")
                                                 : std::to_string(pairs) + " state pair" + (pairs == 1 ? "" : "s") +
                                                       (outcome.changed ? "" : " (unchanged)"))
              << "\n";
    return 0;
  });
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rnnstate: expose the hidden state of RNN/GRU/LSTM nodes in ONNX models for streaming"};
  app.footer(kExamples);
  app.set_version_flag("--version", std::string("rnnstate ") + RNNSTATE_VERSION);
  app.require_subcommand(1);
  app.fallthrough();  // -q works after the subcommand too
  bool quiet = false;
  app.add_flag("-q,--quiet", quiet, "Only print errors on stderr");

  RewriteArgs rewrite;
  CLI::App* rewrite_cmd = app.add_subcommand("rewrite", "Promote recurrent state to graph inputs and outputs");
  rewrite_cmd->add_option("model", rewrite.input, "Input ONNX model")->required();
  rewrite_cmd->add_option("-o,--output", rewrite.output, "Output path (default: MODEL.streaming.onnx beside the input)");
  rewrite_cmd->add_flag("--in-place", rewrite.in_place, "Replace the input file (atomically)");
  rewrite_cmd->add_flag("--dry-run", rewrite.dry_run, "Print the plan, write nothing");
  rewrite_cmd->add_option("--state-inputs", rewrite.mode,
                          "defaults: unfed state inputs reproduce the original model (ONNX Runtime C/C++/Python/C#/Java); "
                          "required: plain inputs, feed zeros first (onnxruntime-node/-web)")
      ->check(CLI::IsMember({"defaults", "required"}));
  rewrite_cmd->add_option("--nodes", rewrite.nodes, "Only rewrite nodes whose name (or graph/name) matches this regex");
  rewrite_cmd->add_option("--input-names", rewrite.input_names, "Template for new state inputs ({node}, {kind}, {op})");
  rewrite_cmd->add_option("--output-names", rewrite.output_names, "Template for new state outputs");
  rewrite_cmd->add_flag("--strict", rewrite.strict, "Fail (exit 4) when any state cannot be rewritten");

  ReportArgs report;
  CLI::App* report_cmd = app.add_subcommand("report", "Show the recurrent nodes and their state wiring");
  report_cmd->add_option("model", report.input, "Input ONNX model")->required();
  report_cmd->add_flag("--json", report.json, "Print JSON instead of a table");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : static_cast<int>(ExitCode::kUsage);
  }
  SetUpLogging(quiet);
  try {
    if (*rewrite_cmd) return RunRewrite(rewrite);
    return RunReport(report);
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
