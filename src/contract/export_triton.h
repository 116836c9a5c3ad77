#pragma once
/// \file
/// `rnnstate export triton MODEL`: a Triton model-repository entry's `config.pbtxt` for a rewritten model
/// (onnxruntime backend, its data inputs and outputs, and `sequence_batching` with the state tensors as
/// implicit state). Triton batches on axis 0 and starts a new sequence from one fixed tensor per state
/// (`initial_state`), and a Triton release pairs state inputs with outputs by sorted name; what it cannot
/// express is refused with the reason and the rewrite to run.

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>
#include <vector>

namespace rnnstate {

/// The config fragment for `model` (`file` names it in a comment). Throws Error(kUnsupported) when a
/// state is not batch-first, is a sequence, has a size other than the batch that is not fixed, has a
/// default that is not zeros, or when the sorted names of the inputs and outputs do not pair them.
/// `warnings`, when given, gets one line per state tensor holding states that do not stream.
std::string TritonStateConfig(const onnx::ModelProto& model, const std::string& file,
                              std::vector<std::string>* warnings = nullptr);

/// `max_batch_size` when `export triton` is not given one and Triton can batch the model.
inline constexpr int64_t kDefaultMaxBatchSize = 8;

/// The whole `config.pbtxt` of model `name` (the entry's directory name): `backend: "onnxruntime"`,
/// `max_batch_size`, every data input (a graph input that is neither a state input nor an initializer)
/// and every output that is not a state output, with its type and its dims after the batch (-1 where
/// symbolic), then TritonStateConfig's `sequence_batching`. Throws Error(kUnsupported) as
/// TritonStateConfig does, and when a data input has no shape or an element type Triton has no name for.
/// An output Triton cannot batch (its batch not on axis 0, no shape) is left out, with a warning: Triton
/// returns only the outputs its configuration lists.
/// When Triton cannot batch the data (its batch fixed, a data input time-major or without the batch) or
/// `max_batch_size` is 0: TritonUnbatchedConfig (`max_batch_size: 0`), its reason first in `warnings`
/// unless 0 was asked for; with a `max_batch_size` above 0 such a model is refused, the advice being 0.
/// No `max_batch_size`: kDefaultMaxBatchSize where Triton can batch.
std::string TritonModelConfig(const onnx::ModelProto& model, const std::string& name,
                              std::optional<int64_t> max_batch_size, std::vector<std::string>* warnings = nullptr);

}  // namespace rnnstate
