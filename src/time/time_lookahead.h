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

/// The lookahead of the main graph's outputs.
struct Lookahead {
  int64_t frames = 0;  ///< the largest lookahead of a data output (frames at the output's rate)
  /// The windows on the way that look ahead, each with its frames: "Conv 'enc.0' 1".
  std::vector<std::string> windows;
  /// "" when every path to every data output lags alike; else where they part: "Add 'res' joins frames
  /// 1 frame late (after Conv 'c') with frames on time".
  std::string problem;
};

/// Measures the lookahead of the indexed model along the time flow `flow`: `delays` gives the frames each
/// window (main-graph node index) looks ahead, `delayed` the values that already lag (a context Concat a
/// recorded lookahead made: value name -> frames); `state_outputs` are left out (their pairs carry them).
Lookahead MeasureLookahead(const ModelIndex& index, const TimeFlow& flow, const std::map<int, int64_t>& delays,
                           const std::map<std::string, int64_t>& delayed, const std::set<std::string>& state_outputs);

}  // namespace rnnstate
