#pragma once
/// \file
/// The public contract with runtimes: model metadata key `rnnstate`, a JSON document listing the state
/// input/output pairs (schema in README.md, "Metadata").

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "rnnstate/json.h"

namespace rnnstate {

/// The metadata_props key.
inline constexpr const char* kMetadataKey = "rnnstate";
/// The schema version written.
inline constexpr int kMetadataVersion = 1;

/// Rows [first, second) on axis 0 of a stacked state tensor.
using RowRange = std::pair<int64_t, int64_t>;

/// "[0:1]"; "" for no rows.
std::string RowRangeText(const std::optional<RowRange>& rows);
/// [first, second] as a JSON array.
Json RowRangeJson(const RowRange& rows);
/// True when the two ranges share a row.
bool RowsOverlap(const RowRange& a, const RowRange& b);

/// One state pair: feed `output` of one call as `input` of the next.
struct StatePair {
  std::string input;
  std::string output;
  std::string node;   ///< recurrent node name
  std::string graph;  ///< graph path of the node, "main" for the main graph
  std::string kind;   ///< "h" or "c"
  bool optional = true;     ///< the input has a default (may be left unfed)
  bool streamable = true;   ///< chunked runs equal one full run (forward recurrences)
  /// Set for a state the model exposes stacked (PyTorch's `(h0, c0)`): rows [first, second) on axis 0
  /// of `input` and of `output` are this state's; other pairs hold the other rows of the same tensors.
  std::optional<RowRange> rows;

  bool operator==(const StatePair& o) const {
    return input == o.input && output == o.output && node == o.node && graph == o.graph && kind == o.kind &&
           optional == o.optional && streamable == o.streamable && rows == o.rows;
  }
};

/// The pairs recorded in `model`, or an empty list when there is no `rnnstate` key.
/// Sets `error` (and returns what could be read) when the value is not valid metadata.
std::vector<StatePair> ReadStatePairs(const onnx::ModelProto& model, std::string* error);

/// The JSON array of `pairs` (as in the metadata's "states").
Json StatePairsJson(const std::vector<StatePair>& pairs);

/// The complete metadata value for `pairs`.
std::string StateMetadataValue(const std::vector<StatePair>& pairs);

/// Sets the `rnnstate` key of `model` to `pairs`, replacing an old value in place.
void WriteStatePairs(onnx::ModelProto& model, const std::vector<StatePair>& pairs);

}  // namespace rnnstate
