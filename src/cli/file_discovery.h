#pragma once
/// \file
/// The work list of a command over many files: the model files named or found below directory arguments
/// (walked recursively), and where `rewrite` writes each output.

#include <string>
#include <string_view>
#include <vector>

#include "cli/file_result.h"

namespace rnnstate {

/// The file name suffix `rewrite` gives its outputs by default (`model.onnx` -> `model.streaming.onnx`).
inline constexpr const char* kStreamingSuffix = ".streaming.onnx";

/// One entry of the work list built from the path arguments.
struct InputFile {
  std::string path;      ///< the file to read (an argument, or joined from a directory argument)
  std::string root;      ///< the directory argument it was found under; "" for a file argument
  std::string relative;  ///< path below `root` (the file name for a file argument), for --out-dir
  /// Non-empty when this entry stands for an argument that yields no model (a directory without
  /// `*.onnx` files, an unreadable directory); `path` is then that argument.
  std::string error;
  /// Identifies the file however it was named (`a/../m.onnx`, a symlink); set by FindModelFiles.
  std::string key;
};

/// How directories are walked.
struct DiscoveryOptions {
  /// Files found in directories whose name ends with this are left out ("" keeps all); files named
  /// on the command line are always kept.
  std::string skip_suffix;
  /// A directory not to descend into (the --out-dir, so that re-runs do not read their own outputs).
  std::string skip_directory;
};

/// Whether a directory's walk lists the file `name` (a file name, or a path ending in one): a `*.onnx` name.
bool IsModelFileName(std::string_view name);

/// Expands path arguments in order: a directory yields its `*.onnx` entries at any depth that are not
/// directories, sorted by their path below it — regular files, and also FIFOs, devices, sockets and
/// dangling symlinks, which then fail when they are loaded (refused from their stat, never read), as they
/// would named on the command line; any other argument is kept as it is (a missing file then fails when
/// it is loaded).
/// A file reached twice is kept once, at its first position.
std::vector<InputFile> FindModelFiles(const std::vector<std::string>& arguments, const DiscoveryOptions& options);

/// Where `rewrite` writes each output.
enum class OutputMode {
  kSuffix,    ///< beside the input: `model.onnx` -> `model.streaming.onnx`
  kOutDir,    ///< under a directory, mirroring each input's path below its directory argument
  kInPlace,   ///< over the input
  kExplicit,  ///< one given path (-o; one input file only)
};

/// `model.onnx` -> `model.streaming.onnx` (any other name gets the suffix appended).
std::string SuffixOutputPath(const std::string& input);

/// The output path of `input` in `mode`; `target` is the --out-dir or the -o path.
std::string OutputPathFor(const InputFile& input, OutputMode mode, const std::string& target);

/// Why these outputs cannot be written in one run — an output written twice, an output that is an
/// existing directory, or an output that is another input or (outside in-place mode) its own input — or
/// "" when they can. `outputs[i]` belongs to `inputs[i]` (as returned by FindModelFiles, with their keys);
/// entries with an error are ignored.
std::string OutputConflict(const std::vector<InputFile>& inputs, const std::vector<std::string>& outputs,
                           bool in_place);

/// A result for an InputFile that carries an error (exit code kBadInput).
FileResult DiscoveryErrorResult(const InputFile& input);

}  // namespace rnnstate
