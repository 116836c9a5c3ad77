#include "time/causal_windows.h"

#include "graph/constant_value.h"
#include "graph/int_fold.h"
#include "graph/op_semantics.h"
#include "graph/proto_access.h"
#include "time/time_rules.h"

namespace rnnstate {

namespace {

/// The rank of main-graph value `name`, declared or inferred; -1 when unknown.
int RankOf(const ModelIndex& index, const std::string& name) {
  const onnx::TypeProto* type = index.TypeOf(GraphPath{}, name);
  if (type == nullptr || !type->has_tensor_type() || !type->tensor_type().has_shape()) return -1;
  return type->tensor_type().shape().dim_size();
}

/// The integers of `node`'s attribute `attribute` or constant input `slot` (PyTorch computes `F.pad`'s
/// amounts with a chain of constant nodes: folded).
std::optional<std::vector<int64_t>> ConstantInts(const ModelIndex& index, const onnx::NodeProto& node,
                                                 const char* attribute, int slot) {
  if (std::optional<std::vector<int64_t>> ints = IntsOperand(index, GraphPath{}, node, attribute, slot)) return ints;
  if (node.input_size() > slot && !node.input(slot).empty()) {
    if (std::optional<IntTensor> folded = FoldInts(index, GraphPath{}, node.input(slot))) return folded->values;
  }
  return std::nullopt;
}

/// Where a Pad's `pads` hold the padding before and after axis `axis` of its input (rank `rank`): the
/// positions in the list, or nullopt when the list or its axes cannot be read or do not fit.
std::optional<std::pair<size_t, size_t>> PadPositions(const ModelIndex& index, const onnx::NodeProto& pad,
                                                      const std::vector<int64_t>& pads, int64_t axis, int rank) {
  std::vector<int64_t> axes;
  if (pad.input_size() > 3 && !pad.input(3).empty()) {
    std::optional<std::vector<int64_t>> given = ConstantIntegers(index, GraphPath{}, pad.input(3));
    if (!given || rank < 0) return std::nullopt;
    for (int64_t a : *given) axes.push_back(a < 0 ? a + rank : a);
  } else {
    for (int64_t a = 0; a < static_cast<int64_t>(pads.size() / 2); ++a) axes.push_back(a);
  }
  if (pads.size() != 2 * axes.size()) return std::nullopt;
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] == axis) return std::make_pair(i, i + axes.size());
  }
  return std::make_pair(pads.size(), pads.size());  // the axis is not padded
}

/// The padding of a Pad node on axis `axis`: {before, after}; nullopt when it is not a constant padding
/// with zeros or cannot be read.
std::optional<std::pair<int64_t, int64_t>> ZeroPadding(const ModelIndex& index, const onnx::NodeProto& pad,
                                                       int64_t axis, int rank) {
  if (StringAttribute(pad, "mode", "constant") != "constant") return std::nullopt;
  if (index.onnx_opset() < 11) {
    if (const onnx::AttributeProto* value = FindAttribute(pad, "value"); value != nullptr && value->f() != 0.0f) {
      return std::nullopt;
    }
  } else if (pad.input_size() > 2 && !pad.input(2).empty()) {
    const std::optional<double> value = ConstantNumber(index, GraphPath{}, pad.input(2));
    if (!value || *value != 0.0) return std::nullopt;
  }
  const std::optional<std::vector<int64_t>> pads = ConstantInts(index, pad, "pads", 1);
  if (!pads) return std::nullopt;
  const auto at = PadPositions(index, pad, *pads, axis, rank);
  if (!at) return std::nullopt;
  if (at->first >= pads->size()) return std::make_pair(int64_t{0}, int64_t{0});
  return std::make_pair((*pads)[at->first], (*pads)[at->second]);
}

/// True when the window's own padding is zeros that count as values: a Conv's, LpPool's (|0|^p adds
/// nothing either way) and an AveragePool's that counts its padding. MaxPool pads with minus infinity and
/// an AveragePool that does not count padding divides by fewer elements: zeros in front differ.
bool PadsWithCountedZeros(const onnx::NodeProto& window) {
  const std::string& op = window.op_type();
  if (op == "Conv" || op == "LpPool") return true;
  if (op == "AveragePool") return IntAttribute(window, "count_include_pad", 0) != 0;
  return false;
}

/// True for the operators whose window a context can carry: Conv and the pools (ConvTranspose spreads
/// each frame forward instead; a MaxPool's Indices would index the concatenation).
bool CarriableWindowOp(const onnx::NodeProto& node) {
  if (!IsOnnxOp(node, {"Conv", "AveragePool", "MaxPool", "LpPool"})) return false;
  return !(node.op_type() == "MaxPool" && node.output_size() > 1 && !node.output(1).empty());
}

