#pragma once
/// \file
/// How a `Pad` in front of a causal window fills the frames before time, when a context state can
/// reproduce it exactly (issue 39): zeros (the context's default is zeros, as the padding was), or a value
/// c other than zero, or `edge` / `reflect`, whose padding depends on the first call's own frames. For those
/// the context's default is empty (no frames on time) and the rewrite lets the Pad pad the concatenation of
/// context and chunk by the frames the context lacks, in its own mode:
///
///   before: x ──Pad(reflect, time: 2 before)──> Conv(k=3)
///   after:  Concat(ctx_in [.., 0 or 2 frames], x) ──Pad(reflect, time: 2 - frames of ctx_in)──> Conv(k=3)
///                                                 └──Slice(last 2 frames)──> ctx_out
///
/// The first call pads as the original does (its context empty), every later call not at all (its context
/// holds the 2 frames before the chunk). `reflect` reflects frames 1..p of the first call: it must hold at
/// least p + 1 frames (ONNX Runtime refuses less, as it does for the original). Pure analysis.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <string>

#include "graph/model_index.h"

namespace rnnstate {

/// The opset from which Pad takes its `pads` as input 1 (an attribute before): a rewrite can compute them.
inline constexpr int64_t kPadAmountsInputOpset = 11;

/// How main-graph Pad `pad` fills: "" for zeros; "constant" (another value), "edge" or "reflect" where the
/// rewrite can compute its amounts (ai.onnx opset 11 or newer, amounts for every axis: no `axes` input);
/// nullopt when no context reproduces it (another mode, a value that cannot be read, an older opset).
std::optional<std::string> PadFillOf(const ModelIndex& index, const onnx::NodeProto& pad);

/// The least frames the first call must hold, at the time inputs' rate, for a context of `frames` frames
/// filled in mode `fill` at a point where one frame stands for `multiple` input frames: (frames + 1) *
/// multiple for "reflect", 0 otherwise (any length).
int64_t FirstChunkMin(const std::string& fill, int64_t frames, int64_t multiple);

}  // namespace rnnstate
