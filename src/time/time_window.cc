#include "time/time_window.h"

#include <vector>

#include "graph/proto_access.h"
#include "values/constant_value.h"
#include "values/shape_eval.h"

namespace rnnstate {

namespace {

/// Element `k` of the INTS attribute `name`, or `fallback` when the attribute is absent or shorter.
int64_t IntsAt(const onnx::NodeProto& node, const char* name, size_t k, int64_t fallback) {
  const onnx::AttributeProto* a = FindAttribute(node, name);
  if (a == nullptr || static_cast<size_t>(a->ints_size()) <= k) return fallback;
  return a->ints(static_cast<int>(k));
}

/// A ConvTranspose at stride 1 along axis `s` is a Conv with the kernel reversed: output frame t reads the
/// input frames t - (S - p_b) ... t + (S - p_e), S its span and p its `pads` (which crop its output). So
/// it is read as that window (`flipped`), padded S - p before and after, where neither is negative and no
/// `output_padding` or `output_shape` adds frames.
void ReadAsWindow(const onnx::NodeProto& node, size_t s, TimeWindow& window) {
  if (window.stride != 1 || IntsAt(node, "output_padding", s, 0) != 0 || FindAttribute(node, "output_shape")) return;
  const int64_t before = window.Span() - window.pad_before, after = window.Span() - window.pad_after;
  if (before < 0 || after < 0) return;
  window.transpose = false;
  window.flipped = true;
  window.pad_before = before;
  window.pad_after = after;
}

}  // namespace

std::string TimeWindow::Text() const {
  return std::string(transpose ? "spreads each frame over a window of " : "slides a window of ") +
         std::to_string(kernel) + " frames over time (" +
         (flipped ? "a ConvTranspose at stride 1 read as the window it equals; " : "") + "dilation " +
         std::to_string(dilation) + ", stride " + std::to_string(stride) + "; padding " + std::to_string(pad_before) +
         " before, " + std::to_string(pad_after) + " after)";
}

std::optional<TimeWindow> ReadTimeWindow(const ModelIndex& index, const GraphPath& graph, const onnx::NodeProto& node,
                                         int64_t axis, int rank) {
  if (axis < 2) return std::nullopt;
  const size_t s = static_cast<size_t>(axis - 2);
  TimeWindow window;
  window.transpose = node.op_type() == "ConvTranspose";
  window.kernel = IntsAt(node, "kernel_shape", s, -1);
  int spatial = rank >= 2 ? rank - 2 : -1;
  if (const onnx::AttributeProto* k = FindAttribute(node, "kernel_shape")) spatial = k->ints_size();
  if (window.kernel < 0 && node.input_size() > 1 && (node.op_type() == "Conv" || window.transpose)) {
    // The weight [M, C/group, k1, k2, ...] (ConvTranspose: [C, M/group, k1, ...]) gives the kernel.
    std::optional<std::vector<int64_t>> dims = ConstantDims(index, graph, node.input(1));
    if (!dims) {
      if (const std::optional<SymShape> shape = ShapeOf(index, graph, node.input(1))) {
        dims.emplace();
        for (const SymDim& d : *shape) dims->push_back(d.fixed() ? d.value : -1);
      }
    }
    if (dims && dims->size() > s + 2) window.kernel = (*dims)[s + 2];
    if (dims && dims->size() >= 2) spatial = static_cast<int>(dims->size()) - 2;
  }
  if (window.kernel < 1 || spatial <= static_cast<int>(s)) return std::nullopt;
  window.stride = IntsAt(node, "strides", s, 1);
  window.dilation = IntsAt(node, "dilations", s, 1);
  if (window.stride < 1 || window.dilation < 1) return std::nullopt;
  const onnx::AttributeProto* auto_pad = FindAttribute(node, "auto_pad");
  const std::string mode = auto_pad == nullptr ? "NOTSET" : auto_pad->s();
  if (mode == "SAME_UPPER" || mode == "SAME_LOWER") {
    // With stride 1 the total padding is the span; with a stride it depends on the length (onnx's spec),
    // which no chunk has: the span is what a chunk lacks either way.
    const int64_t total = window.Span();
    const int64_t small = total / 2, large = total - small;
    window.pad_before = mode == "SAME_UPPER" ? small : large;
    window.pad_after = mode == "SAME_UPPER" ? large : small;
  } else if (mode == "NOTSET" || mode.empty()) {
    window.pad_before = IntsAt(node, "pads", s, 0);
    window.pad_after = IntsAt(node, "pads", s + static_cast<size_t>(spatial), 0);
    if (window.transpose) ReadAsWindow(node, s, window);
  }
  return window;
}

}  // namespace rnnstate
