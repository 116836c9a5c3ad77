#pragma once
/// \file
/// What the commands over files share: the options every such command has, and running one command's
/// per-file work over the files with each result printed in input order.

#include <functional>
#include <string>
#include <vector>

#include "cli/file_discovery.h"
#include "cli/file_result.h"

namespace CLI {
class App;
}

namespace rnnstate::cli {

/// Options every command over files has.
struct FilesOptions {
  std::vector<std::string> paths;
  int jobs = 0;  ///< 0: one per core
  bool fail_fast = false;
  bool json = false;
};

/// Adds the path arguments, -j and --fail-fast to `command` (each command adds its own --json).
void AddFilesOptions(CLI::App& command, FilesOptions& options);

/// True when `path` is a directory.
bool IsDirectory(const std::string& path);

/// One path argument naming a file (not a directory): the single-file forms (-o, one JSON report).
bool IsSingleFile(const FilesOptions& options);

/// How results go to stdout.
enum class Printing {
  kText,        ///< each file's text
  kJsonLines,   ///< one record per file, then the summary record
  kSingleJson,  ///< `report --json` on one file: the report object alone
};

/// Runs `process(i)` for each of `inputs` (on worker threads) and prints each result in input order;
/// returns the batch exit code.
int RunFiles(const std::vector<InputFile>& inputs, const FilesOptions& options, Printing printing, bool quiet,
             const std::function<FileResult(size_t)>& process);

}  // namespace rnnstate::cli
