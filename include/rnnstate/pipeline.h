#pragma once
/// \file
/// The whole rewrite in one call: index -> analyze -> plan -> apply -> validate, for callers that do
/// not need the stages one by one (the CLI, tests).

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "rnnstate/analysis.h"
#include "rnnstate/plan.h"

namespace rnnstate {

/// Oldest ai.onnx opset supported: LSTM/GRU/RNN-7 introduced today's signature.
inline constexpr int64_t kMinOpset = 7;

/// What a rewrite did.
struct RewriteOutcome {
  Analysis analysis;
  Plan plan;
  bool changed = false;               ///< the model was modified
  std::vector<std::string> warnings;  ///< non-fatal problems (skipped states, checks not run)
};

/// Analyzes and plans without modifying `model` (report, --dry-run). Throws Error(kUnsupported) for an
/// unsupported opset when the model has recurrent nodes.
RewriteOutcome PlanRewrite(const onnx::ModelProto& model, const PlanOptions& options);

/// Rewrites `model` in place and validates the result. With `strict`, any skipped state is an
/// Error(kUnsupported) and `model` is left unchanged. Throws Error(kInternal) when validation fails.
/// `model_dir` is where the model's external data files are ("" = current directory).
RewriteOutcome RewriteModel(onnx::ModelProto& model, const PlanOptions& options, bool strict,
                            const std::string& model_dir = "");

}  // namespace rnnstate
