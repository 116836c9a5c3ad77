#include "rnnstate/pipeline.h"

#include <onnx/defs/schema.h>

#include <algorithm>
#include <functional>
#include <future>
#include <map>
#include <optional>
#include <set>

#include "contract/applied_transforms.h"
#include "graph/contrib_schemas.h"
#include "graph/helper_thread.h"
#include "graph/model_index.h"
#include "pack/state_transform.h"
#include "pipeline_stages.h"
#include "rewrite/apply.h"
#include "rewrite/context_planner.h"
#include "rewrite/planner.h"
#include "rewrite/time_axis.h"
#include "rnnstate/error.h"
#include "rules/metadata_rules.h"
#include "rules/model_rules.h"
#include "time/stream_verdict.h"
#include "validate/validate.h"
#include "views/check.h"
#include "views/dot.h"
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

std::string SkipText(const SkippedState& skip) {
  return skip.graph + " " + skip.node + (skip.kind.empty() ? "" : " (" + skip.kind + ")") +
         ": not rewritten: " + skip.reason;
}

/// Appends each of `texts` as a warning of `kind`.
void AddWarnings(Warning::Kind kind, const std::vector<std::string>& texts, std::vector<Warning>& warnings) {
  for (const std::string& text : texts) warnings.push_back(Warning{kind, text});
}

/// The analysis and plan of `model`'s states, after the `--time-axis` stage planned `time_axes` (its
/// refusals are the analysis's input). Throws Error(kBadInput) for an invalid model. `origin_sources`: see
/// AnalysisOptions (report shows them). `structure_valid` and `inline_tensors` as IndexValidModel's.
/// `inferred`, when given, gets the model as the index saw it, with its inferred types (ModelIndex::inferred).
RewriteOutcome PlanStates(const onnx::ModelProto& model, const PlanOptions& options, const TimeAxisPlan& time_axes,
                          bool origin_sources, InlineTensors inline_tensors,
                          const std::function<void()>& structure_valid = {}, InferredModel* inferred = nullptr) {
  // A model that is already broken (e.g. reads a name nothing defines, an LSTM with hidden_size 0) must
  // be refused, not reported, planned or blamed on the rewrite: it is bad input.
  ModelIndex index = IndexValidModel(model, structure_valid, inline_tensors);
  RewriteOutcome outcome;
  AnalysisOptions analysis_options;
  analysis_options.refused_time_axes.insert(time_axes.refused.begin(), time_axes.refused.end());
  analysis_options.origin_sources = origin_sources;
  analysis_options.owner_types_checked = true;  // IndexValidModel checked them
  outcome.analysis = Analyze(index, analysis_options);
  std::vector<InputAxis> time_axes_given;
  for (const TimeAxisOption& axis : options.time_axes) time_axes_given.push_back(InputAxis{axis.input, axis.axis});
  ContextFrames planned_contexts;  // the contexts a rewrite adds: judged as the rewritten model will be
  for (const InputContextOption& context : options.input_contexts) planned_contexts[context.input] = context.frames;
  // Marked on every state that would need operators rather than thrown, so that `report` still shows the
  // model; no window gets a context either (the rewrite refuses the opset: report and check judge the model
  // as it is).
  const std::string opset_problem = OpsetProblem(outcome.analysis);
  const bool contexts = options.conv_context && opset_problem.empty();
  JudgeStream(index, outcome.analysis, time_axes_given, planned_contexts, contexts, contexts && options.lookahead);
  if (!opset_problem.empty()) outcome.analysis.MarkUnexposed(opset_problem);
  // A model packed or made batch-first is final for the state rewrite: its pairs are kept as they are.
  const bool transformed = TransformsOf(model).any();
  if (transformed) RequireRecordedContexts(outcome.analysis, options.input_contexts);
  outcome.plan = transformed ? KeepTransformedPlan(outcome.analysis) : MakePlan(index, outcome.analysis, options);
  // The `--time-axis` stage's warnings come first: it ran first.
  AddWarnings(Warning::Kind::kTimeAxis, time_axes.warnings, outcome.warnings);
  for (const SkippedState& skip : outcome.plan.skipped) {
    outcome.warnings.push_back(Warning{Warning::Kind::kSkipped, SkipText(skip)});
  }
  for (const StateNote& note : outcome.analysis.notes) {
    if (note.Warns()) {
      outcome.warnings.push_back(Warning{Warning::Kind::kNote, StateNoteText(note) + " (not rewritten)"});
    }
  }
  AddWarnings(Warning::Kind::kStateInput, outcome.plan.notes, outcome.warnings);
  if (!outcome.analysis.metadata_error.empty()) {
    outcome.warnings.push_back(
        Warning{Warning::Kind::kMetadata, outcome.analysis.metadata_error + " (it will be rewritten)"});
  }
  outcome.time_axis_changes = time_axes.Describe();
  if (inferred != nullptr) *inferred = index.inferred();
  // Nothing planned refers to the index: it is freed beside what the caller does next (a rewrite applies
  // and validates meanwhile), not before it; a small model's here, on return (helper_thread.h).
  if (WorthAThread(model)) {
    auto doomed = std::make_unique<ModelIndex>(std::move(index));
    outcome.index_released = std::async(std::launch::async, [doomed = std::move(doomed)]() mutable { doomed.reset(); });
  }
  return outcome;
}

