#pragma once
/// \file
/// The stage after the state rewrite: `--state-layout batch-first` (state_layout.h), then `--pack
/// tensor|sequence` (pack_plan.h, pack_apply.h), on a model whose states are exposed and recorded.
/// Each is planned as data from the model and its recorded pairs, then applied; the caller validates.
/// A model these stages changed is final for the state rewrite: `rewrite` keeps it as it is.

#include <onnx/onnx_pb.h>

#include <set>
#include <string>
#include <vector>

#include "find/analysis.h"
#include "rewrite/plan.h"
#include "rnnstate/metadata.h"
#include "rnnstate/options.h"

namespace rnnstate {

/// What the stage did.
struct TransformOutcome {
  bool changed = false;
  std::vector<StatePair> pairs;       ///< the pairs recorded afterwards
  std::vector<std::string> warnings;  ///< states left as they are, what a runtime must know
  std::vector<std::string> lines;     ///< one line per change, for --dry-run
};

/// Applies the layout and packing `options` ask for to `model` and records them in its metadata.
/// `own_outputs` are the outputs the model had before rnnstate (its interface): they keep their names
/// and layout, and packing keeps them beside the packed value. A model packed already is refused with
/// Error(kUnsupported) when packing is asked for again, and otherwise left as it is; see PlanPack and
/// PlanBatchFirst for the other errors.
TransformOutcome TransformStates(onnx::ModelProto& model, const PlanOptions& options,
                                 const std::set<std::string>& own_outputs = {});

/// The plan of `rewrite` for a model whose states were transformed: every recorded state kept as it is,
/// every other state skipped (the state rewrite does not run on such a model).
Plan KeepTransformedPlan(const Analysis& analysis);

}  // namespace rnnstate
