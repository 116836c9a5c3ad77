#pragma once
/// \file
/// The recurrent operators rnnstate knows, as data: one row per operator says where its states enter and
/// leave and how its facts are read. Everything that asks "is this an LSTM?" asks this table; adding an
/// operator is one row (plus its test models). `tools/recurrent_ops.json` lists the same rows for the
/// scripts (a unit test keeps the two in step).

#include <onnx/onnx_pb.h>

#include <string>
#include <string_view>
#include <vector>

namespace rnnstate {

/// Where the hidden size can be read when the `hidden_size` attribute is absent: dimension `axis` of the
/// weight in input `slot`, divided by `divisor` (the gate count where the weight stacks the gates).
struct HiddenSizeSource {
  int slot = -1;
  int axis = -1;
  int divisor = 1;
};

/// One recurrent operator.
struct RecurrentOp {
  std::string_view domain;   ///< "" for the default ONNX domain
  std::string_view op_type;  ///< "LSTM"
  int gates = 1;             ///< gate blocks per direction: 1 (RNN), 3 (GRU), 4 (LSTM)
  /// The names of the input slots in order ("X", "W", ...), for messages.
  std::vector<std::string_view> input_names;
  /// What the operator's spec requires of a node (checked by model_rules before any analysis):
  std::vector<int> required_slots;   ///< inputs that must be present and named (X, W, R)
  std::vector<int> float_slots;      ///< inputs of type T: a known element type must be one of `float_types`
  std::vector<int32_t> float_types;  ///< onnx::TensorProto_DataType values T may take
  int x_slot = 0;
  int w_slot = 1;
  int r_slot = 2;
  bool float_weights = true;  ///< W and R have X's element type (not so for quantized weights)
  int sequence_lens_slot = 4;
  int initial_h_slot = 5;
  int initial_c_slot = -1;  ///< -1: no cell state
  int y_h_slot = 1;
  int y_c_slot = -1;
  /// Tried in order when the attribute is absent (the recurrence weight first: its last axis is H).
  HiddenSizeSource hidden_from[2];
  bool has_layout = false;  ///< takes the `layout` attribute (batch-major X and states): 0 or 1
  /// Allowed values of the `direction` attribute (absent means "forward"); `hidden_size`, when present,
  /// must be positive.
  std::vector<std::string_view> directions;
  /// Why chunked runs may still differ from one full run although the recurrence streams; "" when exact.
  std::string_view streaming_caveat;

  bool has_cell() const { return initial_c_slot >= 0; }
};

/// Every operator of the table, in a stable order.
const std::vector<RecurrentOp>& RecurrentOps();

/// The row for `node`'s domain and op type ("" and "ai.onnx" are the same domain), or nullptr.
const RecurrentOp* FindRecurrentOp(const onnx::NodeProto& node);

/// "X" for slot 0 of `op`, or "input 9" for a slot the table does not name.
std::string InputName(const RecurrentOp& op, int slot);

}  // namespace rnnstate
