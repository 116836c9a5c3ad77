#pragma once
/// \file
/// Stage 4: trace where a recurrent node's initial state really comes from, and where its final state
/// goes. Exporters rarely feed a state directly: PyTorch computes zeros from the batch size
/// (ConstantOfShape / Expand) and slices one tensor per layer, shared by h and c.

#include <string>
#include <vector>

#include "rnnstate/model_index.h"
#include "rnnstate/recurrent_node.h"

namespace rnnstate {

/// Where an initial state comes from.
struct StateOrigin {
  enum class Kind {
    kAbsent,          ///< slot missing or empty: the ONNX default, zeros
    kGraphInput,      ///< a graph input without default
    kDefaultedInput,  ///< a graph input with an initializer of the same name
    kInitializer,     ///< an initializer (a constant state)
    kComputed,        ///< computed by nodes of the graph
    kOuterScope,      ///< a value of an enclosing graph (nested nodes)
  };
  Kind kind = Kind::kAbsent;
  std::string value;  ///< the name in the slot ("" when absent)
  /// True when the value is provably all zeros (absent, or computed from zero constants by
  /// shape-only operators such as ConstantOfShape, Expand, Slice, Reshape).
  bool zero = false;
  /// Nodes of the same graph that compute the value, nearest first (kComputed only), at most a few.
  std::vector<int> computed_by;
  /// Other users of `value` in the graph besides this slot (other states, other nodes).
  int other_consumers = 0;
};

/// "absent", "graph_input", "defaulted_input", "initializer", "computed" or "outer_scope" (report JSON).
const char* OriginKindName(StateOrigin::Kind kind);

/// Where a final state goes.
struct FinalState {
  std::string value;        ///< name in the Y_h / Y_c slot ("" when the slot is absent or empty)
  bool graph_output = false;  ///< already an output of the node's graph
  int consumers = 0;        ///< uses inside the graph
};

/// Traces the initial state `kind` of `node`.
StateOrigin TraceInitialState(const ModelIndex& index, const RecurrentNode& node, StateKind kind);

/// Describes the final state `kind` of `node`.
FinalState DescribeFinalState(const ModelIndex& index, const RecurrentNode& node, StateKind kind);

/// True when `name` in `graph` is provably all zeros (see StateOrigin::zero).
bool IsProvablyZero(const onnx::GraphProto& graph, const GraphIndex& index, const std::string& name);

}  // namespace rnnstate
