#include "time/pad_fill.h"

#include "graph/proto_access.h"
#include "values/constant_value.h"

namespace rnnstate {

std::optional<std::string> PadFillOf(const ModelIndex& index, const onnx::NodeProto& pad) {
  const std::string mode = StringAttribute(pad, "mode", "constant");
  if (index.onnx_opset() < kPadAmountsInputOpset) {
    const onnx::AttributeProto* value = FindAttribute(pad, "value");
    // Below opset 11 the amounts are an attribute: only zeros, which need no computed amounts, are carried.
    if (mode == "constant" && (value == nullptr || value->f() == 0.0f)) return std::string();
    return std::nullopt;
  }
  if (mode == "constant") {
    if (pad.input_size() <= 2 || pad.input(2).empty()) return std::string();
    const std::optional<double> value = ConstantNumber(index, GraphPath{}, pad.input(2));
    if (!value) return std::nullopt;
    if (*value == 0.0) return std::string();
  } else if (mode != "edge" && mode != "reflect") {
    return std::nullopt;
  }
  // The amounts the rewrite computes are for every axis in order: a Pad that lists its axes is left alone.
  if (pad.input_size() > 3 && !pad.input(3).empty()) return std::nullopt;
  return mode;
}

int64_t FirstChunkMin(const std::string& fill, int64_t frames, int64_t multiple) {
  return fill == "reflect" ? (frames + 1) * multiple : 0;
}

}  // namespace rnnstate
