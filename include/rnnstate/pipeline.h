#pragma once
/// \file
/// The library's façade for a program that embeds rnnstate, and the command line's only way into the
/// stages: rewrite, check or report one model held in memory. (src/cli/*_command.cc do the same for files.)
/// Everything here is documented in docs/guide.md; errors are rnnstate::Error with the exit code the CLI
/// would return. All three refuse an invalid model (docs/validation.md) with the same
/// Error(kBadInput, "invalid model: ...").

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "rnnstate/check_problem.h"
#include "rnnstate/error.h"
#include "rnnstate/json.h"
#include "rnnstate/metadata.h"
#include "rnnstate/options.h"
#include "rnnstate/warning.h"

namespace rnnstate {

/// What a rewrite of one model did.
struct RewriteResult {
  bool changed = false;              ///< the model was modified
  std::vector<StatePair> pairs;      ///< the state pairs recorded in the model's metadata
  std::vector<Warning> warnings;     ///< non-fatal problems (skipped states, checks not run), in print order
  bool has_recurrent_nodes = false;  ///< the model has owners of state (rewritten or not)
  /// What the rewrite changes, one line each: the `--time-axis` edits, then one line per state
  /// ("GRAPH OWNER KIND: input ...; output ..."), then the layout and packing (what `--dry-run` prints).
  std::vector<std::string> plan_lines;
};

/// Rewrites `model` in place so that its recurrent states are graph inputs and outputs, and validates
/// the result. With `strict`, a state that cannot be rewritten is an Error(kUnsupported) and `model` is
/// left unchanged. `model_dir` is where the model's external data files are ("" = current directory).
/// `inline_tensors`: whether the values stored in its tensors are checked here (InlineTensors, options.h).
RewriteResult RewriteForStreaming(onnx::ModelProto& model, const PlanOptions& options = {}, bool strict = false,
                                  const std::string& model_dir = "",
                                  InlineTensors inline_tensors = InlineTensors::kCheck);

/// How `check` judges a model.
struct CheckOptions {
  bool streamable_only = false;  ///< states that cannot stream need not be exposed
};

/// What `rnnstate check` finds in a model.
struct CheckResult {
  std::vector<CheckProblem> problems;  ///< empty when it passes; the first kMaxListedProblems of each kind
  size_t unlisted_problems = 0;        ///< problems found beyond those listed
  std::vector<Warning> warnings;       ///< what it warns about without failing (kind kNote)
  std::vector<StatePair> recorded;     ///< the pairs in the model's metadata
};

/// Checks `model` as `rnnstate check` does. `inline_tensors` as RewriteForStreaming's.
CheckResult CheckForStreaming(const onnx::ModelProto& model, const CheckOptions& options = {},
                              InlineTensors inline_tensors = InlineTensors::kCheck);

/// Output formats of a report.
enum class ReportFormat { kText, kJson, kDot };

/// A report of one model.
struct Report {
  std::string text;                 ///< kText: the table; kDot: the Graphviz source
  Json json;                        ///< kJson: the report object (schema in docs/guide.md)
  std::vector<StatePair> recorded;  ///< the pairs in the model's metadata
};

/// The report of `model` in `format` (`rnnstate report`). `file` is shown as its name. `inline_tensors` as
/// RewriteForStreaming's.
Report ReportModel(const onnx::ModelProto& model, const std::string& file, ReportFormat format,
                   InlineTensors inline_tensors = InlineTensors::kCheck);

/// The report of `model` as JSON (`rnnstate report --json`): ReportModel's kJson object.
Json ReportOf(const onnx::ModelProto& model, const std::string& file = "");

/// The state pairs `model`'s `rnnstate` metadata records, for a command that acts on them (`init`,
/// `export`). The metadata is untrusted input, read through the one validation every command uses
/// (docs/metadata.md): Error(kBadInput) naming the first broken rule, and how many more, when it breaks any.
std::vector<StatePair> ValidStatePairs(const onnx::ModelProto& model);

/// Builds onnx's operator schema registry (a lazily built function-local static: a concurrent caller
/// waits until the first one has built it) with ONNX Runtime's schemas (contrib_schemas.h, added once),
/// so that worker threads only ever read it. Call before starting workers; calling it early on another
/// thread hides its cost.
void PrepareForWorkers();

}  // namespace rnnstate
