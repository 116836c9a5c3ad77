#pragma once
/// \file
/// Part of stage 4: states a model already exposes through stacked tensors. PyTorch exports a
/// multi-layer RNN called with `(h0, c0)` as one graph input per state kind, `Slice`d on axis 0 into each
/// layer's initial state, and one graph output per kind that `Concat`s the layers' final states on axis 0.
/// Feeding that output back as that input streams the model, so such a state is exposed.

#include <cstdint>
#include <optional>
#include <string>

#include "rnnstate/metadata.h"
#include "rnnstate/model_index.h"
#include "rnnstate/recurrent_node.h"
#include "rnnstate/state_origin.h"

namespace rnnstate {

/// Rows `rows` on axis 0 of a main-graph input feed the state's slot, and the same rows of a
/// main-graph output are the state's final value.
struct StackedExposure {
  std::string input;
  std::string output;
  RowRange rows;
};

/// The stacked exposure of a state at `site`, or nullopt. Requires a main-graph site on the node itself
/// (layout 0); a slot fed by `Slice(input, begin, end, axes=[0])` (steps 1, constant bounds) whose result
/// nothing else reads, where every use of the input is such a Slice; and a final state at rows
/// [begin, end) of a `Concat` on axis 0 that is a main-graph output, its parts' row counts known.
std::optional<StackedExposure> FindStackedExposure(const ModelIndex& index, const RecurrentNode& node,
                                                   const StateSite& site, const StateOrigin& origin,
                                                   const FinalState& final_state);

/// True when `pair` records exactly `stacked`: the same input, output and rows.
bool RecordsStacked(const StatePair& pair, const std::optional<StackedExposure>& stacked);

/// "stacked input 'h0'[0:1] -> output 'h_n'[0:1]".
std::string StackedText(const StackedExposure& stacked);

}  // namespace rnnstate
