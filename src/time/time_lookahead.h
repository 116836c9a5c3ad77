#pragma once
/// \file
/// The model's lookahead: how many frames after each output frame the model must see before it can emit
/// it, summed along the path from the data inputs to each graph output. A window over time that pads r
/// frames after time at stride 1 (a "same" convolution, time/causal_windows.h) looks r frames ahead; two in
/// sequence look ahead by the sum. `rewrite --lookahead` carries such windows so that each call emits the
/// frames that are final: every output then lags the original by its lookahead, and chunked runs concatenate
/// to the whole run's frames only when every path to every output lags alike:
///
///   x ──Conv(pads 1, 1)──Conv(pads 2, 2)──GRU──> y      lookahead 3: y comes 3 frames late, exactly
///   x ──Conv(pads 1, 1)──Add──> y                        frames 1 late meet frames on time: refused
///   └────────────────────┘
///
/// Pure analysis over the main graph (a node's subgraphs are not followed).

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "graph/model_index.h"
#include "time/time_flow.h"

namespace rnnstate {

/// How late a carried window's output comes, and what brings its last frames.
struct WindowDelay {
  int64_t frames = 0;  ///< frames at the window's output rate
  int64_t flush = 0;   ///< frames of the model's data inputs a flush of zeros feeds to bring them
  std::string input;   ///< the value the window reads (its context's value), for FlushExact
};

/// The lookahead of the main graph's outputs.
struct Lookahead {
  int64_t frames = 0;  ///< the largest lookahead of a data output (frames at the output's rate)
  /// The frames of the data inputs a flush feeds to bring the last `frames` (as many, but where a
  /// ConvTranspose that lags makes them frames at its output's rate: time/upsample_windows.h).
  int64_t flush = 0;
  /// True when the flush brings the whole run's last frames exactly: one window looks ahead, and the
  /// flush's zeros reach it as zeros (from a data input through views alone: a recurrence or a bias in
  /// between turns them into other values, as a second window's padding of its own would).
  bool flush_exact = false;
  /// The windows on the way that look ahead, each with its frames: "Conv 'enc.0' 1".
  std::vector<std::string> windows;
  /// "" when every path to every data output lags alike; else where they part: "Add 'res' joins frames
  /// 1 frame late (after Conv 'c') with frames on time".
  std::string problem;
};

/// Measures the lookahead of the indexed model along the time flow `flow`: `delays` gives how late each
/// window (main-graph node index) makes its output, `delayed` the values that already lag (a context Concat
/// a recorded lookahead made, or the ConvTranspose after it: value name -> delay); `state_outputs` are left
/// out (their pairs carry them). A window with a stride over time that frames already late reach would
/// change their rate: a problem.
Lookahead MeasureLookahead(const ModelIndex& index, const TimeFlow& flow, const std::map<int, WindowDelay>& delays,
                           const std::map<std::string, WindowDelay>& delayed,
                           const std::set<std::string>& state_outputs);

}  // namespace rnnstate
