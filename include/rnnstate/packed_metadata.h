#pragma once
/// \file
/// The packed part of the contract with runtimes: the `"packed"` object of the `rnnstate` metadata
/// document, beside `"states"` (schema in docs/metadata.md). A packed model carries its states in one
/// value per element type — a tensor [batch, N] or a Sequence of tensors — and each member of that value
/// names the states (indices into "states") whose tensors it holds. The states' `input` and `output` then
/// name values inside the graph: the member as unpacked, and the final state that is packed.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rnnstate/json.h"
#include "rnnstate/metadata.h"

namespace rnnstate {

/// `kind` of a packed model.
inline constexpr const char* kPackedTensor = "tensor";      ///< one tensor [batch, N] per element type
inline constexpr const char* kPackedSequence = "sequence";  ///< one Sequence<Tensor> per element type

/// One tensor of a packed value: the state tensor of one or more state pairs (several for the rows of a
/// stacked tensor).
struct PackedMember {
  std::vector<int64_t> states;  ///< indices into the document's "states"
  std::string input;            ///< the value the member is unpacked into (the pairs' `input`)
  std::string output;           ///< the final state packed into the value's output (the pairs' `output`)
  std::vector<MetaDim> shape;   ///< the member's shape as its node takes it (batch named as the data's)
  int64_t batch_axis = -1;      ///< the axis of `shape` that is the batch
  // kind "tensor": columns [offset, offset + length) of every batch row hold the member moved batch-first
  // (`layout` "batch-first": the batch axis moved to the front, the rest row-major), `row_shape` the
  // shape of one batch row (`shape` without its batch axis).
  int64_t offset = -1;
  int64_t length = -1;
  std::vector<int64_t> row_shape;
  // kind "sequence": the member's position in the sequence.
  int64_t position = -1;

  bool operator==(const PackedMember& o) const {
    return states == o.states && input == o.input && output == o.output && shape == o.shape &&
           batch_axis == o.batch_axis && offset == o.offset && length == o.length && row_shape == o.row_shape &&
           position == o.position;
  }
};

/// One packed graph input and output (one per element type).
struct PackedValue {
  std::string input;   ///< the graph input to feed
  std::string output;  ///< the graph output to feed back
  std::string dtype;   ///< element type of the tensor (of the sequence's tensors)
  /// kind "tensor": [batch, N] with the batch as the data name it; empty for a sequence.
  std::vector<MetaDim> shape;
  int64_t batch_axis = -1;  ///< 0 for a tensor, -1 for a sequence
  std::string init;         ///< the first feed: kInitEmpty (a [0, N] tensor, an empty sequence)
  bool optional = false;    ///< the input has a default (the empty tensor) and may be left unfed
  bool streamable = true;   ///< every member's states stream
  std::vector<PackedMember> members;

  bool operator==(const PackedValue& o) const {
    return input == o.input && output == o.output && dtype == o.dtype && shape == o.shape &&
           batch_axis == o.batch_axis && init == o.init && optional == o.optional && streamable == o.streamable &&
           members == o.members;
  }
};

/// The "packed" object.
struct PackedStates {
  std::string kind;  ///< kPackedTensor or kPackedSequence
  std::vector<PackedValue> values;

  /// The value and member holding state pair `state`, or {-1, -1}.
  std::pair<int, int> MemberOf(int64_t state) const;
  bool operator==(const PackedStates& o) const { return kind == o.kind && values == o.values; }
};

/// The "packed" object of `model`'s metadata, or nullopt when the model is not packed. Sets `error`
/// (and returns nullopt) when it is not a valid description; `state_count` is the number of "states"
/// its members may refer to.
std::optional<PackedStates> ReadPackedStates(const onnx::ModelProto& model, size_t state_count, std::string* error);
/// The same, from the metadata document already parsed (see ReadStatePairs).
std::optional<PackedStates> ReadPackedStates(const Json& document, size_t state_count, std::string* error);

/// The "packed" object as JSON.
Json PackedStatesJson(const PackedStates& packed);

/// True when `model`'s metadata has a "packed" object (valid or not).
bool HasPackedStates(const onnx::ModelProto& model);
/// The same, from the metadata document already parsed (see ReadStatePairs; nullopt: none).
bool HasPackedStates(const std::optional<Json>& document);

}  // namespace rnnstate
