#pragma once
/// \file
/// The pieces of a Triton `config.pbtxt` that both of `rnnstate export triton`'s configurations write —
/// the batched one (`max_batch_size` > 0, dims after the batch) and the unbatched one (`max_batch_size: 0`,
/// every tensor's dims whole) — and the state rules they share: Triton's names of element types, a tensor
/// entry, the `sequence_batching` section, and the refusals of states Triton cannot carry at all.

#include <onnx/onnx_pb.h>

#include <sstream>
#include <string>
#include <vector>

#include "contract/state_tensors.h"

namespace rnnstate {

/// Triton's DataType name of an rnnstate element type name ("float32" -> "TYPE_FP32"); "" when none.
std::string TritonType(const std::string& dtype);

/// Triton's DataType name of an ONNX element type ("" when Triton has none).
std::string TritonTypeOf(int32_t elem_type);

/// "[ 1, -1, 3 ]".
std::string TritonDimsText(const std::vector<int64_t>& dims);

/// "'x' [seq,batch,3]" for messages (the declared shape, when there is one).
std::string ValueLabel(const onnx::ValueInfoProto& value);

/// One entry of an `input [...]` or `output [...]` list: name, data type and `dims`. Empty dims (a
/// scalar, or a tensor that is only its batch) are written `dims: [ 1 ]` with `reshape: { shape: [ ] }`:
/// Triton's dims cannot be empty.
void WriteTritonTensor(std::ostringstream& out, const onnx::ValueInfoProto& value, const std::vector<int64_t>& dims,
                       bool last);

/// The `sequence_batching` section: one implicit state per state tensor, `dims[i]` its dims, starting from
/// zeros (`initial_state` of the same dims).
std::string TritonSequenceBatching(const std::vector<StateTensor>& tensors,
                                   const std::vector<std::vector<int64_t>>& dims);

/// Throws Error(kUnsupported) when Triton cannot carry `tensor` whatever its configuration: a Sequence, an
/// input with a default (invisible to ONNX Runtime's C API), an element type Triton has no name for.
void RequireCarriable(const StateTensor& tensor);

/// Throws Error(kUnsupported) for states that do not start from zeros: Triton gives every new sequence one
/// fixed tensor.
void RequireZeroDefaults(const std::vector<StateTensor>& tensors);

/// Throws Error(kUnsupported) when the sorted names of the state inputs and outputs do not pair them (a
/// Triton release pairs implicit states so).
void RequireSortedPairing(const std::vector<StateTensor>& tensors);

}  // namespace rnnstate
