#pragma once
/// \file
/// Decides the Plan (plan.h) of a rewrite from the analysis. Nothing is modified here; the input
/// side of each state is input_planner.h's, the names of unnamed owners owner_names.h's.

#include <string>

#include "find/analysis.h"
#include "graph/model_index.h"
#include "rewrite/plan.h"
#include "rnnstate/metadata.h"
#include "rnnstate/options.h"

namespace rnnstate {

/// Plans the rewrite of the analyzed model. Throws Error(kUsage) for bad name templates.
Plan MakePlan(const ModelIndex& index, const Analysis& analysis, const PlanOptions& options);

/// What every edit of `analyzed`'s state starts from: which state, its owner (as `owner_name` in
/// `graph_name`), where it is promoted, its element type, the values in its slots before the rewrite
/// and the analysis' verdicts (streamable, batch axis). Its tensors and input and output sides are
/// still to decide.
StateEdit EditHeader(const StateAnalysis& analyzed, std::string owner_name, std::string graph_name);

/// The edit of a recorded state takes the pair's tensors, the place of the state in them and how the
/// pair's first feed is made.
void TakeRecordedPair(const StatePair& pair, StateEdit& edit);

}  // namespace rnnstate
