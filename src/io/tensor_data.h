#pragma once
/// \file
/// Tensors whose values are in the model (not external data): the values their fields hold must be what
/// their dims and data type take, as ONNX Runtime requires when it loads the model. Checked on every
/// tensor of the model (tensor_places.h: initializers of every graph and function, Constant values and
/// other tensor attributes, sparse tensors' values and indices, training info).

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "io/tensor_places.h"

namespace rnnstate {

/// The byte length of a tensor's `raw_data` as the file holds it: raw_data().size(), except for a payload
/// ModelFile left in the file (model_file.h), whose placeholder stands for the payload's length; nullopt
/// when it is not known (a placeholder without its ModelFile): its length is then not judged.
using RawDataSize = std::function<std::optional<uint64_t>(const onnx::TensorProto& tensor)>;

/// Why the values `tensor` holds do not fit its dims and data type, or "": a negative dim; `raw_data` of
/// another byte length than the dims and type take (`raw_size`: its length, nullopt: not judged); without raw_data, a
/// typed field (`float_data`, `int32_data`, ..., `string_data`) with another number of values (two per complex
/// element). Sizes are computed without overflow (a count above 2^64 - 1 matches no data). Not judged:
/// external data (external_data.h checks it), a data type without a known field (undefined, 4-bit types),
/// raw_data of a STRING tensor (its strings have no fixed size).
std::string InlineDataProblem(const onnx::TensorProto& tensor, std::optional<uint64_t> raw_size);

/// The first tensor of `model` whose values InlineDataProblem refuses, as "tensor 'h0' at
/// graph.initializer[2]: raw_data has 3 bytes, but FLOAT [1,1,4] takes 16 bytes", or "".
std::string FirstInlineDataProblem(const onnx::ModelProto& model, const RawDataSize& raw_size);

/// InlineDataProblem of `tensor`, found at `path`, worded as FirstInlineDataProblem words it, or "": for a
/// caller that walks the model's tensors itself (model_io.h, beside the external data checks).
std::string InlineDataProblemAt(const onnx::TensorProto& tensor, const places::TensorPath& path,
                                std::optional<uint64_t> raw_size);

}  // namespace rnnstate