/// Plans `--time-axis` and, when it changes something, applies it to a copy of `model`; `plan` says what.
/// `inline_tensors` as IndexValidModel's.
std::optional<onnx::ModelProto> StageTimeAxes(const onnx::ModelProto& model, const PlanOptions& options,
                                              InlineTensors inline_tensors, TimeAxisPlan* plan) {
  if (options.time_axes.empty()) return std::nullopt;
  *plan = PlanTimeAxes(IndexValidModel(model, {}, inline_tensors), options.time_axes);
  if (!plan->Changes()) return std::nullopt;
  onnx::ModelProto staged = model;
  ApplyTimeAxes(*plan, staged);
  return staged;
}

/// How the tensors of the model the states are planned on are checked: as the caller said for its own
/// model, fully for the `--time-axis` copy, whose tensors rnnstate rewrote after they were opened.
InlineTensors ChecksOf(const std::optional<onnx::ModelProto>& staged, InlineTensors inline_tensors) {
  return staged ? InlineTensors::kCheck : inline_tensors;
}

}  // namespace

std::vector<std::string> RewriteOutcome::PlanLines() const {
  std::vector<std::string> lines = time_axis_changes;
  for (const auto& edit : plan.edits) {
    lines.push_back(edit.graph_name + " " + edit.owner_name + " " + edit.kind + ": " + edit.Describe());
  }
  for (const auto& context : plan.contexts) lines.push_back("main " + context.Describe());
  lines.insert(lines.end(), transform_lines.begin(), transform_lines.end());
  return lines;
}

void RequireSupportedOpset(const Analysis& analysis) {
  if (std::string problem = OpsetProblem(analysis); !problem.empty()) throw Error(ExitCode::kUnsupported, problem);
}

RewriteOutcome PlanRewrite(const onnx::ModelProto& model, const PlanOptions& options, InlineTensors inline_tensors) {
  TimeAxisPlan time_axes;
  const std::optional<onnx::ModelProto> staged = StageTimeAxes(model, options, inline_tensors, &time_axes);
  return PlanStates(staged ? *staged : model, options, time_axes, /*origin_sources=*/true,
                    ChecksOf(staged, inline_tensors));
}

