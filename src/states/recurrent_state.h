#pragma once
/// \file
/// The unit of work of every stage after finding: one recurrent state — who owns it, where its initial
/// value enters and its final value leaves, its type and shape, and whether it streams. Producers (see
/// analysis.cc) find states; tracing, planning, applying, wiring and `check` take them.

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "graph/dim.h"
#include "graph/graph_path.h"

namespace rnnstate {

/// What a state is to its owner: the hidden state h (every recurrent op), the cell state c (LSTM-like
/// ops), or a value a loop carries from iteration to iteration.
enum class StateKind { kHidden, kCell, kCarried };

/// "h", "c" or "state", as written in metadata and reports.
const char* StateKindName(StateKind kind);

/// The node that owns a state, as named in metadata and messages.
struct StateOwner {
  GraphPath graph;         ///< graph holding the owner
  int node = -1;           ///< its index there
  std::string graph_name;  ///< user-facing graph path ("main", "main/Loop_3:body")
  std::string name;        ///< node name, or a generated label when unnamed
  std::string op;          ///< "LSTM", "Loop", ...
};

/// Identifies a state within one model: its owner (graph path + node index) and the owner's input slot
/// where the initial value enters. Plan edits and skips are keyed by it.
struct StateKey {
  GraphPath graph;
  int node = -1;
  int slot = -1;  ///< -1 in a key that stands for every state of the owner

  bool operator==(const StateKey& o) const { return graph == o.graph && node == o.node && slot == o.slot; }
  bool operator<(const StateKey& o) const { return std::tie(graph, node, slot) < std::tie(o.graph, o.node, o.slot); }
  /// True when this key names `state`, or (slot -1) every state of its owner.
  bool Covers(const StateKey& state) const {
    return graph == state.graph && node == state.node && (slot < 0 || slot == state.slot);
  }
};

/// Where a default broadcast to the runtime batch reads the batch size: axis `axis` of `value`, a
/// value visible from the owner's graph (the recurrent node's X).
struct BatchSource {
  std::string value;
  int64_t axis = -1;
};

/// One recurrent state.
struct RecurrentState {
  StateOwner owner;
  StateKind kind = StateKind::kHidden;
  int initial_slot = -1;     ///< owner input where the initial value enters (initial_h = 5)
  int final_slot = -1;       ///< owner output where the final value leaves (Y_h = 1)
  /// kCarried: the carried variable, as its body input is named ("" for the h and c of an operator).
  std::string variable;
  std::string initial_name;  ///< the initial slot's name in the operator signature ("initial_h")
  std::string final_name;    ///< the final slot's name ("Y_h")
  int32_t elem_type = 0;     ///< onnx::TensorProto_DataType; 0 when unknown
  /// The state's shape, e.g. [num_directions, batch, hidden_size], and the names of its axes (used
  /// for the values a rewrite adds and in reports).
  std::vector<Dim> shape;
  std::vector<std::string> axis_names;
  int batch_axis = -1;  ///< position of the batch in `shape`, -1 when there is none
  BatchSource batch_source;
  /// True when chunked runs with the state fed back equal one full run.
  bool streamable = false;
  std::string not_streamable_reason;
  /// Non-empty when the state cannot be rewritten; says why.
  std::string problem;

  StateKey key() const { return StateKey{owner.graph, owner.node, initial_slot}; }
  const char* kind_name() const { return StateKindName(kind); }
  /// "LSTM_3/h": the owner's name and the kind (a loop's: its carried variable, "Loop_2/h_prev").
  std::string Label() const { return owner.name + "/" + (variable.empty() ? kind_name() : variable); }
};

}  // namespace rnnstate
