#pragma once
/// \file
/// Open a model file for rewriting (large payloads stay in the file, see ModelFile),
/// refuse what is incomplete or unsafe, and write the result atomically with its external data.

#include <string>
#include <vector>

#include "io/model_file.h"

namespace rnnstate {

/// A model file opened for rewriting, with the external data files it refers to.
struct OpenedModel {
  ModelFile file;
  std::string directory;                     ///< the model's directory ("." for the current one)
  std::vector<std::string> external_data;    ///< locations of its external data files, checked
};

/// Opens `path`. Throws Error(kBadInput) naming the problem: missing, a directory or another file that is
/// not a regular file (never opened), empty, not ONNX, truncated, no opset_import, external data that
/// CheckExternalData refuses (every tensor's location and range, wherever the tensor lives), inline values
/// FirstInlineDataProblem refuses (tensor_data.h; a payload left in the file by its length there).
OpenedModel OpenModel(const std::string& path);

/// Writes the (possibly edited) model to `output` atomically. When `output` is in another directory,
/// the external data files are made available beside it first (hard link, else copy; see
/// data_placement.h, whose OutputDataConflict the caller has checked). Throws Error(kCannotWrite);
/// `output` is then untouched and the data files placed for it are removed again. With `durability`
/// kDeferred the caller must call SyncOutputs once all files are written.
void WriteModel(const OpenedModel& opened, const std::string& output,
                ModelFile::Durability durability = ModelFile::Durability::kSync);

/// Flushes the filesystems holding `outputs` to disk (one syncfs per filesystem): the end of a batch
/// written with deferred durability, far cheaper than one fsync per file. Throws Error(kCannotWrite).
void SyncOutputs(const std::vector<std::string>& outputs);

}  // namespace rnnstate
