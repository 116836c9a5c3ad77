#pragma once
/// \file
/// Plans the context states (context_plan.h) of a rewrite: every recorded one whose wiring holds is kept
/// (a rewrite of a rewrite changes nothing; required mode drops its zero default), every `--input-context`
/// option that is not recorded yet becomes a new one. Nothing is modified here.

#include <vector>

#include "find/analysis.h"
#include "graph/model_index.h"
#include "graph/naming.h"
#include "rewrite/owner_names.h"
#include "rewrite/plan.h"
#include "rnnstate/options.h"

namespace rnnstate {

/// Adds the context edits to `plan` and their pairs to `plan.pairs` (after the states' pairs already
/// there), allocating names from `names`. Throws Error(kUsage) for an option that makes no sense on this
/// model: not a data input of the main graph, a state input, an axis it lacks, a context it carries with
/// other frames, an input given twice; Error(kUnsupported) for a default that needs operators the model's
/// opset lacks (Expand: opset 8). A recorded context that no longer holds is not kept (a note says why).
/// With `options.conv_context`, each causal window the stream verdict found gets a context too, named
/// after the window (`node_names`: the names a rewrite gives unnamed nodes).
void PlanContexts(const ModelIndex& index, const Analysis& analysis, const PlanOptions& options,
                  const NodeNames& node_names, NameAllocator& names, Plan& plan);

/// For a model whose states were packed or made batch-first (its pairs are final): throws Error(kUnsupported)
/// unless every `--input-context` option is a context it records already.
void RequireRecordedContexts(const Analysis& analysis, const std::vector<InputContextOption>& options);

}  // namespace rnnstate
