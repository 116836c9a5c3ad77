#pragma once
/// \file
/// `rnnstate export triton` for a model Triton cannot batch (data time-major `[T, B, F]`, a data input
/// without the batch, a fixed batch): Triton's configuration for a model it does not batch,
/// `max_batch_size: 0`. Then every input's, output's and state's `dims` are the tensor's whole shape
/// (Triton's model_configuration.md, "Inputs and Outputs"), the sequence batcher gives each model instance
/// one sequence slot, and an implicit state's shape is its `dims` with no batch dimension added (Triton
/// core's SequenceStates::Initialize). Each request carries one sequence: a symbolic batch is written 1 in
/// the inputs and the states (the initial state needs fixed dims), -1 in the outputs (the onnxruntime
/// backend compares an output's dims with the model's exactly, an input's loosely).
///
///   x [seq, batch, 5]       ->  input  x        dims: [ -1, 1, 5 ]
///   state_in [batch, 12]    ->  state  state_in dims: [ 1, 12 ], initial_state zeros [ 1, 12 ]
///   y [seq, batch, 3]       ->  output y        dims: [ -1, -1, 3 ]

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "contract/state_tensors.h"

namespace rnnstate {

/// The whole `config.pbtxt` of model `name` with `max_batch_size: 0`, its states `tensors` (StateTensorsOf)
/// as implicit state.
/// Throws Error(kUnsupported) for a state Triton cannot carry (RequireCarriable, zero defaults, sorted
/// pairing, a size other than the batch that is not fixed) or a data input without a declared shape or an
/// element type Triton names. An output without a shape is left out, with a line in `warnings`.
std::string TritonUnbatchedConfig(const onnx::ModelProto& model, const std::string& name,
                                  const std::vector<StateTensor>& tensors, std::vector<std::string>* warnings);

}  // namespace rnnstate
