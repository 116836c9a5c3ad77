#pragma once
/// \file
/// The producer of loop-carried states: recurrences written as a `Loop` or `Scan` over a cell
/// written out by hand (TorchScript loops over gate equations, Keras layers tf2onnx could not fuse, custom
/// cells, autoregressive decoders), with no recurrent operator. Every carried variable that really recurs
/// (see carried_variables.h) becomes a state of kind kCarried owned by the Loop/Scan: it enters at the
/// variable's initial value (the container's input) and leaves at its final value (the container's
/// output), whatever the body computes. Its type and shape come from the declared or inferred types; its
/// batch axis is a dim it shares with a main-graph input; whether chunks stream is loop_streaming.h's
/// verdict. Carried variables that are no state are noted with the reason; Scan-8 state variables are
/// noted as not classified.

#include <set>
#include <string>
#include <vector>

#include "find/state_findings.h"
#include "graph/model_index.h"
#include "rnnstate/metadata.h"

namespace rnnstate {

/// Appends every Loop and Scan-9+ with a recurring carried variable (as an owner) and its states, and a
/// note for every other carried variable. `found` must already hold the recurrent operators' states:
/// the variables carrying those stay theirs. `refused_time_axes`: see AnalysisOptions. `recorded`: the pairs
/// of the model's metadata (their inputs are states, not data, when a carried variable's batch is named).
void FindLoopStates(const ModelIndex& index, const std::set<std::string>& refused_time_axes,
                    const std::vector<StatePair>& recorded, Findings* found);

}  // namespace rnnstate
