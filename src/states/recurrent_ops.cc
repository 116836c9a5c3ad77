#include "states/recurrent_ops.h"

#include "graph/model_index.h"

namespace rnnstate {

namespace {

using Kind = SpecDim::Kind;
constexpr SpecDim kDirections{Kind::kDirections, 1, ""};
SpecDim Hidden(int multiple) { return SpecDim{Kind::kHidden, multiple, ""}; }
SpecDim Free(std::string_view name) { return SpecDim{Kind::kFree, 1, name}; }

/// The ONNX operators share one signature: X, W, R, B, sequence_lens, initial_h[, initial_c, P] -> Y,
/// Y_h[, Y_c]; X is [seq, batch, input] (batch first with layout 1), W [D, gates*H, input], R
/// [D, gates*H, H], B [D, 2*gates*H], the states [D, batch, H] ([batch, D, H] with layout 1), P [D, 3H].
/// X, W, R, B, the initial states and P are of type T: float16, float or double (bfloat16 from opset 22;
/// accepted at any opset); sequence_lens is int32. `layout` exists from opset 14.
RecurrentOp OnnxOp(std::string_view op_type, int gates, bool cell) {
  RecurrentOp op;
  op.domain = "";
  op.op_type = op_type;
  op.gates = gates;
  op.input_names = {"X", "W", "R", "B", "sequence_lens", "initial_h"};
  std::vector<int> float_slots = {0, 1, 2, 3, 5};
  if (cell) {
    op.input_names.insert(op.input_names.end(), {"initial_c", "P"});
    float_slots.insert(float_slots.end(), {6, 7});
  }
  op.required_slots = {0, 1, 2};
  op.slot_types = {
      {float_slots,
       {onnx::TensorProto::FLOAT, onnx::TensorProto::DOUBLE, onnx::TensorProto::FLOAT16, onnx::TensorProto::BFLOAT16}},
      {{4}, {onnx::TensorProto::INT32}}};
  const SpecDim state_dims[] = {kDirections, Free("batch_size"), Hidden(1)};
  op.shapes = {{0, {Free("seq_length"), Free("batch_size"), Free("input_size")}, true},
               {1, {kDirections, Hidden(gates), Free("input_size")}},
               {2, {kDirections, Hidden(gates), Hidden(1)}},
               {3, {kDirections, Hidden(2 * gates)}},
               {5, {std::begin(state_dims), std::end(state_dims)}, true}};
  if (cell) {
    op.shapes.push_back({6, {std::begin(state_dims), std::end(state_dims)}, true});
    op.shapes.push_back({7, {kDirections, Hidden(3)}});
  }
  op.activations_per_direction = gates == 1 ? 1 : gates == 3 ? 2 : 3;
  op.directions = {"forward", "reverse", "bidirectional"};
  op.initial_c_slot = cell ? 6 : -1;
  op.y_c_slot = cell ? 2 : -1;
  op.hidden_from[0] = {2, 2, 1};
  op.hidden_from[1] = {1, 1, gates};
  op.has_layout = true;
  op.layout_since = 14;
  return op;
}

/// ONNX Runtime's dynamically quantized LSTM (what `quantize_dynamic` makes of an LSTM): LSTM's slots,
/// but W [D, input, 4H] and R [D, H, 4H] are int8/uint8 and transposed, followed by P, W_scale,
/// W_zero_point, R_scale, R_zero_point (12 inputs); always time-major. ONNX Runtime's schema types X, B,
/// the states, P and the scales float only.
RecurrentOp DynamicQuantizeLstm() {
  RecurrentOp op = OnnxOp("DynamicQuantizeLSTM", 4, true);
  op.domain = "com.microsoft";
  op.input_names.insert(op.input_names.end(), {"W_scale", "W_zero_point", "R_scale", "R_zero_point"});
  op.required_slots = {0, 1, 2, 8, 9, 10, 11};
  op.slot_types = {{{0, 3, 5, 6, 7, 8, 10}, {onnx::TensorProto::FLOAT}},
                   {{4}, {onnx::TensorProto::INT32}},
                   {{1, 2, 9, 11}, {onnx::TensorProto::INT8, onnx::TensorProto::UINT8}}};
  // W [D, input, 4H] and R [D, H, 4H]; the rest as LSTM's, time-major.
  op.shapes = {{0, {Free("seq_length"), Free("batch_size"), Free("input_size")}},
               {1, {kDirections, Free("input_size"), Hidden(4)}},
               {2, {kDirections, Hidden(1), Hidden(4)}},
               {3, {kDirections, Hidden(8)}},
               {5, {kDirections, Free("batch_size"), Hidden(1)}},
               {6, {kDirections, Free("batch_size"), Hidden(1)}},
               {7, {kDirections, Hidden(3)}}};
  op.float_weights = false;
  op.hidden_from[0] = {2, 1, 1};  // R [D, H, 4H]
  op.hidden_from[1] = {1, 2, 4};  // W [D, input, 4H]
  op.has_layout = false;
  op.layout_since = 0;
  op.streaming_caveat =
      "it quantizes X on every call with the range (minimum and maximum) of that call's X, so chunked runs "
      "equal one full run only when every chunk has the same minimum and maximum; a stacked layer quantizes "
      "the previous layer's output the same way; and one batch row's results depend on the other rows batched "
      "with it (quantization ranges span the batch), so a server batching sequences together gets results close "
      "to, not equal to, each sequence run alone";
  return op;
}

}  // namespace

const std::vector<RecurrentOp>& RecurrentOps() {
  static const std::vector<RecurrentOp> ops = {OnnxOp("RNN", 1, false), OnnxOp("GRU", 3, false),
                                               OnnxOp("LSTM", 4, true), DynamicQuantizeLstm()};
  return ops;
}

const RecurrentOp* FindRecurrentOp(const onnx::NodeProto& node) {
  // Asked of every node, a few times each: the operator's name first, which nearly every node fails.
  for (const RecurrentOp& op : RecurrentOps()) {
    if (node.op_type() != op.op_type) continue;
    if (op.domain.empty() ? IsOnnxDomain(node.domain()) : node.domain() == op.domain) return &op;
  }
  return nullptr;
}

const std::vector<std::string_view>& ActivationNames() {
  static const std::vector<std::string_view> names = {
      "Relu",       "Tanh",        "Sigmoid", "Affine",   "LeakyRelu", "ThresholdedRelu",
      "ScaledTanh", "HardSigmoid", "Elu",     "Softsign", "Softplus"};
  return names;
}

std::string InputName(const RecurrentOp& op, int slot) {
  if (slot >= 0 && slot < static_cast<int>(op.input_names.size())) return std::string(op.input_names[slot]);
  return "input " + std::to_string(slot);
}

}  // namespace rnnstate
