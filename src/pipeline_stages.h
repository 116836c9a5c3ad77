#pragma once
/// \file
/// The whole rewrite in one call: index -> analyze -> plan -> apply -> validate, for callers that do
/// not need the stages one by one (the CLI, tests).

#include <onnx/onnx_pb.h>

#include <future>
#include <string>
#include <vector>

#include "find/analysis.h"
#include "rewrite/plan.h"
#include "rnnstate/options.h"
#include "rnnstate/warning.h"

namespace rnnstate {

/// What a rewrite did.
struct RewriteOutcome {
  Analysis analysis;
  Plan plan;
  bool changed = false;           ///< the model was modified
  std::vector<Warning> warnings;  ///< non-fatal problems (skipped states, checks not run), in print order
  /// What the stage after the state rewrite (layout, packing) did, one line each. After RewriteModel,
  /// `plan.pairs` are the pairs recorded in the model, after that stage too.
  std::vector<std::string> transform_lines;
  /// What `--time-axis` changes before the states are planned (one line each, for --dry-run).
  std::vector<std::string> time_axis_changes;
  /// The analysis's index being freed on another thread (a big graph's maps and inferred copy take a
  /// while to free); the outcome waits for it when it goes.
  std::future<void> index_released;

  /// Every line of the plan in the order --dry-run prints them: time axes, one per state edit, transforms.
  std::vector<std::string> PlanLines() const;
};

/// Analyzes and plans without modifying `model` (report, --dry-run); with `--time-axis`, on a copy with
/// the time axes applied. Throws Error(kBadInput) naming the first rule an invalid model breaks (see
/// IndexValidModel). An unsupported opset is marked as every node's problem (see RequireSupportedOpset).
/// `inline_tensors`: see InlineTensors (rnnstate/options.h).
RewriteOutcome PlanRewrite(const onnx::ModelProto& model, const PlanOptions& options,
                           InlineTensors inline_tensors = InlineTensors::kCheck);

/// Throws Error(kUnsupported) when the model has recurrent nodes but no supported ai.onnx opset: what
/// `rewrite` (and its --dry-run) reports with exit code 4.
void RequireSupportedOpset(const Analysis& analysis);

/// Rewrites `model` in place — first its `--time-axis` edits (time_axis.h), then its states, then the
/// layout and packing `options` ask for (state_transform.h) — and validates the result. Throws
/// Error(kBadInput) for an invalid model (see IndexValidModel). With `strict`, any skipped state is an
/// Error(kUnsupported) and `model` is left unchanged. Throws Error(kInternal) when validation fails.
/// `model_dir` is where the model's external data files are ("" = current directory).
RewriteOutcome RewriteModel(onnx::ModelProto& model, const PlanOptions& options, bool strict,
                            const std::string& model_dir = "");

}  // namespace rnnstate
