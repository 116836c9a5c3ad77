// The command table: one row per command, in the order `rnnstate --help` lists them. A new command is one
// file of its own (cli/NAME_command.cc, defining NAMECommand(): its options, its run, its per-file work)
// and its row here, declared beside it.

#include "cli/command.h"

namespace rnnstate::cli {

Command RewriteCommand();  // cli/rewrite_command.cc
Command ReportCommand();   // cli/report_command.cc
Command CheckCommand();    // cli/check_command.cc
Command InitCommand();     // cli/init_command.cc
Command ExportCommand();   // cli/export_command.cc
Command VerifyCommand();   // cli/verify_command.cc

const std::vector<Command>& Commands() {
  static const std::vector<Command> commands = {RewriteCommand(), ReportCommand(), CheckCommand(),
                                                InitCommand(),    ExportCommand(), VerifyCommand()};
  return commands;
}

}  // namespace rnnstate::cli
