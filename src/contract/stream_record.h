#pragma once
/// \file
/// The metadata's "stream" object: the whole model's verdict on streaming as a rewrite recorded it — the
/// time axes chunked runs cut, and per graph output whether chunked runs give one run's value (schema in
/// docs/metadata.md):
///
///   "stream": {"version": 1, "time": [{"input": "x", "axis": 1}], "chunk_exact": false, ["chunk_multiple": 4,]
///              ["delay": 3, "flush_exact": true,] ["flush": 1,]
///              "reason": "output 'y': Conv 'c' slides a window of 5 frames over time (...)",
///              "outputs": [{"output": "y", "chunked": "differs", "node": "Conv 'c'", "why": "...",
///                           "past": 4, "future": 0},
///                          {"output": "h_n", "chunked": "last"}]}

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rnnstate/json.h"

namespace rnnstate {

/// The version of the "stream" object written.
inline constexpr int kStreamRecordVersion = 1;

/// One graph output in the record.
struct StreamOutputRecord {
  std::string output;
  std::string chunked;           ///< "same", "frames", "last" or "differs"
  int64_t axis = -1;             ///< "frames": the axis the chunks concatenate along
  std::string node;              ///< "differs": the operator that makes it differ ("Conv 'c'"), when one does
  std::string why;               ///< "differs": why
  int64_t past = 0, future = 0;  ///< "differs": frames before / after each frame it needs
  bool whole = false;            ///< "differs": it needs the whole sequence
};

/// The "stream" object.
struct StreamRecord {
  struct Axis {
    std::string input;
    int64_t axis = -1;
    bool operator==(const Axis& o) const { return input == o.input && axis == o.axis; }
  };
  std::vector<Axis> time;     ///< empty: no time axis inside one call (the model streams call by call)
  int64_t fixed_length = -1;  ///< > 0: the time axes have this fixed length
  /// Chunks concatenate only when each chunk's length is a multiple of this (the strides over time of the
  /// windows on the way: a model that downsamples time by 4 streams in chunks of 4, 8, ... frames).
  int64_t chunk_multiple = 1;
  bool chunk_exact = false;
  /// `rewrite --lookahead`: the outputs lag the original's by this many frames (at the outputs' rate);
  /// chunked runs give the whole run's frames but the last `delay` ones, which a flush of as many frames of
  /// zeros brings. 0: no lag.
  int64_t delay = 0;
  /// The frames of zeros the flush feeds at the time inputs' rate: `delay` (written only when it differs:
  /// a ConvTranspose that lags makes the delay frames at its output's rate, `stride` per flushed frame).
  int64_t flush = 0;
  /// With a delay: whether the flush brings the whole run's last frames exactly (one window looks ahead and
  /// the flush's zeros reach it as zeros); "flush_exact" in the document, written beside a delay.
  bool flush_exact = false;
  /// The flush's frames at the time inputs' rate: `flush`, else `delay`.
  int64_t FlushFrames() const { return flush > 0 ? flush : delay; }
  /// The least frames the first call must hold, at the time inputs' rate (a context whose Pad reflects:
  /// its first call's padding reflects frames of that call, which must hold one more than the padding).
  /// 0: any length.
  int64_t first_chunk_min = 0;
  std::string reason;  ///< why not chunk-exact ("" when it is, or without a time axis)
  std::vector<StreamOutputRecord> outputs;
};

/// The record as JSON.
Json StreamRecordJson(const StreamRecord& record);

/// Reads the "stream" object `json`; throws std::runtime_error naming what is wrong.
StreamRecord StreamRecordFromJson(const Json& json);

}  // namespace rnnstate
