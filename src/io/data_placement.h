#pragma once
/// \file
/// The external data files of a model written to another directory (model_io's WriteModel): the output
/// path checked against them before anything is done, the files made available beside the output, and
/// removed again when the output cannot be written, so that a failed write leaves nothing behind.

#include <string>
#include <vector>

namespace rnnstate {

/// Why writing the model of `model_dir`, whose external data files are `locations`, to `output` would
/// destroy or break external data, or "": `output` is one of those files under any name (the same path
/// spelled with `..` or through a symlinked directory, a symlink to it, another hard link to it), or it
/// is where the output's own copy of one must go (DirectoryOf(output)/location). A usage error (exit 2):
/// the caller refuses it before the model is rewritten.
std::string OutputDataConflict(const std::vector<std::string>& locations, const std::string& model_dir,
                               const std::string& output);

/// The external data files (and directories) that ProvideExternalData, or the directories that
/// CreateOutputDirectories, created for one output. Destroyed
/// without Keep(), it removes them again — except those another output written by this process relies on
/// (outputs in one directory share their data files: one model's failure must not take them from another).
class PlacedData {
 public:
  PlacedData() = default;
  PlacedData(PlacedData&& other) noexcept;
  PlacedData& operator=(PlacedData&&) = delete;
  PlacedData(const PlacedData&) = delete;
  ~PlacedData();

  /// The output was written: what was placed stays.
  void Keep();

 private:
  friend PlacedData ProvideExternalData(const std::vector<std::string>&, const std::string&, const std::string&);
  friend PlacedData CreateOutputDirectories(const std::string&);
  std::vector<std::string> paths_;  ///< created by this run, in creation order (directories before their files)
  bool kept_ = false;
};

/// Makes the external data files `locations` of a model in `from_dir` available to the same model
/// written into `to_dir`, under the same relative names: a hard link where possible, else a copy
/// (through a temporary file and a rename). Nothing to do when both directories are the same. Only a
/// regular file is linked or read. An existing different file at the destination is never overwritten:
/// Error(kCannotWrite); a source that is no longer a regular file: Error(kBadInput). On any error, what it
/// had placed is removed.
[[nodiscard]] PlacedData ProvideExternalData(const std::vector<std::string>& locations, const std::string& from_dir,
                                             const std::string& to_dir);

/// Creates `directory` and its missing ancestors for an output (`--out-dir`). Destroyed without Keep()
/// (the output could not be written), the directories it created are removed again, innermost first and
/// only when empty, unless another output of this run relies on them. Error(kCannotWrite) when one cannot
/// be created (what it had created is removed).
[[nodiscard]] PlacedData CreateOutputDirectories(const std::string& directory);

}  // namespace rnnstate
