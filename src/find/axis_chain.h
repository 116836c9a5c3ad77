#pragma once
/// \file
/// The value an axis has exactly the length of, up a chain of operators that cannot change that length:
/// a recurrent operator's outputs (the batch of its X), one-operand elementwise and normalizing operators,
/// Transpose, Squeeze and Unsqueeze, within the graph that defines the value.
///
///   x ──LSTM──> y ──Squeeze──> s ──LSTM──> y2 ──Squeeze──> s2      batch of s2 (axis 1): root x, axis 1
///
/// Unlike TraceAxis (the main-graph input axis a dimension is named after, followed through operators
/// that only keep an axis, such as a Slice assumed not to cut it, or any operand of a broadcast), a root
/// can stand in for the value at run time: the rewrite reads the batch of one root for every state whose
/// batch has that root, and computes the defaults' shape once for all of them.

#include <cstdint>
#include <string>
#include <unordered_map>

#include "graph/graph_path.h"
#include "graph/model_index.h"

namespace rnnstate {

/// Where a chain starts: axis `axis` of `value`, defined in the graph at `graph` (or seen from it, for a
/// graph input, an initializer or an outer-scope name).
struct AxisRoot {
  GraphPath graph;
  std::string value;
  int64_t axis = -1;
};

/// Finds roots, remembering every value it passes: the chains of many states run through the same
/// values (each layer's batch through every layer before it), and each value is followed once. A chain
/// stays in one graph, so it is walked and remembered by that graph's index, not by its path: a step in a
/// graph nested 20 levels deep neither copies nor compares a 20-step path.
class AxisChainRoots {
 public:
  /// Roots in `index`'s model; `index` must outlive this.
  explicit AxisChainRoots(const ModelIndex& index) : index_(index) {}

  /// The root of axis `axis` of `value` seen from the graph at `path`: `value` itself (in the graph that
  /// defines it) when its producer is not such an operator, lives in another graph, or is none.
  AxisRoot Find(const GraphPath& path, const std::string& value, int64_t axis);

 private:
  /// An axis of a value in the graph whose index is `graph` (a start or a root of a chain).
  struct ChainAxis {
    const GraphIndex* graph = nullptr;
    std::string value;
    int64_t axis = -1;

    bool operator==(const ChainAxis& other) const {
      return graph == other.graph && axis == other.axis && value == other.value;
    }
  };
  struct ChainAxisHash {
    size_t operator()(const ChainAxis& key) const;
  };

  const ModelIndex& index_;
  std::unordered_map<ChainAxis, ChainAxis, ChainAxisHash> roots_;  // each value passed -> its root
};

}  // namespace rnnstate
