#pragma once
/// \file
/// What `rewrite`, `report`, `check`, `init` and `export` do with one file, as a FileResult (see batch.h):
/// safe to call from worker threads (nothing is printed, nothing thrown; failures are in the result). The
/// analysis behind them is pipeline.h's; call PrepareForWorkers (there) before starting workers.

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "cli/file_result.h"
#include "rnnstate/options.h"
#include "rnnstate/pipeline.h"

namespace rnnstate {

/// How `rewrite` treats each file.
struct RewriteSettings {
  PlanOptions plan;
  bool strict = false;              ///< a skipped state is an error (exit 4)
  bool dry_run = false;             ///< plan only, write nothing
  bool in_place = false;            ///< output == input; an unchanged model is not rewritten
  bool create_directories = false;  ///< create the output's missing parent directories (--out-dir)
  bool label_lines = false;         ///< prefix --dry-run plan lines with the input path (several files)
  bool defer_sync = false;          ///< do not fsync each output; the caller calls SyncOutputs at the end
};

/// Rewrites `input` to `output`. Result: status ok (changed) or unchanged, `states` the pairs recorded
/// in the output, `text` the line(s) printed today for one file.
FileResult RewriteFile(const std::string& input, const std::string& output, const RewriteSettings& settings);

/// Reports on `input`. `text` holds the table or the DOT source; for kJson, details["report"] holds the
/// report object. `states` are the pairs recorded in the model.
FileResult ReportFile(const std::string& input, ReportFormat format);

/// Checks `input` (see check.h). Status failed with exit code kCheckFailed when there are problems; each
/// is in details["problems"] ({"kind", "message"}) and, as `PATH: message`, in `text`.
/// With `streamable_only`, states that cannot stream are not required to be exposed.
FileResult CheckFile(const std::string& input, bool streamable_only = false);

/// What `init` needs besides the file: the batch size and values of other symbolic dimensions.
struct InitSettings {
  std::optional<int64_t> batch;  ///< unset: the batch dimension's value from `dims`, else 1
  std::map<std::string, int64_t> dims;
};

/// The first call's feed of every state input of `input` (from its `rnnstate` metadata): `text` one line
/// per input, details["feeds"] the JSON list. A model without recorded pairs has no feeds (a warning).
FileResult InitFile(const std::string& input, const InitSettings& settings);

/// Serving runtimes `export` writes a model's state wiring for.
enum class ExportTarget {
  kTriton,    ///< a model-repository entry: config.pbtxt and 1/model.onnx
  kOpenVino,  ///< MakeStateful's parameter -> result names
};

/// What `export` writes or prints.
struct ExportSettings {
  ExportTarget target = ExportTarget::kTriton;
  bool json = false;           ///< openvino: the JSON form
  std::string repository;      ///< triton: write the entry under this directory ("": print config.pbtxt)
  std::string name;            ///< triton: the model's name in the repository ("": the file's stem)
  /// triton: the config's max_batch_size; none: 8 where Triton can batch the model, else 0
  std::optional<int64_t> max_batch_size;
};

/// The state wiring of `input` for the target (from its metadata): `text` what is printed (with `json`,
/// details["openvino"] holds the JSON form for OpenVINO). For Triton with a repository, writes
/// REPOSITORY/NAME/config.pbtxt and REPOSITORY/NAME/1/model.onnx (the model as it is, external data
/// beside it) and `output` names the entry. A model the runtime cannot serve as recorded is an error with
/// the reason (exit code 4).
FileResult ExportFile(const std::string& input, const ExportSettings& settings);

}  // namespace rnnstate
