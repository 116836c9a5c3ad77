#include "find/stateful_ops.h"

namespace rnnstate {

namespace {

constexpr std::string_view kMicrosoft = "com.microsoft";
constexpr std::string_view kOnnx = "";  // the default domain ("" or "ai.onnx")
constexpr std::string_view kKvCache =
    "a key/value cache (past -> present) that grows by the chunk length on every call, not a fixed-size "
    "recurrent state";
constexpr std::string_view kOtherShape =
    "a fixed-size state (past -> present), but not an RNN state [num_directions, batch, hidden_size]: rnnstate "
    "does not expose it; feed its state output back yourself";

std::string SlotList(const onnx::NodeProto& node, const std::vector<int>& slots, bool inputs) {
  std::string text;
  for (int slot : slots) {
    const int size = inputs ? node.input_size() : node.output_size();
    const std::string name = slot < size ? (inputs ? node.input(slot) : node.output(slot)) : "";
    text += (text.empty() ? "" : ", ") + (name.empty() ? "slot " + std::to_string(slot) : "'" + name + "'");
  }
  return text;
}

/// True when every state input of `node` is a main-graph input and every state output a main-graph output.
bool Exposed(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node, const StatefulOp& op) {
  if (!path.empty()) return false;
  const GraphIndex& main = index.graph(path);
  for (int slot : op.state_inputs) {
    if (slot >= node.input_size() || !main.inputs.count(node.input(slot))) return false;
  }
  for (int slot : op.state_outputs) {
    if (slot >= node.output_size() || !main.outputs.count(node.output(slot))) return false;
  }
  return true;
}

}  // namespace

const std::vector<StatefulOp>& StatefulOps() {
  static const std::vector<StatefulOp> ops = {
      {kMicrosoft,
       "AttnLSTM",
       {5, 6},
       {1, 2},
       "an LSTM with attention whose attention state stays inside (it restarts at zero on every call): exposing h "
       "and c alone would not stream it"},
      {kMicrosoft, "CausalConvWithState", {3}, {1}, kOtherShape},
      {kMicrosoft, "VarlenCausalConvWithState", {}, {}, kOtherShape},
      {kMicrosoft, "LinearAttention", {3}, {1}, kOtherShape},
      {kMicrosoft, "GatedDeltaNet", {6}, {1}, kOtherShape},
      {kMicrosoft, "Attention", {4}, {1}, kKvCache},
      {kMicrosoft, "QAttention", {8}, {1}, kKvCache},
      {kMicrosoft, "MultiHeadAttention", {6, 7}, {1, 2}, kKvCache},
      {kMicrosoft, "DecoderMaskedMultiHeadAttention", {5, 6}, {1, 2}, kKvCache},
      {kMicrosoft, "DecoderMaskedSelfAttention", {}, {}, kKvCache},
      {kMicrosoft, "GroupQueryAttention", {3, 4}, {1, 2}, kKvCache},
      {kMicrosoft, "DecoderAttention", {}, {}, kKvCache},
      {kMicrosoft, "PagedAttention", {}, {}, kKvCache},
      {kMicrosoft, "SparseAttention", {}, {}, kKvCache},
      // ONNX's own (opset 23+): Attention's past_key / past_value -> present_key / present_value, and
      // TensorScatter, the in-place update of a fixed-size cache buffer that goes with it (opset 24).
      {kOnnx, "Attention", {4, 5}, {1, 2}, kKvCache},
      {kOnnx,
       "TensorScatter",
       {0},
       {0},
       "a key/value cache buffer of fixed size written at its write indices (past_cache -> present_cache), not an "
       "RNN state [num_directions, batch, hidden_size]: rnnstate does not expose it; feed present_cache back "
       "yourself"},
  };
  return ops;
}

void FindStatefulOps(const ModelIndex& index, Findings* found) {
  for (const auto& [path, graph_index] : index.graphs()) {
    const onnx::GraphProto* graph = ResolveGraph(index.model(), path);
    if (graph == nullptr) continue;
    for (int n = 0; n < graph->node_size(); ++n) {
      const onnx::NodeProto& node = graph->node(n);
      for (const StatefulOp& op : StatefulOps()) {
        const bool domain = op.domain.empty() ? IsOnnxDomain(node.domain()) : node.domain() == op.domain;
        if (!domain || node.op_type() != op.op_type) continue;
        StateNote note;
        note.kind = StateNote::Kind::kUnhandledOp;
        note.owner = StateOwner{path, n, GraphPathString(index.model(), path), NodeLabel(node, n), node.op_type()};
        note.variable = op.state_inputs.empty()
                            ? "its state slots"
                            : SlotList(node, op.state_inputs, true) + " -> " + SlotList(node, op.state_outputs, false);
        note.reason = op.reason;
        note.exposed = !op.state_inputs.empty() && Exposed(index, path, node, op);
        found->notes.push_back(std::move(note));
      }
    }
  }
}

}  // namespace rnnstate
