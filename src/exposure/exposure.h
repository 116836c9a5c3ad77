#pragma once
/// \file
/// Where a state's initial value is read from and where its final value lands, element
/// by element, through view-like operators (Identity, lossless Cast, Slice, Gather with constant indices,
/// Squeeze, Unsqueeze, Transpose, Reshape and Expand where the mapping is provable, Concat, Split,
/// ScatterND with constant indices) and through If branches and outer-scope references. A model whose
/// authors stream it themselves reads each state from a region of one of its inputs and writes the final
/// value to the same region of one of its outputs.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "exposure/branch_facts.h"
#include "graph/model_index.h"
#include "states/recurrent_state.h"
#include "values/element_map.h"

namespace rnnstate {

/// A state's elements in a main-graph input or output.
struct ElementPlace {
  std::string tensor;
  ElementMap map;
};

/// Where a state's initial value comes from, element by element.
struct ReadTrace {
  std::optional<ElementPlace> place;  ///< set when it is read from a main-graph input
  std::string broken;                 ///< otherwise: what broke the proof ("Expand '/Expand' broadcasts")
  bool constant = false;              ///< ... or nothing did: it is a constant, or absent
};

/// Where a state's final value lands: every main-graph output that holds all of it exactly.
struct WriteTrace {
  std::vector<ElementPlace> places;
  std::string broken;  ///< the first path that stopped, when there is no place
};

/// Traces the value in the owner's initial slot back to a main-graph input.
ReadTrace TraceRead(const ModelIndex& index, const RecurrentState& state, const BranchFacts* facts = nullptr);

/// Traces the value in the owner's final slot forward to main-graph outputs.
WriteTrace TraceWrite(const ModelIndex& index, const RecurrentState& state);
/// As above, for the state of shape `shape` (the state's own, with axes inference left unknown
/// completed from where it is read).
WriteTrace TraceWrite(const ModelIndex& index, const RecurrentState& state, const SymShape& shape,
                      const BranchFacts* facts = nullptr);

/// Traces `value` of the main graph (of shape `shape` and type `elem_type`) back to a main-graph input,
/// as TraceRead does from a slot; at an `If` that takes one branch exactly when the inputs of
/// `empty_inputs` (name -> batch axis) are fed empty (RunsOnlyWhenEmpty), only the other branch is
/// followed: what the value reads when they are fed.
ReadTrace TraceValueRead(const ModelIndex& index, const std::string& value, const SymShape& shape, int32_t elem_type,
                         const std::map<std::string, size_t>& empty_inputs);

/// Traces `value` of the main graph forward to main-graph outputs, as TraceWrite does from a slot.
WriteTrace TraceValueWrite(const ModelIndex& index, const std::string& value, const SymShape& shape, int32_t elem_type);

/// The state's shape as the element maps see it.
SymShape StateShape(const RecurrentState& state);

}  // namespace rnnstate
