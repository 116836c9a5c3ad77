#pragma once
/// \file
/// `rnnstate export triton MODEL`: the `sequence_batching { state [...] }` fragment of a Triton
/// `config.pbtxt` for a model's state tensors (implicit state management). Triton batches on axis 0 and
/// starts a new sequence from one fixed tensor per state (`initial_state`), and a Triton release pairs
/// state inputs with outputs by sorted name; what it cannot express is refused with the reason.

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

namespace rnnstate {

/// The config fragment for `model` (`file` names it in a comment). Throws Error(kUnsupported) when a
/// state is not batch-first, is a sequence, has a size other than the batch that is not fixed, has a
/// default that is not zeros, or when the sorted names of the inputs and outputs do not pair them.
/// `warnings`, when given, gets one line per state tensor holding states that do not stream.
std::string TritonStateConfig(const onnx::ModelProto& model, const std::string& file,
                              std::vector<std::string>* warnings = nullptr);

}  // namespace rnnstate
