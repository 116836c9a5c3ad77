#pragma once
/// \file
/// onnx schemas for the contrib operators of the operator table (`recurrent_ops`): onnx 1.12 knows none of
/// ONNX Runtime's `com.microsoft` operators, so without a schema its shape inference stops at such a node
/// (nothing after a quantized LSTM gets a shape: a second layer's batch is unknown) and its checker passes
/// over it unchecked.

namespace rnnstate {

/// Registers, once per process, the schema of `com.microsoft.DynamicQuantizeLSTM` (version 1) as ONNX
/// Runtime defines it: inputs, outputs, attributes, type constraints, and LSTM's shape inference. Called
/// before onnx's checker or shape inference runs; safe from several threads.
void RegisterContribSchemas();

}  // namespace rnnstate
