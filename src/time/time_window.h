#pragma once
/// \file
/// The window a Conv, ConvTranspose or pooling node slides along one of its spatial axes: kernel, stride,
/// dilation and padding, with `auto_pad` resolved. What the time rules report about a window over time,
/// and what a rewrite needs to carry its context between calls.
///
///   Conv(x [N, C, T], W [M, C, 5], pads=[4, 0])   window 5, dilation 1, stride 1, 4 before, 0 after: causal
///   Conv(x, W [M, C, 3], auto_pad=SAME_UPPER)      window 3: 1 before, 1 after (one frame of lookahead)
///   ConvTranspose(x, W [C, M, 3], pads=[2, 2])     window 3 (flipped): 0 before, 0 after (stride 1 only)

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <string>

#include "graph/model_index.h"

namespace rnnstate {

/// A window along one spatial axis.
struct TimeWindow {
  int64_t kernel = 1;
  int64_t stride = 1;
  int64_t dilation = 1;
  int64_t pad_before = 0;
  int64_t pad_after = 0;
  bool transpose = false;  ///< ConvTranspose: each input frame spreads over the window
  /// A ConvTranspose at stride 1, read as the window it equals (its kernel reversed): `pad_before` and
  /// `pad_after` are that window's padding, span minus the ConvTranspose's `pads` (which crop its output).
  bool flipped = false;

  /// Frames the window spans beyond one: (kernel - 1) * dilation.
  int64_t Span() const { return (kernel - 1) * dilation; }
  /// True when each output frame is its own input frame (kernel 1, stride 1, no padding).
  bool PerFrame() const { return Span() == 0 && stride == 1 && pad_before == 0 && pad_after == 0; }
  /// "a window of 5 frames (dilation 2, stride 1; 8 before, 0 after)".
  std::string Text() const;
};

/// The window of `node` (in the graph at `graph`; input 0 of rank `rank`, -1 when unknown) along input
/// axis `axis` (>= 2); nullopt when its kernel size is unknown or the attributes do not fit.
std::optional<TimeWindow> ReadTimeWindow(const ModelIndex& index, const GraphPath& graph, const onnx::NodeProto& node,
                                         int64_t axis, int rank);

}  // namespace rnnstate
