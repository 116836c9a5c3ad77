#include "time/upsample_windows.h"

#include <algorithm>

#include "graph/proto_access.h"

namespace rnnstate {

namespace {

/// "1 frame", "3 frames".
std::string FrameCount(int64_t n) { return std::to_string(n) + (n == 1 ? " frame" : " frames"); }

}  // namespace

std::optional<int64_t> OutputPaddingOnTime(const onnx::NodeProto& node, int64_t axis) {
  if (FindAttribute(node, "output_shape") != nullptr) return std::nullopt;
  const onnx::AttributeProto* extra = FindAttribute(node, "output_padding");
  const int at = static_cast<int>(axis - 2);
  return extra == nullptr || extra->ints_size() <= at ? 0 : extra->ints(at);
}

int64_t UpsampleLag(const TimeWindow& window) {
  return window.pad_before <= 0 ? 0 : (window.pad_before + window.stride - 1) / window.stride;
}

int64_t UpsampleDelay(const TimeWindow& window) { return UpsampleLag(window) * window.stride; }

int64_t UpsampleContext(const TimeWindow& window) {
  const int64_t held = UpsampleDelay(window) - std::max<int64_t>(window.pad_before, 0);
  return (window.Span() + held) / window.stride;
}

int64_t UpsampleTail(const TimeWindow& window) { return window.Span() + 1 - window.stride; }

UpsampleFit FitOfUpsampling(const TimeWindow& window, int64_t extra) {
  if (!window.transpose || window.stride < 2 || window.pad_before < 0) return UpsampleFit::kNone;
  if (window.pad_before > 0) {
    // s frames per input frame, p late: the crop after is the tail less the crop before.
    const int64_t after = window.pad_after - extra;
    const bool lags = window.pad_before <= window.Span() && after == UpsampleTail(window) - window.pad_before;
    return lags ? UpsampleFit::kLags : UpsampleFit::kNone;
  }
  if (window.pad_after - extra == UpsampleTail(window)) return UpsampleFit::kInPlace;
  // Uncropped: a Slice must drop the tail (a tail of no frames is kInPlace already).
  if (window.pad_after == 0 && extra == 0 && UpsampleTail(window) > 0) return UpsampleFit::kCutBySlice;
  return UpsampleFit::kNone;
}

std::optional<std::vector<int64_t>> UpsamplePads(const onnx::NodeProto& node, const TimeWindow& window, int64_t axis,
                                                 int rank) {
  const std::optional<int64_t> extra = OutputPaddingOnTime(node, axis);
  if (!extra || axis < 2) return std::nullopt;
  std::vector<int64_t> pads;
  if (const onnx::AttributeProto* given = FindAttribute(node, "pads")) {
    pads.assign(given->ints().begin(), given->ints().end());
  } else if (rank > 2) {
    pads.assign(2 * static_cast<size_t>(rank - 2), 0);
  }
  const size_t at = static_cast<size_t>(axis - 2);
  if (pads.size() <= at || pads.size() % 2 != 0) return std::nullopt;
  const int64_t held = UpsampleDelay(window) - window.pad_before;
  pads[at] = UpsampleContext(window) * window.stride - held;
  pads[pads.size() / 2 + at] = UpsampleTail(window) + held + *extra;
  return pads;
}

std::optional<TimeFact> UpsampleTime(const NodeTime& n, const TimeFact& x, const TimeWindow& window) {
  if (!window.transpose || window.stride < 2) return std::nullopt;
  const std::optional<int64_t> extra = OutputPaddingOnTime(n.node, x.axis);
  if (!extra) return std::nullopt;
  if (x.context == 0) {
    // Windows apart, aligned: each input frame writes its own s frames.
    if (UpsampleContext(window) > 0 || FitOfUpsampling(window, *extra) != UpsampleFit::kInPlace) return std::nullopt;
    return x;
  }
  // A carried context: the crop before time drops the full frames its c frames wrote alone (less the h
  // frames a lagging one holds back), the crop after the tail the next call completes (and those h).
  const int64_t held = x.context * window.stride - window.pad_before;
  const bool fits = held >= 0 && held < window.stride && (window.Span() + held) / window.stride == x.context &&
                    window.pad_after - *extra == UpsampleTail(window) + held;
  if (!fits) return std::nullopt;
  TimeFact out = x;
  out.context = 0;  // an upsampling keeps the chunk multiple: every chunk gives s frames per frame
  return out;
}

std::string UpsampleProblem(const onnx::NodeProto& node, const TimeWindow& window, int64_t axis) {
  if (!window.transpose || window.stride < 2) return "";
  const std::optional<int64_t> extra = OutputPaddingOnTime(node, axis);
  if (!extra) return ": its output_shape fixes the length of time, which no chunk has";
  const UpsampleFit fit = FitOfUpsampling(window, *extra);
  const std::string tail = FrameCount(UpsampleTail(window));
  if (fit == UpsampleFit::kLags) {
    return ": it crops " + FrameCount(window.pad_before) +
           " before time, so its output lags its input (a frame is final only after the next chunk); rewrite "
           "--lookahead carries it, its output then " +
           FrameCount(UpsampleDelay(window)) + " late";
  }
  if (fit != UpsampleFit::kNone) return "";
  if (window.pad_before > 0) {
    return ": it crops " + FrameCount(window.pad_before) +
           " before time, so its output lags its input (a frame is final only after the next chunk); a rewrite "
           "carries it only when it crops at most its span of " +
           FrameCount(window.Span()) + " before time and its tail of " + tail + " less that after";
  }
  return ": it crops " + FrameCount(window.pad_after - *extra) + " after time where its tail is " + tail +
         ": its frames do not line up with its input's";
}

}  // namespace rnnstate