namespace {

/// What a caller that reads only the outcome's pairs, warnings and plan lines (RewriteForStreaming) keeps
/// of the planning, which RewriteStates then frees before it needs the memory: the analysis (its states,
/// the stream verdict of one added output a state, the recurrent nodes) before the plan is applied, the
/// plan's edits before the output's validation. Together they take 40% of the peak at 10,000 LSTMs.
struct KeptOfPlanning {
  /// False when RewriteStates returned before applying anything: then the outcome still holds it all.
  bool released = false;
  std::vector<std::string> plan_lines;  ///< RewriteOutcome::PlanLines
  bool has_recurrent_nodes = false;
};

/// Frees the analysis (see KeptOfPlanning): the plan the rewrite applies holds all it needs.
void ReleaseAnalysis(RewriteOutcome& outcome, KeptOfPlanning& kept) {
  kept.has_recurrent_nodes = !outcome.analysis.nodes.empty();
  std::vector<StateAnalysis>().swap(outcome.analysis.states);
  std::vector<RecurrentNode>().swap(outcome.analysis.nodes);
  outcome.analysis.stream.reset();
}

/// Writes the plan lines into `kept` and frees the plan's edits (see KeptOfPlanning).
void ReleasePlanning(RewriteOutcome& outcome, KeptOfPlanning& kept) {
  kept.plan_lines = outcome.PlanLines();
  std::vector<StateEdit>().swap(outcome.plan.edits);
  kept.released = true;
}

/// RewriteModel; with `kept`, what KeptOfPlanning says is released as soon as it is no longer needed (the
/// outcome then holds no states' analyses, recurrent nodes nor edits: `kept` has what the caller reads of them).
/// `inline_tensors` as IndexValidModel's.
RewriteOutcome RewriteStates(onnx::ModelProto& model, const PlanOptions& options, bool strict,
                             const std::string& model_dir, InlineTensors inline_tensors, KeptOfPlanning* kept) {
  // The time axes are applied to a copy, so that a failure below leaves `model` as it was.
  TimeAxisPlan time_axes;
  std::optional<onnx::ModelProto> staged = StageTimeAxes(model, options, inline_tensors, &time_axes);
  onnx::ModelProto& target = staged ? *staged : model;
  // onnx's checker on the input (the validation's baseline) only reads it: it runs beside the analysis,
  // from the moment the structure is known to be valid, and is done before anything changes the input.
  std::future<std::optional<std::string>> input_checked;
  // The input as the analysis inferred it, for validating only what the rewrite changes: not after
  // `--time-axis`, whose copy onnx's checker has not seen.
  InferredModel inferred;
  RewriteOutcome outcome = PlanStates(
      target, options, time_axes, /*origin_sources=*/false, ChecksOf(staged, inline_tensors),
      [&] { input_checked = StartChecker(model, model_dir); }, staged ? nullptr : &inferred);
  RequireSupportedOpset(outcome.analysis);
  if (strict && !outcome.plan.skipped.empty()) {
    throw Error(ExitCode::kUnsupported, "--strict: " + SkipText(outcome.plan.skipped.front()));
  }
  // A packed or batch-first model still has its mode to switch (the transform stage does that).
  const bool switch_mode = options.mode == StateInputMode::kRequired && TransformsOf(target).any();
  if (!outcome.plan.ChangesModel() && !options.Transforms() && !switch_mode && !staged) return outcome;
  ValidationBaseline baseline =
      MakeValidationBaseline(model, outcome.analysis.inference_error.empty(), model_dir, std::move(input_checked));
  baseline.input = std::move(inferred);
  if (!baseline.why_not.empty()) {
    outcome.warnings.push_back(Warning{Warning::Kind::kValidation, "full validation skipped: " + baseline.why_not});
  }
  for (const std::string& op : baseline.unchecked_ops) {
    outcome.warnings.push_back(Warning{Warning::Kind::kValidation,
                                       "onnx 1.12 has no schema for " + op +
                                           ": its checker and shape inference pass over those nodes unchecked (the "
                                           "rest of the rewrite is checked)"});
  }
  outcome.changed = staged.has_value();
  std::set<std::string> own_outputs;  // the model's interface, which packing and layout keep
  for (const auto& output : target.graph().output()) own_outputs.insert(output.name());
  if (kept != nullptr) ReleaseAnalysis(outcome, *kept);
  if (outcome.plan.ChangesModel()) {
    ApplyPlan(outcome.plan, target);
    outcome.changed = true;
  }
  if (options.Transforms() || switch_mode) {
    TransformOutcome transform = TransformStates(target, options, own_outputs);
    outcome.changed |= transform.changed;
    if (options.pack != PackKind::kNone) {  // the state inputs' notes are about inputs packing replaced
      outcome.warnings.erase(std::remove_if(outcome.warnings.begin(), outcome.warnings.end(),
                                            [](const Warning& w) { return w.kind == Warning::Kind::kStateInput; }),
                             outcome.warnings.end());
    }
    AddWarnings(Warning::Kind::kTransform, transform.warnings, outcome.warnings);
    outcome.transform_lines = std::move(transform.lines);
    outcome.plan.pairs = std::move(transform.pairs);
  }
  if (kept != nullptr) ReleasePlanning(outcome, *kept);
  if (outcome.changed) ValidateRewritten(target, std::move(baseline));
  if (staged) model = std::move(*staged);
  return outcome;
}

}  // namespace

