#pragma once
/// \file
/// What each carried variable of a `Loop` or `Scan` (opset 9+) is, read from the body —
/// a recurrent state (its next value is computed from its previous one), or something a loop carries that
/// is no state: a pass-through (weights TF's while_v2 carries along), an iteration counter (v + 1, used
/// only to index the time input and to end the loop), a sequence collecting per-step outputs
/// (TorchScript's SequenceInsert), a value recomputed from scratch every iteration, or the state of a
/// recurrent operator inside the body (that operator owns it). Also where the body uses the iteration
/// number and the counters, which decides whether chunks of the loop equal one run (loop_streaming.h).
///
///   Loop(M, cond, h0, W, t0)           body(iter, cond_in, h, W_in, t) -> (cond_out, h', W_out, t', y)
///     h' = tanh(x[t] W_in + h U)        h: a state
///     W_out = Identity(W_in)            W: passed through
///     t' = t + 1                        t: a counter (x[t] indexes the time input)

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "graph/control_flow.h"
#include "graph/graph_path.h"
#include "graph/model_index.h"

namespace rnnstate {

/// What one carried variable is.
enum class CarriedRole {
  kState,         ///< recurs: its next value is computed from its previous one
  kPassThrough,   ///< returned unchanged (loop-invariant)
  kCounter,       ///< v + constant, used only to index an outer value, for its own update and the condition
  kCollector,     ///< a sequence collecting per-step values (SequenceInsert on itself)
  kIndependent,   ///< its next value does not depend on its previous one
  kOpState,       ///< carries the state of a recurrent operator of the body, which owns that state
  kUnclassified,  ///< recurs in a way rnnstate cannot classify (grows every iteration, not a tensor)
};

/// A read of an outer value at an iteration index: `Gather(data, index, axis)` in the body.
struct IndexedRead {
  std::string data;  ///< the outer-scope value read
  int64_t axis = 0;  ///< the Gather's axis (negative as written)
  int node = -1;     ///< the Gather, in the body
};

/// Where the body uses an index (the iteration number or a counter).
struct IndexUses {
  std::vector<IndexedRead> reads;       ///< Gathers of outer values at exactly the index
  std::vector<std::string> other_uses;  ///< anything else ("Mul 'drift'"), besides the update and the condition
};

/// One carried variable of a Loop or Scan-9+.
struct CarriedInfo {
  CarriedVariable slots;
  std::string body_input;   ///< its name in the body
  std::string body_output;  ///< the body output that becomes its next value
  CarriedRole role = CarriedRole::kState;
  std::string why;  ///< for roles other than kState: why it is no state
  /// kCounter (and a state that is a counter used otherwise): start and step when they are constants.
  std::optional<int64_t> start, step;
  IndexUses uses;  ///< counters: where the body uses it
};

/// A Loop or Scan-9+ node read for its recurrences.
struct LoopAnatomy {
  GraphPath graph;  ///< the graph holding the node
  int node = -1;
  ContainerKind kind = ContainerKind::kOther;
  GraphPath body;  ///< the body's path
  std::vector<CarriedInfo> carried;
  IndexUses iteration;  ///< Loop: where the body uses the iteration number
};

/// (graph, node, input slot) of a Loop/Scan input that carries a recurrent operator's state.
using CarrierSlots = std::set<std::tuple<GraphPath, int, int>>;

/// Reads the Loop or Scan-9+ `node` of the graph at `graph`; nullopt for another node or a malformed one.
std::optional<LoopAnatomy> ReadLoop(const ModelIndex& index, const GraphPath& graph, int node,
                                    const CarrierSlots& op_carriers);

/// "state", "passed through", ...: for reports.
const char* CarriedRoleName(CarriedRole role);

}  // namespace rnnstate
