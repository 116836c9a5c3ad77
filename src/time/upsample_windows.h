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
/// whose windows do not overlap (S < s: c = 0) streams as it is. A ConvTranspose that crops frames before
/// time (PyTorch's symmetric `padding`) shifts its output against its input: chunked runs would emit a
/// frame only after the next chunk, so it is not carried (the verdict says why). Pure analysis.

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
  kNone,         ///< not aligned (crops before time, crops another amount, or not a strided ConvTranspose)
  kInPlace,      ///< its own pads crop the tail: s output frames per input frame as written
  kCutBySlice,   ///< uncropped: aligned when its one reader is a Slice dropping the tail
};

/// The `output_padding` of ConvTranspose `node` on input axis `axis` (>= 2); nullopt when its
/// `output_shape` fixes the length (no chunk has it).
std::optional<int64_t> OutputPaddingOnTime(const onnx::NodeProto& node, int64_t axis);

/// The input frames of the previous call a strided ConvTranspose `window` needs: floor(S / s).
int64_t UpsampleContext(const TimeWindow& window);
/// The full frames its last input frame writes beyond its own s: S + 1 - s (<= 0 when the windows do not
/// overlap).
int64_t UpsampleTail(const TimeWindow& window);

/// How `window` (read by ReadTimeWindow; `extra` its output_padding on time) lines up; kNone unless it is a
/// ConvTranspose with a stride over time.
UpsampleFit FitOfUpsampling(const TimeWindow& window, int64_t extra);

/// The `pads` of ConvTranspose `node` (input of rank `rank`) with its crop on time (`axis`) set to what a
/// context of UpsampleContext frames needs: c * s before, the tail plus `output_padding` after (written in
/// full where the attribute is absent); nullopt when they cannot be read.
std::optional<std::vector<int64_t>> UpsamplePads(const onnx::NodeProto& node, const TimeWindow& window, int64_t axis,
                                                 int rank);

/// The time rule of a strided ConvTranspose `window` over `x`: an aligned one without overlap passes the
/// frames through; over `x.context` carried frames, one cropped as UpsamplePads crops it gives the chunk's
/// own frames; nullopt for the others (WindowTime then says why they break).
std::optional<TimeFact> UpsampleTime(const NodeTime& n, const TimeFact& x, const TimeWindow& window);

/// Why a strided ConvTranspose that is not carried breaks chunked runs: "" for a ConvTranspose at stride
/// 1 or an aligned one (carried by a rewrite), else the reason appended to the window's text.
std::string UpsampleProblem(const onnx::NodeProto& node, const TimeWindow& window, int64_t axis);

}  // namespace rnnstate
