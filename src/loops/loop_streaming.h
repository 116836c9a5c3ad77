#pragma once
/// \file
/// Whether chunked runs of a Loop or Scan over a hand-written cell, its states fed back,
/// equal one run — streamable only where it is provable from the graph:
///   - a Scan whose scan inputs are graph inputs (or computed from one step by step), scanned forward;
///   - a Loop that walks the time axis of a graph input: trip count that input's length (Shape -> Gather,
///     with casts, through a Transpose), the body reading the input at the iteration index (the iteration
///     number, or a counter started at 0 stepping by 1) and at nothing else, a condition that is true or
///     ends the loop at the same length (tf2onnx's `Less(t + 1, T)`);
///   - an autoregressive Loop: trip count given by the caller (a graph input), no input read per step.
/// In every case the body uses the iteration number and the counters for nothing else (a counter used
/// otherwise is a state, see carried_variables.h), no carried variable is unclassified, every collector
/// starts empty, and the loop's surroundings are the same chunk by chunk (loop_chunks.h). A Loop whose
/// trip count is a constant equal to its time input's static length (tf2onnx) is not streamable as it
/// is; `rewrite --time-axis` makes it so (see time_axis.h).

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "graph/model_index.h"
#include "loops/carried_variables.h"
#include "loops/time_source.h"
#include "states/wiring.h"

namespace rnnstate {

/// A constant Reshape target holding the fixed length at `position` (tf2onnx's `[60, 1, F]` on the way
/// from the input to a loop's per-step read): `--time-axis` writes -1 there.
struct LengthInShape {
  ValueRef value;
  int64_t position = -1;
  bool operator==(const LengthInShape& o) const { return value == o.value && position == o.position; }
};

/// A Loop with a constant trip count equal to its time input's static length: what `--time-axis` changes.
struct FixedTimeLoop {
  TimeRef time;
  int64_t length = 0;
  /// The trip count and the condition's bounds: constants equal to `length`, where they are defined.
  std::vector<ValueRef> constants;
  /// Reshape targets on the time axis's way to the loop that hold `length`.
  std::vector<LengthInShape> shapes;
};

/// The verdict on one Loop or Scan.
struct LoopVerdict {
  bool streamable = false;
  std::string reason;  ///< why not ("" when streamable)
  std::string walk;    ///< what the loop walks, for reports ("walks x:0", "scans x:0", "autoregressive ...")
  std::optional<FixedTimeLoop> fixed;
  /// The input axes it walks (read per step, or whose length is its trip count).
  std::vector<TimeRef> times;
};

/// Judges the Loop or Scan read as `loop`. A fixed-length Loop's reason advises `--time-axis`, or, for an
/// axis in `refused_time_axes` (given, but it changed nothing), points to that option's warning.
LoopVerdict JudgeLoop(const ModelIndex& index, const LoopAnatomy& loop,
                      const std::set<std::string>& refused_time_axes = {});

}  // namespace rnnstate