RewriteOutcome RewriteModel(onnx::ModelProto& model, const PlanOptions& options, bool strict,
                            const std::string& model_dir) {
  return RewriteStates(model, options, strict, model_dir, InlineTensors::kCheck, /*kept=*/nullptr);
}

// The public façade (rnnstate/pipeline.h) over the stages.
RewriteResult RewriteForStreaming(onnx::ModelProto& model, const PlanOptions& options, bool strict,
                                  const std::string& model_dir, InlineTensors inline_tensors) {
  KeptOfPlanning kept;
  RewriteOutcome outcome = RewriteStates(model, options, strict, model_dir, inline_tensors, &kept);
  RewriteResult result;
  result.changed = outcome.changed;
  result.pairs = std::move(outcome.plan.pairs);
  result.warnings = std::move(outcome.warnings);
  result.has_recurrent_nodes = kept.released ? kept.has_recurrent_nodes : !outcome.analysis.nodes.empty();
  result.plan_lines = kept.released ? std::move(kept.plan_lines) : outcome.PlanLines();
  return result;
}

CheckResult CheckForStreaming(const onnx::ModelProto& model, const CheckOptions& options,
                              InlineTensors inline_tensors) {
  // The same verdict as rewrite and report.
  const ModelIndex index = IndexValidModel(model, {}, inline_tensors);
  AnalysisOptions analysis_options;
  analysis_options.origin_sources = false;      // check shows no origins
  analysis_options.owner_types_checked = true;  // IndexValidModel checked them
  Analysis analysis = Analyze(index, analysis_options);
  JudgeStream(index, analysis);
  CheckResult result;
  AddWarnings(Warning::Kind::kNote, CheckWarnings(analysis), result.warnings);
  result.problems = CheckModel(index, analysis, options.streamable_only);
  // The first kMaxListedProblems of each kind, in order: a million of one kind hides no other kind.
  std::map<CheckProblem::Kind, size_t> listed;
  std::vector<CheckProblem> kept;
  for (CheckProblem& problem : result.problems) {
    if (++listed[problem.kind] <= kMaxListedProblems) {
      kept.push_back(std::move(problem));
    } else {
      ++result.unlisted_problems;
    }
  }
  result.problems = std::move(kept);
  result.recorded = std::move(analysis.recorded_pairs);  // moved, not copied: there may be a million
  return result;
}

Report ReportModel(const onnx::ModelProto& model, const std::string& file, ReportFormat format,
                   InlineTensors inline_tensors) {
  const RewriteOutcome outcome = PlanRewrite(model, PlanOptions{}, inline_tensors);
  Report report;
  report.recorded = outcome.analysis.recorded_pairs;
  switch (format) {
    case ReportFormat::kText:
      report.text = ReportText(file, model, outcome.analysis, outcome.plan);
      break;
    case ReportFormat::kDot:
      report.text = ReportDot(file, model, outcome.analysis, outcome.plan);
      break;
    case ReportFormat::kJson:
      report.json = ReportJson(file, model, outcome.analysis, outcome.plan);
      break;
  }
  return report;
}

Json ReportOf(const onnx::ModelProto& model, const std::string& file) {
  return ReportModel(model, file, ReportFormat::kJson).json;
}

std::vector<StatePair> ValidStatePairs(const onnx::ModelProto& model) { return RequireValidMetadata(model).pairs; }

void PrepareForWorkers() {
  // The first lookup registers every schema; later lookups only read. ONNX Runtime's schema is added
  // here too (once): added on a file's first use instead, it was written into onnx's registry while
  // another thread (main.cc's warm-up) read it.
  RegisterContribSchemas();
  onnx::OpSchemaRegistry::Schema("LSTM", kMinOpset, "");
}

}  // namespace rnnstate
