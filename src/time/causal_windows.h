#pragma once
/// \file
/// Causal windows over time whose context a state can carry (issue 39): a Conv or pooling node of the
/// main graph sliding a window of span S = (kernel - 1) * dilation over the time axis, whose only padding
/// on time is S frames of zeros in front of the sequence — its own `pads`, or a constant `Pad` node whose
/// one reader it is. A rewrite replaces that padding by the last S frames of the previous call (a context
/// state, rewrite/context_plan.h), so chunked runs see what one run sees (with a stride s over time, in
/// chunks whose length is a multiple of s: the time flow records it, TimeFact::multiple):
///
///   before: x ──Pad(time: S before, 0 after)──> Conv(k, d)          or  x ──Conv(k, d, pads: S before)──>
///   after:  Concat(ctx_in, x) ──Pad(time: 0)──> Conv(k, d)              Concat(ctx_in, x) ──Conv(pads: 0)──>
///                 └──Slice(last S frames)──> ctx_out
///
/// A Conv padded on both sides whose one reader is a Slice dropping the last frames again (the common
/// "CausalConv1d": `conv(padding=S)[..., :-S]`) is causal too: the rewrite removes both paddings and makes
/// the Slice keep every frame. Pads that leave time alone between the causal Pad and the window are
/// passed over.
///
/// The first call's context is the padding itself (zeros), so the unfed rewrite equals the original; a Pad
/// with another value or in `edge`/`reflect` mode is carried with an empty first context, the Pad padding
/// what the context lacks (time/pad_fill.h); a window without padding ("valid") with an empty first context
/// too, its first call emitting fewer frames as one run does. A ConvTranspose with a stride over time is
/// carried when it is an aligned upsampling (time/upsample_windows.h): its context is floor(S / s) input
/// frames; one that lags (crops frames before time) with --lookahead, as windows that look ahead are.
/// Windows that look ahead (but with --lookahead) or are transposed otherwise are not carried: the
/// time flow's verdict says why they do not stream. (Strided windows without padding whose span is shorter than their
/// stride need no context: the time rules let them stream as they are.) Pure analysis.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph_path.h"
#include "graph/model_index.h"
#include "time/time_flow.h"
#include "time/time_window.h"
#include "values/element_map.h"

namespace rnnstate {

/// One causal window whose context a state can carry.
struct CausalWindow {
  int window = -1;  ///< main-graph index of the Conv or pooling node
  int pad = -1;     ///< main-graph index of the Pad in front of it, or -1 when the window pads itself
  /// Main-graph index of the Slice that cuts the window's padding after time off its output again (a
  /// causal convolution written as "pad both sides, drop the last frames"), or -1.
  int cut = -1;
  /// The value whose last frames the context carries: the Pad's input, or the window's own input.
  std::string value;
  int64_t axis = -1;   ///< the time axis of `value`
  int64_t frames = 0;  ///< the window's span: the frames of the previous call it needs
  TimeWindow shape;    ///< the window as written (its padding before the rewrite)
  std::string what;    ///< "Conv 'enc.0'": the window, for messages
  /// A window that looks ahead (its own `pads`: l >= 0 before time and r > 0 after, l + r = its span, at
  /// stride 1: a "same" convolution): r. Carried only with `rewrite --lookahead`: the context replaces
  /// both paddings, its first call's default holds the l frames of padding before, and the window's output
  /// comes r frames late (each call emits the frames its input completes). The same for a Pad of zeros in
  /// front that pads l before time and r after (F.pad(x, (l, r)) + Conv1d(padding=0)). A strided ConvTranspose that
  /// crops p frames before time (it lags): ceil(p / s), the input frames its first context holds fewer.
  int64_t lookahead = 0;
  /// The frames of the window's output a carried lookahead makes late: `lookahead`, or for a strided
  /// ConvTranspose that lags (time/upsample_windows.h) `lookahead` input frames, at its output's rate.
  int64_t Delay() const { return shape.transpose ? lookahead * shape.stride : lookahead; }
  /// How the Pad in front fills (time/pad_fill.h): "" for zeros; "constant" (another value), "edge" or
  /// "reflect": the context's default is then empty and the rewrite computes the Pad's amounts on time.
  std::string fill;
  /// A window without padding on time at stride 1 (a "valid" window, no Pad in front): its output has span
  /// frames fewer than its input. Its context's first call holds no frames, so each call emits the frames
  /// its input completes: the first call span fewer, as one run does, the later ones as many as fed.
  bool valid = false;

  /// The node the context's Concat feeds: the Pad when there is one, else the window.
  int Reader() const { return pad >= 0 ? pad : window; }
};

/// The causal windows over time of the main graph, as the time flow `flow` (run without any window
/// carried) finds their inputs; in node order. With `lookahead`, the windows that look ahead too
/// (CausalWindow::lookahead > 0).
std::vector<CausalWindow> FindCausalWindows(const ModelIndex& index, const TimeFlow& flow, bool lookahead = false);

/// The nodes the windows' contexts make stream: each window, and its Pad.
StreamedNodes StreamedNodesOf(const std::vector<CausalWindow>& windows);

/// The `pads` of `node` (a window's attribute, or a Pad's attribute or constant input 1) with the time
/// padding before axis `axis` removed (and after it, with `and_after`); nullopt when they cannot be read.
/// For a Pad whose input 3 lists the axes, the positions are those of that list.
std::optional<std::vector<int64_t>> PadsWithoutTimeBefore(const ModelIndex& index, const onnx::NodeProto& node,
                                                          int64_t axis, int rank, bool and_after = false);

/// The shape of main-graph value `name` as onnx's inference gives it, with the fixed sizes it lost
/// completed through the Pads, windows and one-operand elementwise operators that compute the value (a Pad
/// whose amounts a chain of constants computes has no inferred shape: PyTorch's `F.pad`); nullopt when the
/// rank is unknown.
std::optional<SymShape> CompletedShape(const ModelIndex& index, const std::string& name);

/// The `ends` of Slice `slice` with its bound on axis `axis` (of an input of rank `rank`) made "to the end"
/// (INT64_MAX); nullopt when they cannot be read.
std::optional<std::vector<int64_t>> SliceEndsToTheEnd(const ModelIndex& index, const onnx::NodeProto& slice,
                                                      int64_t axis, int rank);

}  // namespace rnnstate
