#pragma once
/// \file
/// For loop_chunks.h: whether a value is the same in every chunk of a streamed run. Chunked
/// runs cut some main-graph inputs along their time axis and give an autoregressive loop its own trip
/// count per call; a value computed from those differs from chunk to chunk, except where it reads only
/// the lengths of other axes (`Gather(Shape(x), 1)`, the batch) — and, for a value read on the first call
/// only (a state's initial value), the first frames (`Gather(x, 0)` along time), which the first chunk
/// shares with one run.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "graph/model_index.h"
#include "states/wiring.h"

namespace rnnstate {

/// What chunked runs cut: main-graph inputs along their time axis, and an autoregressive loop's trip
/// count (a graph input given per call).
struct ChunkedInputs {
  std::map<std::string, int64_t> time_axes;  ///< input -> its time axis
  std::string trip_input;                    ///< "" when the trip count is not fed per call
};

/// Answers "is this value the same in every chunk?" for values around one Loop or Scan (memoized).
class ChunkDependence {
 public:
  /// `graph`/`node`: the loop, whose own outputs differ per chunk. `first_chunk`: the values asked about
  /// are read on the first call only.
  ChunkDependence(const ModelIndex& index, const GraphPath& graph, int node, const ChunkedInputs& chunked,
                  bool first_chunk);

  /// "" when `name` (seen from `path`) is the same in every chunk; else what it depends on ("'x' (cut
  /// into chunks along axis 0)", "the length of 'x' (axis 0, cut into chunks)").
  std::string Of(const GraphPath& path, const std::string& name, int depth = 0);

 private:
  std::string Compute(const ResolvedName& resolved, const std::string& name, int depth);
  std::string LengthOf(const GraphPath& path, const std::string& value, int64_t axis, int depth);
  std::string ShapeElements(const GraphPath& graph, const onnx::NodeProto& node,
                            const std::optional<std::vector<int64_t>>& elements, int depth);
  std::optional<std::vector<int64_t>> PickedElements(const GraphPath& graph, const onnx::NodeProto& node);
  bool FirstFrames(const GraphPath& graph, const onnx::NodeProto& node);

  const ModelIndex& index_;
  GraphPath loop_graph_;
  int loop_node_;
  const ChunkedInputs& chunked_;
  bool first_chunk_;
  std::map<ValueRef, std::string> memo_;
};

}  // namespace rnnstate
