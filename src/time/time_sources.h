#pragma once
/// \file
/// Which input axes chunked runs cut: the time axes the time flow starts from. Given (`--time-axis`),
/// recorded by an earlier rewrite (the metadata's "stream" object), or found: the one symbolic dimension
/// of the data inputs besides the batch (`x [batch, seq, 3]`: seq) — and, where that is ambiguous or the
/// length is fixed (an export without dynamic axes), the input axis along which the model's forward
/// recurrences run, found by following each candidate axis through the graph; with no recurrent node, the
/// one named dimension of the data that a causal window (time/causal_windows.h) slides along. A model whose data
/// carries no such axis (Silero VAD: one frame per call) has none: it streams call by call.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "find/analysis.h"
#include "graph/model_index.h"
#include "loops/axis_trace.h"

namespace rnnstate {

/// The time axes of a model's data inputs, and how they were chosen.
struct TimeAxes {
  enum class Source {
    kNone,      ///< no axis inside a call: the model streams call by call
    kGiven,     ///< `--time-axis`
    kRecorded,  ///< the metadata of an earlier rewrite
    kNamed,     ///< the one symbolic dimension of the data inputs besides the batch
    kFollowed,  ///< the axis the model's recurrences run along
    kWindowed,  ///< no recurrent node: the one named dimension a causal window over time slides along
  };
  std::vector<InputAxis> axes;
  Source source = Source::kNone;
  /// kNone: why not, when something looked like a time axis ("several dimensions could be ...").
  std::string note;
  /// The axes' fixed length (an export without dynamic axes), or -1 when symbolic.
  int64_t fixed_length = -1;
};

/// Chooses the time axes of the indexed model (see the file comment). `given`: `--time-axis`; `recorded`:
/// the axes the metadata records, when it records a stream object (an empty list: the rewrite found none,
/// which a rewrite of the rewrite keeps rather than guessing again from the names the rewrite gave).
TimeAxes ChooseTimeAxes(const ModelIndex& index, const Analysis& analysis, const std::vector<InputAxis>& given,
                        const std::optional<std::vector<InputAxis>>& recorded);

/// The main-graph inputs a caller feeds as data: not initializers' defaults, not state inputs (the
/// authors' or a recorded pair's, or a graph input read only as an initial state).
std::vector<std::string> DataInputs(const ModelIndex& index, const Analysis& analysis);

}  // namespace rnnstate
