#pragma once
/// \file
/// The subcommands of the command line, each run on its own parsed options (cli_args.h) and `quiet` (-q:
/// only errors on stderr). Each returns the exit code (over several files, the highest of any file) and
/// throws Error for usage problems. main.cc's kSubcommands binds each to its name and its options.

#include "cli/cli_args.h"

namespace rnnstate::cli {

/// Diagnostics go to stderr as "rnnstate: <level>: ..."; `quiet` keeps only errors.
void SetUpLogging(bool quiet);

/// `rewrite`: the state rewrite of every file, written per -o / --in-place / --out-dir / the suffix.
int RunRewrite(const RewriteArgs& args, bool quiet);
/// `report`: text, JSON or DOT of every file's state wiring.
int RunReport(const ReportArgs& args, bool quiet);
/// `check`: the CI gate over every file.
int RunCheck(const CheckArgs& args, bool quiet);
/// `init`: the first call's feeds of every file's state inputs.
int RunInit(const InitArgs& args, bool quiet);
/// `export`: one model's state wiring for a serving runtime.
int RunExport(const ExportArgs& args, bool quiet);
/// `verify`: the helper's checker (cli/node_verify.h) run in Node.js on the arguments; its exit code.
int RunVerify(const VerifyArgs& args, bool quiet);

}  // namespace rnnstate::cli
