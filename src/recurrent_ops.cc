#include "recurrent_ops.h"

#include "model_index.h"

namespace rnnstate {

namespace {

/// The ONNX operators share one signature: X, W, R, B, sequence_lens, initial_h[, initial_c, P] -> Y,
/// Y_h[, Y_c]; W is [D, gates*H, input] and R [D, gates*H, H].
RecurrentOp OnnxOp(std::string_view op_type, int gates, bool cell) {
  RecurrentOp op;
  op.domain = "";
  op.op_type = op_type;
  op.gates = gates;
  op.initial_c_slot = cell ? 6 : -1;
  op.y_c_slot = cell ? 2 : -1;
  op.hidden_from[0] = {2, 2, 1};
  op.hidden_from[1] = {1, 1, gates};
  op.has_layout = true;
  return op;
}

}  // namespace

const std::vector<RecurrentOp>& RecurrentOps() {
  static const std::vector<RecurrentOp> ops = {OnnxOp("RNN", 1, false), OnnxOp("GRU", 3, false),
                                               OnnxOp("LSTM", 4, true)};
  return ops;
}

const RecurrentOp* FindRecurrentOp(const onnx::NodeProto& node) {
  for (const RecurrentOp& op : RecurrentOps()) {
    bool same_domain = op.domain.empty() ? IsOnnxDomain(node.domain()) : node.domain() == op.domain;
    if (same_domain && node.op_type() == op.op_type) return &op;
  }
  return nullptr;
}

}  // namespace rnnstate
