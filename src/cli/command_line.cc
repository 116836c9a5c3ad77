// rnnstate: the command line. Declares every command of the command table (command_table.cc) to the
// parser, runs the one given on its parsed options, and maps errors to the documented exit codes.

#include "cli/command_line.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>

#include "cli/closest_name.h"
#include "cli/command.h"
#include "cli/version.h"
#include "rnnstate/error.h"

namespace rnnstate::cli {

namespace {

constexpr const char* kExitCodes = R"(
Exit codes: 0 ok, 1 check or verify failed, 2 usage, 3 unreadable or invalid input (verify: also Node.js or
onnxruntime-node missing), 4 unsupported model (verify: refused, e.g. a fixed-length time axis or a state marked
not carried), 5 cannot write, 6 internal error. Over several files: the highest code of any file.
)";

/// Diagnostics go to stderr as "rnnstate: <level>: ..."; `quiet` keeps only errors.
void SetUpLogging(bool quiet) {
  // A logger of that name from an earlier run in this process (RunCommandLine called again) would make
  // creating it throw.
  spdlog::drop("rnnstate");
  auto logger = spdlog::stderr_color_st("rnnstate");
  logger->set_pattern("rnnstate: %l: %v");
  logger->set_level(quiet ? spdlog::level::err : spdlog::level::info);
  spdlog::set_default_logger(logger);
}

/// The first argument that is not an option — the command's name (the options before it take no
/// value) — when it names no command: "unknown command 'rewirte'; did you mean 'rewrite'?". Empty when
/// the command is known or absent.
std::string UnknownCommand(int argc, char** argv) {
  std::vector<std::string> names;
  for (const Command& command : Commands()) names.emplace_back(command.name);
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.empty() || word[0] == '-') continue;
    if (std::find(names.begin(), names.end(), word) != names.end()) return "";
    const std::optional<std::string> meant = ClosestName(word, names);
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
  for (const Command& command : Commands()) text += command.examples;
  return text + "\n" + kExitCodes;
}

}  // namespace

int RunCommandLine(int argc, char** argv) {
  CLI::App app{"rnnstate: expose the hidden state of RNN/GRU/LSTM nodes in ONNX models for streaming"};
  app.footer(AllExamples());
  CLI::Option* version = app.set_version_flag(
      "--version", [&app] { return app.count("--json") ? VersionJson() : VersionText(); },
      "Print the version, source revision and onnx/protobuf versions, then exit");
  app.add_flag("--json", "With --version: print it as one JSON object")->needs(version);
  app.require_subcommand(1);
  app.fallthrough();  // -q works after the subcommand too
  bool quiet = false;
  app.add_flag("-q,--quiet", quiet, "Only print errors on stderr");

  std::vector<std::pair<CLI::App*, Runner>> commands;
  for (const Command& row : Commands()) {
    CLI::App* command = app.add_subcommand(row.name, row.help);
    command->footer(std::string("Examples:") + row.examples + "\n" + kExitCodes);
    commands.emplace_back(command, row.declare(*command));
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
