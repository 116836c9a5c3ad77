#pragma once
/// \file
/// A producer of notes only: operators outside the table of recurrent_ops.h whose slots carry
/// state from call to call (ONNX Runtime's contrib operators, ONNX's own Attention and TensorScatter),
/// named in `report` and warned about by `check` with the reason rnnstate does not rewrite them — so that
/// they never pass silently.

#include <string_view>
#include <vector>

#include "find/state_findings.h"
#include "graph/model_index.h"

namespace rnnstate {

/// An operator with state-like slots that rnnstate does not handle.
struct StatefulOp {
  std::string_view domain;  ///< "" for ONNX's default domain (also written "ai.onnx")
  std::string_view op_type;
  std::vector<int> state_inputs;   ///< slots where the previous state enters
  std::vector<int> state_outputs;  ///< slots where the next state leaves
  std::string_view reason;
};

/// Every such operator, in a stable order.
const std::vector<StatefulOp>& StatefulOps();

/// Appends a note for every node (any depth) of an operator of StatefulOps().
void FindStatefulOps(const ModelIndex& index, Findings* found);

}  // namespace rnnstate
