#pragma once

namespace rnnstate::cli {

/// Runs one rnnstate command line (argv[0] is the program's name, as the messages show it) and returns
/// its exit code: what `main` does (src/cli/entry.cc), callable without a process of its own (the
/// golden tests' runner forks a child per command line: tests/cli/fork_runner.cc).
int RunCommandLine(int argc, char** argv);

}  // namespace rnnstate::cli
