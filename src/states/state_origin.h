#pragma once
/// \file
/// Traces where a recurrent node's state really lives. Exporters rarely feed a state directly:
/// PyTorch computes zeros from the batch size (ConstantOfShape / Expand) and slices one tensor per
/// layer; TensorFlow and TorchScript loops carry the state as a loop variable, so the state to stream
/// is the Loop's, not the node's.

#include <string>
#include <vector>

#include "graph/control_flow.h"
#include "graph/model_index.h"
#include "states/recurrent_state.h"

namespace rnnstate {

/// Where a state is promoted: the node whose input slot receives the initial state and whose output
/// slot produces the final state. Usually the state's owner itself; when an enclosing Loop or Scan
/// carries the state from iteration to iteration (its body output is the owner's final state), that
/// Loop/Scan, recursively up.
struct StateSite {
  GraphPath graph;
  int node = -1;
  int input_slot = -1;
  int output_slot = -1;
  bool carried = false;  ///< the site is a Loop/Scan carrying the state

  bool operator==(const StateSite& o) const {
    return graph == o.graph && node == o.node && input_slot == o.input_slot && output_slot == o.output_slot;
  }
};

/// One enclosing control-flow node that the final state is threaded out through, innermost first.
struct ThreadLevel {
  GraphPath graph;        ///< the graph holding the container node
  int node = -1;          ///< the container's index there
  ContainerKind kind = ContainerKind::kOther;  ///< kLoop, kScan9 or kIf
  std::string attribute;  ///< the subgraph the state comes out of ("body", "then_branch", "else_branch")
};

/// Where an initial state comes from.
struct StateOrigin {
  enum class Kind {
    kAbsent,          ///< slot missing or empty: the ONNX default, zeros
    kGraphInput,      ///< a main-graph input without default
    kDefaultedInput,  ///< a main-graph input with an initializer of the same name
    kInitializer,     ///< an initializer (a constant state)
    kComputed,        ///< computed by nodes
    kSubgraphInput,   ///< a Loop/Scan body input that does not carry this state (iteration number, scan element)
    kUndefined,       ///< a name no enclosing graph defines (invalid model)
  };
  Kind kind = Kind::kAbsent;
  std::string value;       ///< the name in the slot ("" when absent)
  GraphPath value_graph;   ///< the graph defining `value` (an enclosing graph for outer-scope references)
  /// True when the value is provably all zeros (absent, or computed from zero constants by
  /// shape-only operators such as ConstantOfShape, Expand, Slice, Reshape).
  bool zero = false;
  /// Nodes of `value_graph` computing the value, nearest first (kComputed only), at most a few.
  std::vector<int> computed_by;
  /// Other users of `value` in the site's graph besides this slot (other states, other nodes, outputs).
  int other_consumers = 0;
  /// The main-graph inputs and the initializers (of any graph) the value is computed from, in the order
  /// a walk back through its producers meets them (kComputed; the value itself for inputs, initializers).
  std::vector<std::string> from_inputs, from_initializers;
};

/// "absent", "graph_input", "defaulted_input", "initializer", "computed", "subgraph_input", "undefined".
const char* OriginKindName(StateOrigin::Kind kind);

/// Where a final state goes, at its site.
struct FinalState {
  std::string value;          ///< name in the site's output slot ("" when absent or empty)
  bool graph_output = false;  ///< already an output of the main graph (main-graph sites only)
  int consumers = 0;          ///< uses inside the site's graph
};

/// "Loop", "Scan" or "If": the op of a container a state is threaded out through (ContainerKindName).
const char* ThreadLevelOp(const ThreadLevel& level);

/// Finds the site of `state`, following loop-carried variables up from its owner.
StateSite LocateSite(const ModelIndex& index, const RecurrentState& state);

/// Every site on the way: the owner first, then each Loop/Scan carrying the state, up to LocateSite's.
std::vector<StateSite> CarrierChain(const ModelIndex& index, const RecurrentState& state);

/// The containers between `site` and the main graph, innermost first. Returns "" or why the state
/// cannot be threaded out (a container other than Loop, If or Scan-9+).
std::string FindThreadLevels(const ModelIndex& index, const StateSite& site, std::vector<ThreadLevel>* levels);

/// Traces the initial state at `site`. With `with_sources`, also the inputs and initializers a computed
/// value comes from (`from_inputs`, `from_initializers`: what `report` shows), a walk back through up to
/// 256 values; without, they stay empty.
StateOrigin TraceInitialState(const ModelIndex& index, const StateSite& site, bool with_sources = true);

/// Describes the final state at `site`.
FinalState DescribeFinalState(const ModelIndex& index, const StateSite& site);

/// True when `name`, seen from the graph at `path`, is provably all zeros (see StateOrigin::zero).
bool IsProvablyZero(const ModelIndex& index, const GraphPath& path, const std::string& name);

}  // namespace rnnstate
