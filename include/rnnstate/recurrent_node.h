#pragma once
/// \file
/// Stage 3: find the recurrent nodes (ONNX RNN, GRU, LSTM) of a model at any depth and read the facts
/// a rewrite needs from their attributes and from declared or inferred shapes.

#include <cstdint>
#include <string>
#include <vector>

#include "rnnstate/graph_path.h"
#include "rnnstate/model_index.h"

namespace rnnstate {

/// A tensor dimension: a fixed size, a symbolic name, or unknown.
struct Dim {
  int64_t value = -1;  ///< >= 0 when fixed
  std::string param;   ///< symbolic name when not fixed (may be empty: unknown)
  bool fixed() const { return value >= 0; }
  /// "8", "batch" or "?".
  std::string ToString() const;
};

/// "[1,batch,4]".
std::string ShapeText(const std::vector<Dim>& shape);

/// The two kinds of recurrent state: hidden (all ops) and cell (LSTM only).
enum class StateKind { kHidden, kCell };

/// "h" or "c", as written in metadata and reports.
const char* StateKindName(StateKind kind);

/// Input and output slots of a state in the ONNX operator signature.
int InitialStateSlot(StateKind kind);  ///< initial_h = 5, initial_c = 6
int FinalStateSlot(StateKind kind);    ///< Y_h = 1, Y_c = 2
/// Their names in the operator signature: "initial_h" / "initial_c" and "Y_h" / "Y_c".
const char* InitialStateSlotName(StateKind kind);
const char* FinalStateSlotName(StateKind kind);

/// One RNN, GRU or LSTM node and the facts about it.
struct RecurrentNode {
  GraphPath graph;          ///< graph holding the node
  int node = -1;            ///< index in that graph
  std::string graph_name;   ///< user-facing graph path ("main", "main/Loop_3:body")
  std::string name;         ///< node name, or a generated label when unnamed
  bool unnamed = false;     ///< true when `name` was generated
  std::string op;           ///< "RNN", "GRU" or "LSTM"
  std::string direction;    ///< "forward", "reverse" or "bidirectional"
  int64_t num_directions = 1;
  int64_t hidden_size = -1;  ///< -1 when it cannot be determined
  int64_t layout = 0;        ///< 0: [seq, batch, ...]; 1: [batch, seq, ...] (opset 14)
  int32_t elem_type = 0;     ///< onnx::TensorProto_DataType of X and the states; 0 when unknown
  Dim batch;                 ///< batch size of X
  std::string x;             ///< name of input X
  bool has_sequence_lens = false;
  std::vector<StateKind> states;  ///< {h} or {h, c}

  /// True when chunked runs with fed-back state equal one full run.
  bool streamable = false;
  std::string not_streamable_reason;
  /// Non-empty when the node cannot be rewritten; says why.
  std::string problem;

  /// The state tensor shape: [D, batch, H], or [batch, D, H] when layout = 1.
  std::vector<Dim> StateShape() const;
};

/// Every recurrent node of the model in a stable order (graphs parents first, nodes by index).
std::vector<RecurrentNode> FindRecurrentNodes(const ModelIndex& index);

/// True for an RNN, GRU or LSTM node of the default ONNX domain.
bool IsRecurrentNode(const onnx::NodeProto& node);

}  // namespace rnnstate
