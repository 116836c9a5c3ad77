#include "pipeline_stages.h"

#include <algorithm>
#include <functional>
#include <future>
#include <set>

#include "graph/model_index.h"
#include "pack/state_transform.h"
#include "rewrite/apply.h"
#include "rewrite/planner.h"
#include "rewrite/time_axis.h"
#include "rnnstate/error.h"
#include "rnnstate/pipeline.h"
#include "rules/model_rules.h"
#include "rules/validate.h"
#include "views/check.h"
#include "views/report.h"

namespace rnnstate {

namespace {

/// Why the model's opset rules out adding operators, or "" (also when no state needs any: states the
/// model already exposes are only recorded in the metadata, whatever the opset).
std::string OpsetProblem(const Analysis& analysis) {
  const bool adds = std::any_of(analysis.states.begin(), analysis.states.end(),
                                [](const StateAnalysis& state) { return !state.exposed; });
  if (!adds) return "";
  if (analysis.onnx_opset == 0) return "the model imports no ai.onnx opset";
  if (analysis.onnx_opset < kMinOpset) {
    return "ai.onnx opset " + std::to_string(analysis.onnx_opset) + " is not supported (rnnstate needs opset " +
           std::to_string(kMinOpset) + " or newer)";
  }
  return "";
}

std::vector<std::string> SkipWarnings(const Plan& plan) {
  std::vector<std::string> warnings;
  for (const auto& skip : plan.skipped) {
    warnings.push_back(skip.graph + " " + skip.node + (skip.kind.empty() ? "" : " (" + skip.kind + ")") +
                       ": not rewritten: " + skip.reason);
  }
  return warnings;
}

/// The analysis and plan of `model`'s states. Throws Error(kBadInput) for an invalid model.
/// `structure_valid` as IndexValidModel's.
RewriteOutcome PlanStates(const onnx::ModelProto& model, const PlanOptions& options,
                          const std::function<void()>& structure_valid = {}) {
  // A model that is already broken (e.g. reads a name nothing defines, an LSTM with hidden_size 0) must
  // be refused, not reported, planned or blamed on the rewrite: it is bad input.
  const ModelIndex index = IndexValidModel(model, structure_valid);
  RewriteOutcome outcome;
  outcome.analysis = Analyze(index);
  // Marked on every state that would need operators rather than thrown, so that `report` still shows the
  // model.
  if (std::string problem = OpsetProblem(outcome.analysis); !problem.empty()) outcome.analysis.MarkUnexposed(problem);
  // A model packed or made batch-first is final for the state rewrite: its pairs are kept as they are.
  outcome.plan =
      TransformsOf(model).any() ? KeepTransformedPlan(outcome.analysis) : MakePlan(index, outcome.analysis, options);
  outcome.warnings = SkipWarnings(outcome.plan);
  for (const StateNote& note : outcome.analysis.notes) {
    if (note.Warns()) outcome.warnings.push_back(StateNoteText(note) + " (not rewritten)");
  }
  outcome.warnings.insert(outcome.warnings.end(), outcome.plan.notes.begin(), outcome.plan.notes.end());
  if (!outcome.analysis.metadata_error.empty()) {
    outcome.warnings.push_back(outcome.analysis.metadata_error + " (it will be rewritten)");
  }
  return outcome;
}

/// Plans `--time-axis` and, when it changes something, applies it to a copy of `model`; `plan` says what.
std::optional<onnx::ModelProto> StageTimeAxes(const onnx::ModelProto& model, const PlanOptions& options,
                                              TimeAxisPlan* plan) {
  if (options.time_axes.empty()) return std::nullopt;
  *plan = PlanTimeAxes(IndexValidModel(model), options.time_axes);
  if (!plan->Changes()) return std::nullopt;
  onnx::ModelProto staged = model;
  ApplyTimeAxes(*plan, staged);
  return staged;
}

/// Puts the `--time-axis` stage's lines and warnings in front of the state plan's. A state's "rewrite with
/// --time-axis x:1" advice is wrong when that very option was given and refused: it points to the refusal.
void AddTimeAxisNotes(const TimeAxisPlan& plan, RewriteOutcome& outcome) {
  outcome.time_axis_changes = plan.Describe();
  for (const std::string& text : plan.refused) {
    const std::string advice = "rewrite with --time-axis " + text + " to stream chunks of any length";
    for (std::string& warning : outcome.warnings) {
      for (size_t at = warning.find(advice); at != std::string::npos; at = warning.find(advice, at)) {
        warning.replace(at, advice.size(), "--time-axis " + text + " did not apply (see its warning)");
      }
    }
  }
  outcome.warnings.insert(outcome.warnings.begin(), plan.warnings.begin(), plan.warnings.end());
}

}  // namespace

void RequireSupportedOpset(const Analysis& analysis) {
  if (std::string problem = OpsetProblem(analysis); !problem.empty()) throw Error(ExitCode::kUnsupported, problem);
}

RewriteOutcome PlanRewrite(const onnx::ModelProto& model, const PlanOptions& options) {
  TimeAxisPlan time_axes;
  const std::optional<onnx::ModelProto> staged = StageTimeAxes(model, options, &time_axes);
  RewriteOutcome outcome = PlanStates(staged ? *staged : model, options);
  AddTimeAxisNotes(time_axes, outcome);
  return outcome;
}

RewriteOutcome RewriteModel(onnx::ModelProto& model, const PlanOptions& options, bool strict,
                            const std::string& model_dir) {
  // The time axes are applied to a copy, so that a failure below leaves `model` as it was.
  TimeAxisPlan time_axes;
  std::optional<onnx::ModelProto> staged = StageTimeAxes(model, options, &time_axes);
  onnx::ModelProto& target = staged ? *staged : model;
  // onnx's checker on the input (the validation's baseline) only reads it: it runs beside the analysis,
  // from the moment the structure is known to be valid, and is done before anything changes the input.
  std::future<std::optional<std::string>> input_checked;
  RewriteOutcome outcome = PlanStates(target, options, [&] { input_checked = StartChecker(model, model_dir); });
  AddTimeAxisNotes(time_axes, outcome);
  RequireSupportedOpset(outcome.analysis);
  if (strict && !outcome.plan.skipped.empty()) {
    throw Error(ExitCode::kUnsupported, "--strict: " + SkipWarnings(outcome.plan).front());
  }
  // A packed or batch-first model still has its mode to switch (the transform stage does that).
  const bool switch_mode = options.mode == StateInputMode::kRequired && TransformsOf(target).any();
  if (!outcome.plan.ChangesModel() && !options.Transforms() && !switch_mode && !staged) return outcome;
  ValidationBaseline baseline =
      MakeValidationBaseline(model, outcome.analysis.inference_error.empty(), model_dir, std::move(input_checked));
  if (!baseline.why_not.empty()) outcome.warnings.push_back("full validation skipped: " + baseline.why_not);
  for (const std::string& op : baseline.unchecked_ops) {
    outcome.warnings.push_back("onnx 1.12 has no schema for " + op +
                               ": its checker and shape inference pass over those nodes unchecked (the rest of the "
                               "rewrite is checked)");
  }
  outcome.changed = staged.has_value();
  std::set<std::string> own_outputs;  // the model's interface, which packing and layout keep
  for (const auto& output : target.graph().output()) own_outputs.insert(output.name());
  if (outcome.plan.ChangesModel()) {
    ApplyPlan(outcome.plan, target);
    outcome.changed = true;
  }
  if (options.Transforms() || switch_mode) {
    TransformOutcome transform = TransformStates(target, options, own_outputs);
    outcome.changed |= transform.changed;
    if (options.pack != PackKind::kNone) {  // the notes are about state inputs packing replaced
      for (const std::string& note : outcome.plan.notes) {
        outcome.warnings.erase(std::remove(outcome.warnings.begin(), outcome.warnings.end(), note),
                               outcome.warnings.end());
      }
    }
    outcome.warnings.insert(outcome.warnings.end(), transform.warnings.begin(), transform.warnings.end());
    outcome.transform_lines = std::move(transform.lines);
    outcome.plan.pairs = std::move(transform.pairs);
  }
  if (outcome.changed) ValidateRewritten(target, baseline);
  if (staged) model = std::move(*staged);
  return outcome;
}

// The public façade (rnnstate/pipeline.h) over the stages.
RewriteResult RewriteForStreaming(onnx::ModelProto& model, const PlanOptions& options, bool strict,
                                  const std::string& model_dir) {
  RewriteOutcome outcome = RewriteModel(model, options, strict, model_dir);
  return RewriteResult{outcome.changed, outcome.plan.pairs, outcome.warnings};
}

std::vector<CheckProblem> CheckForStreaming(const onnx::ModelProto& model) {
  const ModelIndex index = IndexValidModel(model);
  return CheckModel(index, Analyze(index));
}

Json ReportOf(const onnx::ModelProto& model, const std::string& file) {
  RewriteOutcome outcome = PlanRewrite(model, PlanOptions{});
  return ReportJson(file, model, outcome.analysis, outcome.plan);
}

}  // namespace rnnstate
