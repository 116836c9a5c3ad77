#include "time/causal_windows.h"

#include <algorithm>
#include <limits>

#include "graph/proto_access.h"
#include "ops/int_fold.h"
#include "ops/op_semantics.h"
#include "ops/pad_amounts.h"
#include "ops/slice_bounds.h"
#include "time/pad_fill.h"
#include "time/time_rules.h"
#include "time/upsample_windows.h"
#include "values/constant_value.h"
#include "values/shape_eval.h"

namespace rnnstate {

namespace {

/// The integers of `node`'s attribute `attribute` or constant input `slot` (a Slice's bounds; PyTorch
/// computes some with a chain of constant nodes: folded).
std::optional<std::vector<int64_t>> ConstantInts(const ModelIndex& index, const onnx::NodeProto& node,
                                                 const char* attribute, int slot) {
  if (std::optional<std::vector<int64_t>> ints = IntsOperand(index, GraphPath{}, node, attribute, slot)) return ints;
  if (node.input_size() > slot && !node.input(slot).empty()) {
    if (std::optional<IntTensor> folded = FoldInts(index, GraphPath{}, node.input(slot))) return folded->values;
  }
  return std::nullopt;
}

/// The position of axis `axis` among the bounds of `slice` (input `rank`), when its starts, ends, axes
/// and steps are constants and its step there is 1; nullopt otherwise.
std::optional<size_t> SliceEntry(const ModelIndex& index, const onnx::NodeProto& slice, int64_t axis, int rank) {
  const std::optional<SliceBounds> bounds = ConstantSliceBounds(index, GraphPath{}, slice, BoundReading::kFolded);
  if (!bounds || bounds->starts.size() != bounds->ends.size()) return std::nullopt;
  std::vector<int64_t> axes = bounds->axes;
  if (axes.empty()) {
    for (size_t i = 0; i < bounds->starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (axes.size() != bounds->starts.size()) return std::nullopt;
  for (size_t i = 0; i < axes.size(); ++i) {
    if ((axes[i] < 0 && rank > 0 ? axes[i] + rank : axes[i]) != axis) continue;
    const std::vector<int64_t>& steps = bounds->steps;
    if (!steps.empty() && (steps.size() != axes.size() || steps[i] != 1)) return std::nullopt;
    return i;
  }
  return std::nullopt;
}

/// True when the window's own padding is zeros that count as values: a Conv's, LpPool's (|0|^p adds
/// nothing either way) and an AveragePool's that counts its padding. MaxPool pads with minus infinity and
/// an AveragePool that does not count padding divides by fewer elements: zeros in front differ.
bool PadsWithCountedZeros(const onnx::NodeProto& window) {
  const std::string& op = window.op_type();
  if (op == "Conv" || op == "ConvTranspose" || op == "LpPool") return true;
  if (op == "AveragePool") return IntAttribute(window, "count_include_pad", 0) != 0;
  return false;
}

/// True when the `auto_pad` SAME_UPPER / SAME_LOWER of window `node` (no ConvTranspose) pads a fixed amount
/// on every spatial axis — its span there, at stride 1 everywhere — so explicit `pads` can replace it (with
/// a stride the amount depends on the length).
bool SamePaddingFixed(const onnx::NodeProto& node) {
  if (node.op_type() == "ConvTranspose") return false;
  const onnx::AttributeProto* strides = FindAttribute(node, "strides");
  return strides == nullptr ||
         std::all_of(strides->ints().begin(), strides->ints().end(), [](int64_t s) { return s == 1; });
}

/// True for the operators whose window a context can carry: Conv, ConvTranspose where it is one (at stride
/// 1: ReadTimeWindow says) and the pools (a MaxPool's Indices would index the concatenation).
bool CarriableWindowOp(const onnx::NodeProto& node) {
  if (!IsOnnxOp(node, {"Conv", "ConvTranspose", "AveragePool", "MaxPool", "LpPool"})) return false;
  return !(node.op_type() == "MaxPool" && node.output_size() > 1 && !node.output(1).empty());
}

/// The node that alone reads main-graph value `name` (which is no graph output), or -1.
int OnlyReader(const GraphIndex& graph, const std::string& name) {
  if (graph.outputs.count(name)) return -1;
  const Consumers& uses = graph.ConsumersOf(name);
  return uses.size() == 1 ? uses.front().node : -1;
}

/// The Pad that pads the window's input `input` with `span` frames before time and none after, in a way a
/// context reproduces (time/pad_fill.h: its `fill` set), through Pads that leave time alone (PyTorch's
/// AvgPool1d adds one), each read by the next alone; -1 when none. A Pad of zeros that puts `l` frames
/// before and r > 0 after, l + r = `span` (F.pad(x, (l, r)) before a "same" window), is one too, with
/// `ahead` set to r (its lookahead).
int CausalPadBefore(const ModelIndex& index, const TimeFlow& flow, std::string input, int64_t axis, int64_t span,
                    int rank, std::string& fill, int64_t& ahead) {
  const GraphIndex& graph = index.graph(GraphPath{});
  const onnx::GraphProto& main = index.model().graph();
  for (;;) {
    const Producer producer = graph.ProducerOf(input);
    if (producer.kind != Producer::Kind::kNode || producer.slot != 0) return -1;
    const onnx::NodeProto& pad = main.node(producer.index);
    if (!IsOnnxOp(pad, {"Pad"}) || OnlyReader(graph, input) < 0) return -1;
    const TimeFact& padded = flow.Of(GraphPath{}, pad.input(0));
    if (!padded.frames() || padded.axis != axis || padded.context > 0) return -1;
    // The rank of the Pad's input (its output's, which onnx 1.12 does not infer for opset 18's listed axes).
    const int pad_rank = RankOf(index, GraphPath{}, pad.input(0));
    const std::optional<AxisPadding> padding =
        PadAmountsOn(index, GraphPath{}, pad, axis, pad_rank >= 0 ? pad_rank : rank);
    if (!padding) return -1;
    if (padding->None()) {  // in any mode: time left as it is
      input = pad.input(0);
      continue;
    }
    if (padding->Crops() || padding->begin + padding->end != span) return -1;
    const std::optional<std::string> mode = PadFillOf(index, pad);
    // Zeros after time: a lookahead (the flush's zeros reproduce them; no other fill would).
    if (!mode || (padding->end > 0 && !mode->empty())) return -1;
    fill = *mode;
    ahead = padding->end;
    return producer.index;
  }
}

/// The Slice that alone reads the window's output `output` and drops its last `frames` frames along time
/// (`axis`), keeping the rest: a causal convolution written as "pad both sides, cut the end"; -1 when none.
int TailCut(const ModelIndex& index, const std::string& output, int64_t axis, int64_t frames, int rank) {
  const int reader = OnlyReader(index.graph(GraphPath{}), output);
  if (reader < 0) return -1;
  const onnx::NodeProto& slice = index.model().graph().node(reader);
  if (!IsOnnxOp(slice, {"Slice"}) || slice.input(0) != output) return -1;
  const std::optional<size_t> at = SliceEntry(index, slice, axis, rank);
  if (!at) return -1;
  const auto starts = ConstantInts(index, slice, "starts", 1), ends = ConstantInts(index, slice, "ends", 2);
  return (*starts)[*at] == 0 && (*ends)[*at] == -frames ? reader : -1;
}

/// The strided ConvTranspose `node` (`found` filled in) as a carried window (time/upsample_windows.h): its
/// context is floor(S / s) input frames, its tail cropped by its own pads or cut by a Slice (or, lagging,
/// UpsampleContext frames and a lookahead of UpsampleLag); nullopt when it is neither or needs no context.
std::optional<CausalWindow> UpsampleAt(const ModelIndex& index, const onnx::NodeProto& node, CausalWindow found,
                                       int rank) {
  const std::optional<int64_t> extra = OutputPaddingOnTime(node, found.axis);
  if (!extra || !PadsWithCountedZeros(node)) return std::nullopt;
  const UpsampleFit fit = FitOfUpsampling(found.shape, *extra);
  found.frames = UpsampleContext(found.shape);
  if (fit == UpsampleFit::kCutBySlice) {
    found.cut = TailCut(index, node.output(0), found.axis, UpsampleTail(found.shape), rank);
  }
  // One that lags (PyTorch's symmetric padding) is carried with a delay, as a window that looks ahead.
  if (fit == UpsampleFit::kLags) found.lookahead = UpsampleLag(found.shape);
  const bool aligned =
      fit == UpsampleFit::kInPlace || fit == UpsampleFit::kLags || (fit == UpsampleFit::kCutBySlice && found.cut >= 0);
  return aligned && found.frames > 0 ? std::optional<CausalWindow>(std::move(found)) : std::nullopt;
}

/// The causal window at main-graph node `n`, or nullopt.
std::optional<CausalWindow> WindowAt(const ModelIndex& index, const TimeFlow& flow, int n) {
  const onnx::NodeProto& node = index.model().graph().node(n);
  if (!CarriableWindowOp(node) || node.input_size() < 1 || node.output_size() < 1) return std::nullopt;
  const TimeFact& x = flow.Of(GraphPath{}, node.input(0));
  if (!x.frames() || x.folded || x.sequence || x.context > 0 || x.axis < 2) return std::nullopt;
  for (int k = 1; k < node.input_size(); ++k) {
    if (!flow.Of(GraphPath{}, node.input(k)).steady()) return std::nullopt;
  }
  const int rank = RankOf(index, GraphPath{}, node.input(0));
  const std::optional<TimeWindow> window = ReadTimeWindow(index, GraphPath{}, node, x.axis, rank);
  if (!window || window->Span() == 0) return std::nullopt;
  CausalWindow found;
  found.window = n;
  found.axis = x.axis;
  found.frames = window->Span();
  found.shape = *window;
  found.what = NodeLabel(index, GraphPath{}, n);
  found.value = node.input(0);
  if (window->transpose) return UpsampleAt(index, node, std::move(found), rank);
  const std::string auto_pad = StringAttribute(node, "auto_pad", "NOTSET");
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  const bool own_zeros =
      (auto_pad == "NOTSET" || auto_pad.empty() || (same && SamePaddingFixed(node))) && PadsWithCountedZeros(node);
  if (window->pad_after > 0 && window->pad_before + window->pad_after == window->Span()) {
    // Looks ahead ("same" padding): carried with the delay it brings, at stride 1 (time_lookahead.h).
    if (window->stride != 1 || !own_zeros) return std::nullopt;
    found.lookahead = window->pad_after;
    return found;
  }
  if (window->pad_before != 0) {
    if (window->pad_before != window->Span() || !own_zeros) return std::nullopt;
    if (window->pad_after == 0) return found;
    // Padded after too, at stride 1: causal when a Slice cuts exactly those last frames again.
    if (window->stride != 1) return std::nullopt;
    found.cut = TailCut(index, node.output(0), x.axis, window->pad_after, rank);
    return found.cut >= 0 ? std::optional<CausalWindow>(found) : std::nullopt;
  }
  if (window->pad_after != 0) return std::nullopt;
  int64_t ahead = 0;
  found.pad = CausalPadBefore(index, flow, node.input(0), x.axis, window->Span(), rank, found.fill, ahead);
  // A Pad that looks ahead: carried with its delay at stride 1, as a window's own "same" padding.
  if (found.pad >= 0 && ahead > 0 && window->stride != 1) return std::nullopt;
  found.lookahead = ahead;
  if (found.pad < 0) {
    // No padding at all ("valid"): carried at stride 1 over frames chunks reproduce (a Pad on time breaks).
    found.fill.clear();
    found.valid = window->stride == 1 && x.exact() && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER";
    return found.valid ? std::optional<CausalWindow>(found) : std::nullopt;
  }
  found.value = index.model().graph().node(found.pad).input(0);
  return found;
}

/// CompletedShape, `depth` producers deep.
std::optional<SymShape> Completed(const ModelIndex& index, const std::string& name, int depth) {
  std::optional<SymShape> shape = ShapeOf(index, GraphPath{}, name);
  const bool whole = shape && std::all_of(shape->begin(), shape->end(), [](const SymDim& d) { return d.fixed(); });
  const ResolvedName at = index.Resolve(GraphPath{}, name);
  if (whole || depth > 32 || at.node == nullptr || !at.graph.empty() || at.node->input_size() == 0) return shape;
  const onnx::NodeProto& node = *at.node;
  const bool window = IsOnnxOp(node, {"Conv", "ConvTranspose", "AveragePool", "MaxPool", "LpPool"});
  if (!IsElementwiseUnary(node) && !IsOnnxOp(node, {"Pad"}) && !window) return shape;
  std::optional<SymShape> in = Completed(index, node.input(0), depth + 1);
  if (!in || (shape && shape->size() != in->size())) return shape;
  SymShape out = *in;
  const int rank = static_cast<int>(in->size());
  if (IsOnnxOp(node, {"Pad"})) {
    const std::optional<PadAmounts> amounts = PadAmountsOf(index, GraphPath{}, node, rank);
    if (!amounts) return shape;
    for (int a = 0; a < rank; ++a) {
      const AxisPadding padding = amounts->On(a);
      if (out[a].fixed()) out[a].value += padding.begin + padding.end;
    }
  } else if (window) {
    if (node.op_type() == "Conv" || node.op_type() == "ConvTranspose") {
      // Conv's weight is [M, C/group, ...]; ConvTranspose's [C, M/group, ...].
      const std::optional<std::vector<int64_t>> weights = ConstantDims(index, GraphPath{}, node.input(1));
      const bool conv = node.op_type() == "Conv";
      out[1] = weights && weights->size() > 1
                   ? SymDim{conv ? (*weights)[0] : (*weights)[1] * IntAttribute(node, "group", 1), ""}
                   : SymDim{};
    }
    for (int a = 2; a < rank; ++a) {
      const std::optional<TimeWindow> w = ReadTimeWindow(index, GraphPath{}, node, a, rank);
      if (!w || w->transpose) return shape;
      if (!out[a].fixed()) {
        out[a] = SymDim{};
        continue;
      }
      const int64_t padded = out[a].value + w->pad_before + w->pad_after - w->Span() - 1;
      out[a].value = padded < 0 ? -1 : padded / w->stride + 1;
    }
  }
  return MergeShapes(shape, out);
}

}  // namespace

std::optional<SymShape> CompletedShape(const ModelIndex& index, const std::string& name) {
  return Completed(index, name, 0);
}

std::vector<CausalWindow> FindCausalWindows(const ModelIndex& index, const TimeFlow& flow, bool lookahead) {
  std::vector<CausalWindow> windows;
  const onnx::GraphProto& main = index.model().graph();
  for (int n = 0; n < main.node_size(); ++n) {
    std::optional<CausalWindow> window = WindowAt(index, flow, n);
    if (window && (lookahead || window->lookahead == 0)) windows.push_back(std::move(*window));
  }
  return windows;
}

StreamedNodes StreamedNodesOf(const std::vector<CausalWindow>& windows) {
  StreamedNodes nodes;
  for (const CausalWindow& window : windows) {
    nodes[window.window] = window.shape.transpose ? 1 : window.shape.stride;  // an upsampling keeps the multiple
    if (window.pad >= 0) nodes[window.pad] = 1;
    if (window.cut >= 0) nodes[window.cut] = 1;
  }
  return nodes;
}

std::optional<std::vector<int64_t>> PadsWithoutTimeBefore(const ModelIndex& index, const onnx::NodeProto& node,
                                                          int64_t axis, int rank, bool and_after) {
  if (IsOnnxOp(node, {"Pad"})) {
    std::optional<PadAmounts> amounts = PadAmountsOf(index, GraphPath{}, node, rank);
    if (!amounts) return std::nullopt;
    if (const std::optional<std::pair<size_t, size_t>> at = amounts->PositionsOf(axis)) {
      amounts->pads[at->first] = 0;
      if (and_after) amounts->pads[at->second] = 0;
    }
    return std::move(amounts->pads);
  }
  const std::optional<TimeWindow> window = ReadTimeWindow(index, GraphPath{}, node, axis, rank);
  if (window && window->transpose) return UpsamplePads(node, *window, axis, rank);
  const onnx::AttributeProto* attribute = FindAttribute(node, "pads");
  const std::string auto_pad = StringAttribute(node, "auto_pad", "NOTSET");
  const bool same = (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") && SamePaddingFixed(node);
  if (!window || (attribute == nullptr && !window->flipped && !same)) return std::nullopt;
  std::vector<int64_t> pads;
  if (same && rank > 2) {
    // Written out as the auto_pad pads each spatial axis (the rewrite drops the auto_pad).
    pads.assign(2 * static_cast<size_t>(rank - 2), 0);
    for (int a = 2; a < rank; ++a) {
      const std::optional<TimeWindow> along = ReadTimeWindow(index, GraphPath{}, node, a, rank);
      if (!along) return std::nullopt;
      pads[static_cast<size_t>(a - 2)] = along->pad_before;
      pads[static_cast<size_t>(rank - 2 + a - 2)] = along->pad_after;
    }
  } else if (attribute != nullptr) {
    pads.assign(attribute->ints().begin(), attribute->ints().end());
  } else if (rank > 2) {
    pads.assign(2 * static_cast<size_t>(rank - 2), 0);  // a ConvTranspose that crops nothing
  }
  const size_t at = static_cast<size_t>(axis - 2);
  if (pads.size() <= at || pads.size() % 2 != 0) return std::nullopt;
  // A Conv pads its input; a ConvTranspose crops its output: cropping the whole span pads nothing.
  const int64_t none = window->flipped ? window->Span() : 0;
  pads[at] = none;
  if (and_after) pads[pads.size() / 2 + at] = none;
  return pads;
}

std::optional<std::vector<int64_t>> SliceEndsToTheEnd(const ModelIndex& index, const onnx::NodeProto& slice,
                                                      int64_t axis, int rank) {
  const std::optional<size_t> at = SliceEntry(index, slice, axis, rank);
  std::optional<std::vector<int64_t>> ends = ConstantInts(index, slice, "ends", 2);
  if (!at || !ends) return std::nullopt;
  (*ends)[*at] = std::numeric_limits<int64_t>::max();
  return ends;
}

}  // namespace rnnstate
