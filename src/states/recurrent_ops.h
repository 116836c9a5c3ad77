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

/// The element types a group of inputs may take: one type constraint of the operator's schema ("T").
struct SlotTypes {
  std::vector<int> slots;      ///< the inputs it constrains
  std::vector<int32_t> types;  ///< onnx::TensorProto_DataType values they may take
};

/// One axis of an input's shape as the operator's spec gives it.
struct SpecDim {
  enum class Kind {
    kDirections,  ///< num_directions: 2 when bidirectional, else 1
    kHidden,      ///< `multiple` x hidden_size
    kFree,        ///< not fixed by the node (seq_length, batch_size, input_size): `name` in messages
  };
  Kind kind = Kind::kFree;
  int multiple = 1;
  std::string_view name;
};

/// The shape the spec requires of one input (checked where the shape is declared or inferred).
struct SpecShape {
  int slot = -1;
  std::vector<SpecDim> dims;
  bool batch_first_with_layout = false;  ///< with layout 1 its first two axes swap (X and the states)
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
  /// Type constraints: a known element type of each listed input must be one of its group's types.
  std::vector<SlotTypes> slot_types;
  /// Shapes of the inputs that the hidden size and the direction fix (W, R, B, the states, P).
  std::vector<SpecShape> shapes;
  /// Activation functions per direction (RNN 1, GRU 2, LSTM 3): the length `activations` must have.
  int activations_per_direction = 1;
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
  int64_t layout_since = 0;  ///< the first opset of `domain` whose schema has `layout` (ai.onnx: 14)
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

/// The activation function names of the ONNX spec (`activations` of RNN, GRU and LSTM), as spelled there.
const std::vector<std::string_view>& ActivationNames();

}  // namespace rnnstate
