#pragma once
/// \file
/// `rnnstate check`: a CI gate. A model passes when every recurrent state is exposed (but those that run
/// within one call beside their authors' own state, as `rewrite` leaves them) and its `rnnstate`
/// metadata still matches its graph — each recorded pair names an existing node and state, a main-graph
/// input that really feeds the node's initial-state slot and a main-graph output really computed from
/// its final state, with truthful flags, and no name used by two pairs.

#include <string>
#include <vector>

#include "find/analysis.h"
#include "graph/graph_path.h"
#include "graph/model_index.h"
#include "rnnstate/check_problem.h"
#include "states/wiring.h"

namespace rnnstate {

/// Every problem of the analyzed model, in a stable order (malformed metadata, unexposed states in graph
/// order, each pair in metadata order, then names used by several pairs); empty when it passes.
/// With `streamable_only`, states that cannot stream are not required to be exposed.
std::vector<CheckProblem> CheckModel(const ModelIndex& index, const Analysis& analysis, bool streamable_only = false);

/// What `check` warns about without failing: recurrences it cannot classify (a Loop's carried variable
/// of unknown kind, a Scan-8 state) and stateful operators outside the table, each with its node.
std::vector<std::string> CheckWarnings(const Analysis& analysis);

}  // namespace rnnstate
