#pragma once
/// \file
/// `ConvTranspose` with a stride s > 1 over time (an upsampling decoder), and how it streams. Each input
/// frame i writes the output frames i*s ... i*s + S of the uncropped ("full") output (S = (k - 1) * d, its
/// span); consecutive frames overlap-add on S + 1 - s of them (the tail). Full frame g sums input frames
/// ceil((g - S) / s) ... floor(g / s), so once a call has seen input frames up to a + T - 1, the full frames
/// before (a + T) * s are final, and the call's T * s of them need the floor(S / s) input frames before
/// its chunk: that is the context.
///
/// The upsampling is *aligned* when it crops nothing before time and exactly the tail after it — its own
/// `pads` after time less its `output_padding` equal S + 1 - s (kInPlace), or it crops nothing and a Slice,
/// its one reader, drops the last S + 1 - s frames (kCutBySlice, PyTorch's causal `deconv(x)[..., :-(k-s)]`).
/// Each input frame then gives s output frames, the frames one run gives for it, with no delay:
///
///   before: x ──ConvTranspose(k 4, s 2, pads 0, 0)──Slice(drop last 2)──>              (2 T frames)
///   after:  Concat(ctx_in, x) ──ConvTranspose(k 4, s 2, pads 2, 2)──Slice(to the end)──>   (2 T frames)
///                  └──Slice(last 1 frame)──> ctx_out
///
/// A context of c = floor(S / s) input frames (zeros at first: the frames before the sequence) and the crop
/// of its c * s full frames before time make the call emit exactly its own frames: a pure graph edit, exact
/// (each output frame sums the same terms as in one run). An aligned upsampling
/// whose windows do not overlap (S < s: c = 0) streams as it is.
///
/// PyTorch's usual upsampler crops p frames before time and p - output_padding after (symmetric `padding`:
/// ConvTranspose1d(k 4, s 2, padding 1); k 3, s 2, padding 1, output_padding 1): it still gives s frames per
/// input frame when it crops its tail less p after (kLags), but output frame n is full frame n + p, final
/// only once input frame floor((n + p) / s) is seen: after input frames up to A - 1, the output frames
/// before A * s - p. It *lags*. A call cannot emit exactly those (the first call would emit p fewer than
/// s per frame, which is not a whole number of input frames when s does not divide p, and no static crop
/// depends on the call), so `rewrite --lookahead` holds h = s * ceil(p / s) - p frames more: every output
/// frame comes D = s * ceil(p / s) frames late (whole input frames: q = ceil(p / s)), the context is
/// c = floor((S + h) / s) input frames, the crop c * s - h before time and the tail + h after. The first
/// call's context holds q frames fewer (c - q >= 0 as p <= S), so it emits D frames fewer than s per frame
/// and the later calls exactly s per frame; a flush of q input frames of zeros brings the last D:
///
///   before: x ──ConvTranspose(k 4, s 2, pads 1, 1)──>                   (2 T frames; frame n lags by 1)
///   after:  Concat(ctx_in [1 frame first, 2 later], x) ──ConvTranspose(k 4, s 2, pads 3, 3)──>  (2 T
///                  └──Slice(last 2 frames)──> ctx_out                       frames, 2 T - 2 at first)
///
/// Pure analysis.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "time/time_fact.h"
#include "time/time_rules.h"
#include "time/time_window.h"

namespace rnnstate {

/// How a strided ConvTranspose's output lines up with its input frames.
enum class UpsampleFit {
  kNone,        ///< not aligned (crops before time, crops another amount, or not a strided ConvTranspose)
  kInPlace,     ///< its own pads crop the tail: s output frames per input frame as written
  kCutBySlice,  ///< uncropped: aligned when its one reader is a Slice dropping the tail
  /// Crops 1 <= p <= S frames before time and its tail less p after (PyTorch's symmetric padding): s frames
  /// per input frame, lagging; carried with `rewrite --lookahead`, D = UpsampleDelay frames late.
  kLags,
};

/// The `output_padding` of ConvTranspose `node` on input axis `axis` (>= 2); nullopt when its
/// `output_shape` fixes the length (no chunk has it).
std::optional<int64_t> OutputPaddingOnTime(const onnx::NodeProto& node, int64_t axis);

/// The frames a strided ConvTranspose `window` (as written) crops before time and comes late once carried:
/// D = s * ceil(p / s) output frames, a whole number of input frames (0 when it crops nothing before).
int64_t UpsampleDelay(const TimeWindow& window);
/// The input frames the first call's context of `window` (as written) holds fewer: ceil(p / s).
int64_t UpsampleLag(const TimeWindow& window);
/// The input frames of the previous call a strided ConvTranspose `window` (as written) needs:
/// floor((S + h) / s), h = UpsampleDelay - p the frames held beyond its lag (floor(S / s) when aligned).
int64_t UpsampleContext(const TimeWindow& window);
/// The full frames its last input frame writes beyond its own s: S + 1 - s (<= 0 when the windows do not
/// overlap).
int64_t UpsampleTail(const TimeWindow& window);

/// How `window` (read by ReadTimeWindow; `extra` its output_padding on time) lines up; kNone unless it is a
/// ConvTranspose with a stride over time.
UpsampleFit FitOfUpsampling(const TimeWindow& window, int64_t extra);

/// The `pads` of ConvTranspose `node` (input of rank `rank`) with its crop on time (`axis`) set to what a
/// context of UpsampleContext frames needs: c * s - h before, the tail plus h plus `output_padding` after
/// (h = UpsampleDelay - p; written in full where the attribute is absent); nullopt when they cannot be read.
std::optional<std::vector<int64_t>> UpsamplePads(const onnx::NodeProto& node, const TimeWindow& window, int64_t axis,
                                                 int rank);

/// The time rule of a strided ConvTranspose `window` over `x`: an aligned one without overlap passes the
/// frames through; over `x.context` carried frames, one cropped as UpsamplePads crops it (for some held h,
/// 0 <= h < s) gives the chunk's own frames; nullopt for the others (WindowTime then says why they break).
std::optional<TimeFact> UpsampleTime(const NodeTime& n, const TimeFact& x, const TimeWindow& window);

/// Why a strided ConvTranspose that is not carried breaks chunked runs: "" for a ConvTranspose at stride
/// 1 or an aligned one (carried by a rewrite), else the reason appended to the window's text (for one that
/// lags: how late, and that `rewrite --lookahead` carries it).
std::string UpsampleProblem(const onnx::NodeProto& node, const TimeWindow& window, int64_t axis);

}  // namespace rnnstate
