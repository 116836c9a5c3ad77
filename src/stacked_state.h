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
#include "recurrent_state.h"
#include "model_index.h"
#include "state_origin.h"

namespace rnnstate {

/// Rows `rows` on axis 0 of a main-graph input feed the state's slot, and the same rows of a
/// main-graph output are the state's final value.
struct StackedExposure {
  std::string input;
  std::string output;
  RowRange rows;
};

/// The stacked exposure of `state` at `site`, or nullopt. Requires a main-graph site on the owner itself,
/// a state whose batch is on axis 1 and whose axis 0 has a fixed size; a slot fed by `Slice(input,
/// begin, end, axes=[0])` (steps 1, constant bounds, as many rows as axis 0) whose result nothing else
/// reads, where every use of the input is such a Slice; and a final state at rows [begin, end) of a
/// `Concat` on axis 0 that is a main-graph output, its parts' row counts known.
std::optional<StackedExposure> FindStackedExposure(const ModelIndex& index, const RecurrentState& state,
                                                   const StateSite& site, const StateOrigin& origin,
                                                   const FinalState& final_state);

/// A state's claim on rows of a stacked input and output.
struct RowClaim {
  const std::string& input;
  const std::string& output;
  const RowRange& rows;
};

/// The claim of a stacked exposure.
inline RowClaim ClaimOf(const StackedExposure& stacked) { return RowClaim{stacked.input, stacked.output, stacked.rows}; }

/// Why two claims on stacked tensors cannot both hold.
enum class ClaimConflict {
  kNone,         ///< disjoint tensors, or disjoint rows of the same input and output
  kOverlapping,  ///< they share an input or output and their rows overlap (two states, one value)
  kCrossed,      ///< one input paired with two outputs, or the reverse (two values to feed one input)
};

/// The one rule for claims on stacked tensors, used by the analysis (which drops conflicting stacked
/// exposures) and by `check` (which reports conflicting recorded pairs).
ClaimConflict StackedClaimsConflict(const RowClaim& a, const RowClaim& b);

/// True when `pair` records exactly `stacked`: the same input, output and rows.
bool RecordsStacked(const StatePair& pair, const std::optional<StackedExposure>& stacked);

/// "stacked input 'h0'[0:1] -> output 'h_n'[0:1]".
std::string StackedText(const StackedExposure& stacked);

}  // namespace rnnstate
