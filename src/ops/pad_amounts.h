#pragma once
/// \file
/// A Pad's amounts, read one way for every analysis that asks what a Pad does to an axis (the causal
/// windows, the time rule of data movement, the frames' positions): `pads` as the attribute (`paddings` in
/// opset 1) or input 1 (opset 11 on), folded from the chains of constant nodes exporters write for one
/// constant (ops/int_fold: PyTorch 1.13's F.pad), over the axes input 3 lists (opset 18 on; the table's
/// axes operand) or every axis in order.
///
///   Pad(x [B, C, T], pads = [0, 0, 2, 0, 0, 0])            on axis 2: {2, 0}; on axis 1: {0, 0}
///   Pad(x [B, C, T], pads = [2, 0], axes = [-1])  (18)     on axis 2: {2, 0}; on axis 1: {0, 0} (not listed)
///   Pad(x [B, C, T], pads = [0, 0, -1, 0, 0, 0])           on axis 2: {-1, 0}: a crop (Crops())
///   Pad(x, pads = Add(Shape(x), ...))                      nullopt: no constant decides the amounts
///
/// The mode is part of the answer (`constant`, `edge`, `reflect`, `wrap`, or another word): what a Pad
/// adds depends on it, its lengths do not. What it pads with in `constant` mode (input 2) is time/pad_fill's.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "graph/model_index.h"

namespace rnnstate {

/// How a Pad fills what it adds (its `mode` attribute).
enum class PadMode {
  kConstant,  ///< a constant value (input 2, attribute `value` before opset 11; zeros by default)
  kEdge,      ///< the axis's first or last element repeated
  kReflect,   ///< the elements next to the edge, mirrored (the edge itself not repeated)
  kWrap,      ///< the other end's elements (opset 19)
  kOther,     ///< a mode onnx does not define
};

/// What a Pad does to one axis: elements added before its first and after its last; a negative amount cuts
/// that many instead.
struct AxisPadding {
  int64_t begin = 0;
  int64_t end = 0;
  PadMode mode = PadMode::kConstant;

  /// The axis is left as it is (nothing added, nothing cut, whatever the mode).
  bool None() const { return begin == 0 && end == 0; }
  /// Elements are cut at one end at least.
  bool Crops() const { return begin < 0 || end < 0; }
};

/// A Pad's amounts as the node gives them, with the axes they pad.
struct PadAmounts {
  std::vector<int64_t> pads;  ///< every begin, then every end, one of each per entry of `axes`
  std::vector<int64_t> axes;  ///< the axes padded, non-negative, in the order of `pads`
  PadMode mode = PadMode::kConstant;

  /// Where axis `axis`'s begin and end are in `pads`; nullopt when the axis is not listed.
  std::optional<std::pair<size_t, size_t>> PositionsOf(int64_t axis) const;
  /// What the Pad does to axis `axis` ({0, 0} when it is not listed).
  AxisPadding On(int64_t axis) const;
};

/// The amounts of `pad` (seen from the graph at `path`) over an input of `rank` axes (-1 when unknown).
/// nullopt when they cannot be read: amounts or listed axes no constant decides, an `axes` input before
/// opset 18 (the opset defines none), a negative axis while the rank is unknown, an axis out of range or
/// listed twice, or a list whose length is not twice the axes' count (the rank's, when none are listed).
std::optional<PadAmounts> PadAmountsOf(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& pad,
                                       int rank);

/// What `pad` does to axis `axis` of an input of `rank` axes: PadAmountsOf's answer on that axis; nullopt
/// when PadAmountsOf has none.
std::optional<AxisPadding> PadAmountsOn(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& pad,
                                        int64_t axis, int rank);

}  // namespace rnnstate
