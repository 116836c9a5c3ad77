#include "ops/pad_amounts.h"

#include <algorithm>
#include <string>

#include "graph/proto_access.h"
#include "ops/int_fold.h"
#include "ops/op_semantics.h"

namespace rnnstate {

namespace {

/// The opset from which Pad takes the axes its amounts pad as input 3.
constexpr int64_t kPadAxesInputOpset = 18;

PadMode ModeOf(const onnx::NodeProto& pad) {
  const std::string mode = StringAttribute(pad, "mode", "constant");
  if (mode == "constant") return PadMode::kConstant;
  if (mode == "edge") return PadMode::kEdge;
  if (mode == "reflect") return PadMode::kReflect;
  if (mode == "wrap") return PadMode::kWrap;
  return PadMode::kOther;
}

/// The integers of input `slot` of `node` when a constant decides them: shape_eval's constants, else a
/// chain of constant nodes folded (PyTorch computes F.pad's amounts with one).
std::optional<std::vector<int64_t>> FoldedInput(const ModelIndex& index, const GraphPath& path,
                                                const onnx::NodeProto& node, int slot) {
  if (slot >= node.input_size() || node.input(slot).empty()) return std::nullopt;
  if (std::optional<std::vector<int64_t>> ints = IntsOperand(index, path, node, "", slot)) return ints;
  if (std::optional<IntTensor> folded = FoldInts(index, path, node.input(slot))) return std::move(folded->values);
  return std::nullopt;
}

/// The amounts as written: the attribute (`paddings` in opset 1, `pads` from 2 to 10), else input 1.
std::optional<std::vector<int64_t>> AmountsOf(const ModelIndex& index, const GraphPath& path,
                                              const onnx::NodeProto& pad) {
  for (const char* attribute : {"pads", "paddings"}) {
    if (std::optional<std::vector<int64_t>> ints = IntsOperand(index, path, pad, attribute, -1)) return ints;
  }
  return FoldedInput(index, path, pad, 1);
}

/// The axes the amounts pad, non-negative and each once: those input 3 lists (read where the operator
/// table says, else folded), or every axis of `rank` (of `count` pairs of amounts when the rank is unknown).
std::optional<std::vector<int64_t>> PaddedAxes(const ModelIndex& index, const GraphPath& path,
                                               const onnx::NodeProto& pad, int rank, size_t count) {
  std::vector<int64_t> axes;
  if (pad.input_size() <= 3 || pad.input(3).empty()) {
    for (int64_t a = 0; a < (rank >= 0 ? rank : static_cast<int64_t>(count)); ++a) axes.push_back(a);
    return axes;
  }
  const int64_t opset = index.onnx_opset();
  if (opset != 0 && opset < kPadAxesInputOpset) return std::nullopt;  // an input the opset does not define
  std::optional<std::vector<int64_t>> given = AxesOperand(index, path, pad);
  if (!given) given = FoldedInput(index, path, pad, 3);
  if (!given) return std::nullopt;
  for (int64_t a : *given) {
    // A negative axis while the rank is unknown names no axis yet: unknown.
    const std::optional<int64_t> axis = NormalizeAxis(a, rank);
    if (!axis || std::find(axes.begin(), axes.end(), *axis) != axes.end()) return std::nullopt;
    axes.push_back(*axis);
  }
  return axes;
}

}  // namespace

std::optional<std::pair<size_t, size_t>> PadAmounts::PositionsOf(int64_t axis) const {
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] == axis) return std::make_pair(i, i + axes.size());
  }
  return std::nullopt;
}

AxisPadding PadAmounts::On(int64_t axis) const {
  const std::optional<std::pair<size_t, size_t>> at = PositionsOf(axis);
  if (!at) return AxisPadding{0, 0, mode};
  return AxisPadding{pads[at->first], pads[at->second], mode};
}

std::optional<PadAmounts> PadAmountsOf(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& pad,
                                       int rank) {
  std::optional<std::vector<int64_t>> pads = AmountsOf(index, path, pad);
  if (!pads || pads->size() % 2 != 0) return std::nullopt;
  std::optional<std::vector<int64_t>> axes = PaddedAxes(index, path, pad, rank, pads->size() / 2);
  if (!axes || pads->size() != 2 * axes->size()) return std::nullopt;
  return PadAmounts{std::move(*pads), std::move(*axes), ModeOf(pad)};
}

std::optional<AxisPadding> PadAmountsOn(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& pad,
                                        int64_t axis, int rank) {
  const std::optional<PadAmounts> amounts = PadAmountsOf(index, path, pad, rank);
  if (!amounts) return std::nullopt;
  return amounts->On(axis);
}

}  // namespace rnnstate
