#pragma once
/// \file
/// The batch dimension a caller can know. A state's batch is the batch of its owner's X,
/// but X is often computed (a Transpose, the previous layer's output), and onnx's inference then names
/// its dimensions itself ("unk__82"), names no caller ever sees. This unit follows the batch back to the
/// main-graph input it comes from, so that state shapes in metadata and declarations use that input's
/// own dimension: a number, its symbolic name, or — when the input leaves it unnamed — a name given to it.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "exposure/branch_facts.h"
#include "graph/model_index.h"
#include "loops/axis_trace.h"
#include "states/recurrent_state.h"

namespace rnnstate {

/// The batch dimension of a state, as a caller sees it.
struct DataBatch {
  Dim dim;  ///< fixed, or symbolic with the data input's name; unknown when it could not be traced
  /// Set when the main-graph input the batch comes from leaves that dimension unnamed (or -1): the
  /// input and axis to give the name `dim.param`.
  std::optional<std::pair<std::string, int>> unnamed_input_dim;
};

/// Traces the batch of `state` (its BatchSource) back through operators that keep the batch axis
/// (elementwise ops, Transpose, Squeeze/Unsqueeze, Reshape, Gather/Slice/Concat/Split on other axes,
/// recurrent ops' outputs, the If branches that can run: see TraceAxis) to a main-graph input.
/// `fresh_name` names an unnamed dimension. Without a trace, the state's own batch dim is returned when
/// it is fixed or declared by a main-graph input, else unknown. `memo` (TraceAxis) is shared by the calls
/// on one model.
DataBatch FindDataBatch(const ModelIndex& index, const RecurrentState& state, const std::string& fresh_name,
                        const BranchFacts* facts = nullptr, AxisTraceMemo* memo = nullptr);

}  // namespace rnnstate