/// The causal window at main-graph node `n`, or nullopt.
std::optional<CausalWindow> WindowAt(const ModelIndex& index, const TimeFlow& flow, int n) {
  const onnx::GraphProto& main = index.model().graph();
  const onnx::NodeProto& node = main.node(n);
  if (!CarriableWindowOp(node) || node.input_size() < 1) return std::nullopt;
  const TimeFact& x = flow.Of(GraphPath{}, node.input(0));
  if (!x.frames() || x.folded || x.sequence || x.context > 0 || x.axis < 2) return std::nullopt;
  for (int k = 1; k < node.input_size(); ++k) {
    if (!flow.Of(GraphPath{}, node.input(k)).steady()) return std::nullopt;
  }
  const int rank = RankOf(index, node.input(0));
  const std::optional<TimeWindow> window = ReadTimeWindow(index, GraphPath{}, node, x.axis, rank);
  if (!window || window->transpose || window->pad_after != 0 || window->Span() == 0) {
    return std::nullopt;
  }
  CausalWindow found;
  found.window = n;
  found.axis = x.axis;
  found.frames = window->Span();
  found.shape = *window;
  found.what = NodeLabel(index, GraphPath{}, n);
  if (window->pad_before != 0) {
    const std::string auto_pad = StringAttribute(node, "auto_pad", "NOTSET");
    if (window->pad_before != window->Span() || (auto_pad != "NOTSET" && !auto_pad.empty()) ||
        !PadsWithCountedZeros(node)) {
      return std::nullopt;
    }
    found.value = node.input(0);
    return found;
  }
  // No padding of its own: a Pad in front, read by this window alone, pads the span with zeros.
  const GraphIndex& graph = index.graph(GraphPath{});
  const Producer producer = graph.ProducerOf(node.input(0));
  if (producer.kind != Producer::Kind::kNode || producer.slot != 0) return std::nullopt;
  const onnx::NodeProto& pad = main.node(producer.index);
  if (!IsOnnxOp(pad, {"Pad"}) || graph.outputs.count(node.input(0)) || graph.ConsumersOf(node.input(0)).size() != 1) {
    return std::nullopt;
  }
  const TimeFact& padded = flow.Of(GraphPath{}, pad.input(0));
  if (!padded.frames() || padded.axis != x.axis || padded.context > 0) return std::nullopt;
  const std::optional<std::pair<int64_t, int64_t>> padding = ZeroPadding(index, pad, x.axis, rank);
  if (!padding || padding->first != window->Span() || padding->second != 0) return std::nullopt;
  found.pad = producer.index;
  found.value = pad.input(0);
  return found;
}

}  // namespace

std::vector<CausalWindow> FindCausalWindows(const ModelIndex& index, const TimeFlow& flow) {
  std::vector<CausalWindow> windows;
  const onnx::GraphProto& main = index.model().graph();
  for (int n = 0; n < main.node_size(); ++n) {
    if (std::optional<CausalWindow> window = WindowAt(index, flow, n)) windows.push_back(std::move(*window));
  }
  return windows;
}

StreamedNodes StreamedNodesOf(const std::vector<CausalWindow>& windows) {
  StreamedNodes nodes;
  for (const CausalWindow& window : windows) {
    nodes[window.window] = window.shape.stride;
    if (window.pad >= 0) nodes[window.pad] = 1;
  }
  return nodes;
}

std::optional<std::vector<int64_t>> PadsWithoutTimeBefore(const ModelIndex& index, const onnx::NodeProto& node,
                                                          int64_t axis, int rank) {
  if (IsOnnxOp(node, {"Pad"})) {
    std::optional<std::vector<int64_t>> pads = ConstantInts(index, node, "pads", 1);
    if (!pads) return std::nullopt;
    const auto at = PadPositions(index, node, *pads, axis, rank);
    if (!at) return std::nullopt;
    if (at->first < pads->size()) (*pads)[at->first] = 0;
    return pads;
  }
  const onnx::AttributeProto* attribute = FindAttribute(node, "pads");
  if (attribute == nullptr || axis < 2 || attribute->ints_size() <= axis - 2) return std::nullopt;
  std::vector<int64_t> pads(attribute->ints().begin(), attribute->ints().end());
  pads[static_cast<size_t>(axis - 2)] = 0;
  return pads;
}

}  // namespace rnnstate
