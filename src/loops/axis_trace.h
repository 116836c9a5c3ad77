#pragma once
/// \file
/// Where the length of a tensor's axis comes from: followed back to an axis of a main-graph input,
/// through the operators that keep an axis (SourceAxis: elementwise ops, Transpose,
/// Squeeze/Unsqueeze, Gather/Slice/Concat/Split on other axes, MatMul rows, recurrent ops) and through
/// the shape computations exporters write for a loop's initial state: `ConstantOfShape(s)` and
/// `Expand(v, s)`, whose axis k is element k of the shape vector s, itself `Concat`, `Unsqueeze`,
/// `Gather`, `Slice` and `Cast` of `Shape(x)`:
///
///   zeros = ConstantOfShape(Concat(Unsqueeze(Gather(Shape(x), 1)), [4]))   axis 0 -> x:1
///   s0    = ConstantOfShape(Slice(Shape(x2), [1], [3]))                     axis 0 -> x2:1, axis 1 -> x2:2
///
/// Read by the loop-state finder (the batch of a carried state) and the chunk checks (whether a value
/// depends on the time axis of a chunked input).

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "exposure/branch_facts.h"
#include "graph/model_index.h"

namespace rnnstate {

/// The (input slot, axis) of `node` (in the graph at `path`) that axis `axis` of its output `slot` comes
/// from, through operators that keep an axis (elementwise ops, Transpose, Squeeze/Unsqueeze,
/// Gather/Slice/Pad/Concat/Split on other axes, MatMul rows, recurrent ops, the batch of a Conv or pool);
/// nullopt when it comes from no one input axis.
std::optional<std::pair<int, int64_t>> SourceAxis(const ModelIndex& index, const GraphPath& path,
                                                  const onnx::NodeProto& node, int slot, int64_t axis);

/// An axis of a main-graph input.
struct InputAxis {
  std::string input;
  int64_t axis = -1;
  bool operator==(const InputAxis& o) const { return input == o.input && axis == o.axis; }
};

/// What earlier TraceAxis calls on one model found, for later ones on the same model (the same ModelIndex;
/// any BranchFacts) to reuse: the traces of many states run through the same values (each layer's batch
/// through every layer before it), and each value is then followed once instead of once per state.
/// The result is the same as without it, the depth limit included.
class AxisTraceMemo {
 public:
  enum class Kind : char { kAxis = 'a', kElement = 'e' };

  /// A call whose every call below passed the axis on to one operand: `result`, found `height` calls
  /// below `depth` (where it was called), or cut by the depth limit (`cut`).
  struct Entry {
    std::optional<InputAxis> result;
    int depth = 0;
    int height = 0;
    bool cut = false;
  };

  /// The key of a trace of `axis` (or element) of `value` seen from the graph at `path`.
  static std::string Key(Kind kind, const GraphPath& path, const std::string& value, int64_t axis);
  /// The entry under `key`, or nullptr.
  const Entry* Find(const std::string& key) const;
  /// Keeps `entry` under `key`, replacing an older one.
  void Store(std::string key, Entry entry);

 private:
  std::unordered_map<std::string, Entry> entries_;
};

/// The main-graph input axis that axis `axis` of `value` (seen from the graph at `path`) has the length
/// of, or nullopt when it cannot be followed. An If's output is followed into every branch that can run
/// (`facts`, when given, rule out the branches of PyTorch's rank tests): they must agree. `memo`, when
/// given, holds the traces of earlier calls on the same model.
std::optional<InputAxis> TraceAxis(const ModelIndex& index, const GraphPath& path, const std::string& value,
                                   int64_t axis, const BranchFacts* facts = nullptr, AxisTraceMemo* memo = nullptr);

/// The main-graph input axis that element `element` of the 1-D integer tensor `vector` (a shape
/// computation) is the length of, or nullopt.
std::optional<InputAxis> TraceShapeElement(const ModelIndex& index, const GraphPath& path, const std::string& vector,
                                           int64_t element);

/// The number of elements of the 1-D integer tensor `vector` when it is known from the graph (a
/// constant, a `Shape` of a value of known rank, and `Concat`/`Slice`/`Gather`/`Unsqueeze` of those).
std::optional<int64_t> VectorLength(const ModelIndex& index, const GraphPath& path, const std::string& vector);

}  // namespace rnnstate
