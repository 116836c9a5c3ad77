#pragma once
/// \file
/// A command of the command line as one row of the command table (command_table.cc): its name, its
/// one-line help, the examples that end its --help, and a function that adds its options to the parser
/// and returns what runs it. Each command is one file (`cli/NAME_command.cc`) holding its options struct
/// — one per command, the library's own structs inside it carrying the defaults — the declaration of
/// its options, its run over the files and its per-file work.

#include <functional>
#include <memory>
#include <vector>

namespace CLI {
class App;
}

namespace rnnstate::cli {

/// A declared command, ready to run on the options the parser has filled: takes `quiet` (-q: only errors
/// on stderr) and returns the exit code (over several files, the highest of any file). Throws Error for
/// usage problems.
using Runner = std::function<int(bool quiet)>;

/// One row of the command table.
struct Command {
  const char* name;
  const char* help;      ///< the line `rnnstate --help` shows beside the name
  const char* examples;  ///< ends the command's --help; `rnnstate --help` ends with every command's
  /// Adds the command's options to `command` (its own subcommand of the parser), filling an options
  /// struct of its own, and returns what runs the command on them once parsed.
  Runner (*declare)(CLI::App& command);
};

/// The commands, in the order `rnnstate --help` lists them.
const std::vector<Command>& Commands();

/// A command's `declare`: `Add` adds the options to `command`, filling a fresh `Options`, and `Run` runs
/// on them once parsed.
template <typename Options, void (*Add)(CLI::App&, Options&), int (*Run)(const Options&, bool)>
Runner Declare(CLI::App& command) {
  auto options = std::make_shared<Options>();
  Add(command, *options);
  return [options](bool quiet) { return Run(*options, quiet); };
}

}  // namespace rnnstate::cli
