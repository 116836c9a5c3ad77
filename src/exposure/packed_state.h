#pragma once
/// \file
/// States a packed model exposes through its packed values (see packed_metadata.h), for the analysis
/// (is a recorded state still exposed?) and for `check` (does the "packed" description match the graph?).

#include <cstdint>
#include <vector>

#include "graph/model_index.h"
#include "rnnstate/check_problem.h"
#include "rnnstate/metadata.h"
#include "rnnstate/packed_metadata.h"
#include "states/recurrent_state.h"

namespace rnnstate {

/// True when state pair `index` of the metadata (`pair`, owned by `state`) is a member of a packed value
/// whose main-graph input is unpacked into the pair's input, whose main-graph output is computed from the
/// pair's output, and the pair's values reach the state's slots.
bool PackedRecordHolds(const ModelIndex& index, const PackedStates& packed, int64_t pair_index,
                       const RecurrentState& state, const StatePair& pair);

/// The problems of the "packed" description against the graph: each value's input and output are
/// main-graph input and output of the declared type and size, its default agrees with `optional`, its
/// members tile it (tensor columns from 0 without gaps, sequence positions 0..n-1), each member's tensor
/// is unpacked from the input and packed into the output, and names the pairs whose values it carries.
void CheckPackedValues(const ModelIndex& index, const PackedStates& packed, const std::vector<StatePair>& pairs,
                       std::vector<CheckProblem>& problems);

}  // namespace rnnstate
