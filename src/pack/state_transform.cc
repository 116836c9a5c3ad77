#include "pack/state_transform.h"

#include "graph/graph_edit.h"

#include "graph/node_builder.h"
#include "pack/pack_apply.h"
#include "pack/pack_plan.h"
#include "pack/state_layout.h"
#include "rewrite/planner.h"
#include "rnnstate/error.h"
#include "rnnstate/packed_metadata.h"

namespace rnnstate {

namespace {

/// `--state-inputs required` on a packed model: every packed tensor input loses its default (the empty
/// tensor), which is all that tells the two modes apart (the members take their defaults inside either
/// way, from an empty value), so the result is what packing the original in required mode gives.
void RequirePackedInputs(onnx::ModelProto& model, TransformOutcome& outcome) {
  std::string error;
  std::optional<PackedStates> packed = ReadPackedStates(model, outcome.pairs.size(), &error);
  if (!error.empty() || !packed) throw Error(ExitCode::kBadInput, error);
  bool changed = false;
  for (PackedValue& value : packed->values) {
    if (!value.optional) continue;
    RemoveInitializer(*model.mutable_graph(), value.input);
    value.optional = false;
    changed = true;
    const int64_t width = value.shape.size() == 2 ? value.shape[1].value : 0;
    outcome.warnings.push_back("packed input '" + value.input + "': feed an empty tensor [0," + std::to_string(width) +
                               "] on the first call (every state takes its default), then '" + value.output + "'");
    outcome.lines.push_back("packed input '" + value.input + "': default removed (required)");
  }
  if (!changed) return;
  Json document = ReadStateDocument(model).value_or(Json::object());
  document["packed"] = PackedStatesJson(*packed);
  WriteStateDocument(model, document);
  outcome.changed = true;
}

}  // namespace

TransformOutcome TransformStates(onnx::ModelProto& model, const PlanOptions& options,
                                 const std::set<std::string>& own_outputs) {
  TransformOutcome outcome;
  std::string error;
  std::optional<Json> recorded;  // the metadata as the model came
  outcome.pairs = ReadStatePairs(model, &error, &recorded, /*bounded=*/true);
  if (!error.empty()) throw Error(ExitCode::kBadInput, error);
  if (HasPackedStates(recorded)) {
    if (options.pack != PackKind::kNone) {
      throw Error(ExitCode::kUnsupported,
                  "the model's states are packed already; pack the model they came from "
                  "(or rewrite this one without --pack)");
    }
    if (options.layout != StateLayout::kAsNode) {
      outcome.warnings.push_back("the model's states are packed: --state-layout leaves it as it is");
    }
    if (options.mode == StateInputMode::kRequired) RequirePackedInputs(model, outcome);
    return outcome;
  }
  if (options.mode == StateInputMode::kRequired && options.pack == PackKind::kNone) {
    for (const StatePair& pair : outcome.pairs) {
      if (pair.optional && !pair.layout.empty()) {
        throw Error(ExitCode::kUnsupported,
                    "state input '" + pair.input + "' was made batch-first in defaults mode, and --state-inputs " +
                        "required cannot remove its default here: rewrite the model it came from with " +
                        "--state-layout batch-first --state-inputs required");
      }
    }
  }
  NameAllocator names(ModelNames(model));
  NameAllocator dim_names(ModelDimParams(model));
  NameAllocator node_names(ModelNodeNames(model));
  if (options.layout == StateLayout::kBatchFirst) {
    LayoutPlan layout =
        PlanBatchFirst(model, outcome.pairs, names, node_names, dim_names, own_outputs, options.output_template);
    outcome.warnings.insert(outcome.warnings.end(), layout.warnings.begin(), layout.warnings.end());
    if (layout.Changes()) {
      ApplyBatchFirst(layout, model);
      outcome.changed = true;
      outcome.lines.push_back("batch-first: " + std::to_string(layout.inputs.size()) + " state input(s) and " +
                              std::to_string(layout.outputs.size()) + " output(s) transposed to [batch, ...]");
    }
    outcome.changed |= layout.pairs != outcome.pairs;
    outcome.pairs = std::move(layout.pairs);
  }
  std::optional<PackedStates> packed;
  if (options.pack != PackKind::kNone) {
    if (outcome.pairs.empty()) {
      outcome.warnings.push_back("no state pairs to pack");
    } else {
      PackPlan plan = PlanPack(model, outcome.pairs, options, names, dim_names, own_outputs);
      ApplyPack(plan, model, names, node_names);
      outcome.changed = true;
      outcome.lines = plan.Describe();
      outcome.warnings.insert(outcome.warnings.end(), plan.notes.begin(), plan.notes.end());
      outcome.pairs = std::move(plan.pairs);
      packed = std::move(plan.packed);
    }
  }
  if (!outcome.changed) return outcome;
  RaiseIrForUndeclaredInitializers(model);
  Json document = ReadStateDocument(model).value_or(Json::object());
  document["version"] = kMetadataVersion;
  document["states"] = StatePairsJson(outcome.pairs);
  if (packed) document["packed"] = PackedStatesJson(*packed);
  WriteStateDocument(model, document);
  return outcome;
}

Plan KeepTransformedPlan(const Analysis& analysis) {
  Plan plan;
  plan.pairs = analysis.recorded_pairs;
  for (const StateAnalysis& analyzed : analysis.states) {
    const RecurrentState& state = analyzed.state;
    if (analyzed.recorded < 0) {
      plan.skipped.push_back({state.key(), state.owner.graph_name, state.owner.name, state.kind_name(),
                              "the model's states were packed or made batch-first; rewrite the model they came "
                              "from to expose this one"});
      continue;
    }
    const StatePair& pair = analysis.recorded_pairs[static_cast<size_t>(analyzed.recorded)];
    StateEdit edit = EditHeader(analyzed, state.owner.name, state.owner.graph_name);
    TakeRecordedPair(pair, edit);
    // Described by its rows only: a recorded region has never been shown on a transformed model.
    if (edit.place) edit.place = StatePlace{edit.place->rows, {}, {}, {}};
    edit.input_edit = KeepInput{};
    edit.output_edit = KeepOutput{};
    edit.optional = pair.optional;
    edit.streamable = pair.streamable;
    edit.data_shape = pair.shape;
    edit.batch_axis = pair.batch_axis;
    plan.edits.push_back(std::move(edit));
  }
  return plan;
}

}  // namespace rnnstate
