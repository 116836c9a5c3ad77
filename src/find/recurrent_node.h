#pragma once
/// \file
/// The producer of the recurrent operators' states: finds every node of a table operator (see
/// recurrent_ops.h) at any depth, reads the facts a rewrite needs from its attributes and from declared
/// or inferred shapes, and makes one RecurrentState per state slot (h, and c for LSTM-like ops).

#include <cstdint>
#include <string>
#include <vector>

#include "graph/model_index.h"
#include "states/recurrent_ops.h"
#include "states/recurrent_state.h"

namespace rnnstate {

/// A node that owns recurrent states, and the facts reports show about it.
struct RecurrentNode {
  GraphPath graph;         ///< graph holding the node
  int node = -1;           ///< index in that graph
  std::string graph_name;  ///< user-facing graph path ("main", "main/Loop_3:body")
  std::string name;        ///< node name, or a generated label when unnamed
  bool unnamed = false;    ///< true when `name` was generated
  std::string op;          ///< "RNN", "GRU", "LSTM", ...
  std::string direction;   ///< "forward", "reverse" or "bidirectional"
  int64_t num_directions = 1;
  int64_t hidden_size = -1;  ///< -1 when it cannot be determined
  int64_t layout = 0;        ///< 0: [seq, batch, ...]; 1: [batch, seq, ...] (opset 14)
  int32_t elem_type = 0;     ///< onnx::TensorProto_DataType of X and the states; 0 when unknown
  Dim batch;                 ///< batch size of X
  std::string x;             ///< name of input X
  bool has_sequence_lens = false;

  /// True when chunked runs with fed-back state equal one full run.
  bool streamable = false;
  std::string not_streamable_reason;
  /// Why chunked runs may still differ from one full run although the recurrence streams (the
  /// operator's, see RecurrentOp::streaming_caveat); "" when they are exact.
  std::string streaming_caveat;
  /// Loops and Scans over a hand-written cell (see loop_recurrence.h): what the loop walks, for reports;
  /// "" for the operators of the table.
  std::string walk;
  /// A loop of a fixed length that `rewrite --time-axis` would make stream: its option ("x:1"); else "".
  std::string time_axis_option;
  /// Non-empty when the node cannot be rewritten; says why.
  std::string problem;

  /// The node as the owner of its states.
  StateOwner owner() const { return StateOwner{graph, node, graph_name, name, op}; }
};

/// Appends every node of a table operator, in a stable order (graphs parents first, nodes by index), to
/// `nodes`, and its states (h, then c) to `states`. `types_checked`: the index comes from IndexValidModel,
/// which refused every owner breaking a rule of its operands' types (FirstOpRuleViolation, with the same
/// look-up): those rules are not run again for each node's problem.
void FindOpStates(const ModelIndex& index, std::vector<RecurrentNode>* nodes, std::vector<RecurrentState>* states,
                  bool types_checked = false);

}  // namespace rnnstate
