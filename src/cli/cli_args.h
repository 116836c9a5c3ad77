#pragma once
/// \file
/// The command line as plain data: each subcommand's options, which main.cc's parser fills (one struct
/// per row of its kSubcommands) and the subcommand (cli_run.h) reads. `-q` is passed on its own.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rnnstate::cli {

/// Options every command over files has.
struct FilesArgs {
  std::vector<std::string> paths;
  int jobs = 0;  ///< 0: one per core
  bool fail_fast = false;
  bool json = false;
};

struct RewriteArgs {
  FilesArgs files;
  std::string output;
  std::string out_dir;
  bool in_place = false;
  bool dry_run = false;
  bool strict = false;
  bool fsync = false;
  bool no_fsync = false;
  std::string mode = "defaults";
  std::string nodes;
  std::string input_names = "{node}.{kind}_in";
  std::string output_names = "{node}.{kind}_out";
  bool streamable_only = false;
  std::string pack = "none";
  std::string layout = "node";
  std::string packed_input = "state_in";
  std::string packed_output = "state_out";
  bool packed_input_given = false;  ///< --packed-input was on the command line (a collision is then an error)
  bool packed_output_given = false;
  std::vector<std::string> time_axes;
  std::vector<std::string> input_contexts;
  bool no_conv_context = false;
  bool lookahead = false;
};

struct CheckArgs {
  FilesArgs files;
  bool streamable_only = false;
};

struct ReportArgs {
  FilesArgs files;
  std::string format = "text";
  bool format_given = false;  ///< --format was on the command line (it may conflict with --json)
};

struct InitArgs {
  FilesArgs files;
  std::optional<int64_t> batch;
  std::vector<std::string> dims;  ///< NAME=VALUE
};

struct ExportArgs {
  std::string target;
  std::string model;
  bool json = false;
  std::string repository;  ///< triton: -o, the model repository to write the entry into
  std::string name;        ///< triton: --name
  std::optional<int64_t> max_batch_size;  ///< triton: --max-batch-size (none: chosen by the model)
};

/// `verify`'s arguments, passed on unread to the helper's checker (`rnnstate-stream verify`), whose own
/// command line they are: its --help included.
struct VerifyArgs {
  std::vector<std::string> arguments;
};

}  // namespace rnnstate::cli
