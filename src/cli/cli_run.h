#pragma once
/// \file
/// The subcommands of the command line, each run on its parsed options (cli_args.h). Each returns the
/// exit code (over several files, the highest of any file) and throws Error for usage problems.

#include "cli/cli_args.h"

namespace rnnstate::cli {

/// Diagnostics go to stderr as "rnnstate: <level>: ..."; `quiet` keeps only errors.
void SetUpLogging(bool quiet);

/// `rewrite`: the state rewrite of every file, written per -o / --in-place / --out-dir / the suffix.
int RunRewrite(const Args& args);
/// `report`: text, JSON or DOT of every file's state wiring.
int RunReport(const Args& args);
/// `check`: the CI gate over every file.
int RunCheck(const Args& args);
/// `init`: the first call's feeds of every file's state inputs.
int RunInit(const Args& args);
/// `export`: one model's state wiring for a serving runtime.
int RunExport(const Args& args);

}  // namespace rnnstate::cli
