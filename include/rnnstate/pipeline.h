#pragma once
/// \file
/// The library's façade for a program that embeds rnnstate: rewrite, check or report one model held in
/// memory. (commands.h does the same for files, batch.h for many files.) Everything here is documented
/// in docs/guide.md; errors are rnnstate::Error with the exit code the CLI would return. All three refuse an
/// invalid model (docs/validation.md) with the same Error(kBadInput, "invalid model: ...").

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "rnnstate/check_problem.h"
#include "rnnstate/error.h"
#include "rnnstate/json.h"
#include "rnnstate/metadata.h"
#include "rnnstate/options.h"

namespace rnnstate {

/// What a rewrite of one model did.
struct RewriteResult {
  bool changed = false;               ///< the model was modified
  std::vector<StatePair> pairs;       ///< the state pairs recorded in the model's metadata
  std::vector<std::string> warnings;  ///< non-fatal problems (skipped states, checks not run)
};

/// Rewrites `model` in place so that its recurrent states are graph inputs and outputs, and validates
/// the result. With `strict`, a state that cannot be rewritten is an Error(kUnsupported) and `model` is
/// left unchanged. `model_dir` is where the model's external data files are ("" = current directory).
RewriteResult RewriteForStreaming(onnx::ModelProto& model, const PlanOptions& options = {}, bool strict = false,
                                  const std::string& model_dir = "");

/// The problems `rnnstate check` finds in `model`; empty when it passes.
std::vector<CheckProblem> CheckForStreaming(const onnx::ModelProto& model);

/// The report of `model` (`rnnstate report --json`; schema in docs/guide.md). `file` is shown as its name.
Json ReportOf(const onnx::ModelProto& model, const std::string& file = "");

}  // namespace rnnstate
