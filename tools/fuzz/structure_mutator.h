#pragma once
/// \file
/// Structure-aware mutation of ONNX models for libFuzzer (Debian ships no libprotobuf-mutator): the bytes
/// are parsed as an onnx::ModelProto and changed as a graph — nodes inserted, deleted, duplicated and
/// rewired to other values in scope, op types swapped among the operator table's and the recurrent and
/// control-flow operators, attributes changed, added and removed, dims and dtypes of inputs, outputs,
/// value_info and initializers changed, subgraph bodies (If/Loop/Scan) mutated like the main graph, the
/// metadata (the `rnnstate` document most of all) and the opsets edited — so that mutants still parse and
/// reach the rewrite's deep paths, where byte flips mostly make unparseable input.

#include <onnx/onnx_pb.h>

#include <cstddef>
#include <cstdint>
#include <random>

namespace rnnstate::fuzz {

/// Applies one structural mutation, chosen by `random`, to `model` (which has a graph). Returns false when
/// the chosen mutation found nothing to act on (the caller tries another).
bool MutateOnce(onnx::ModelProto& model, std::minstd_rand& random);

/// Copies a run of `donor`'s main-graph nodes (with the initializers they read that `model` lacks) into a
/// random graph of `model`, at a random place: what libFuzzer's crossover does for bytes.
void CrossNodes(onnx::ModelProto& model, const onnx::ModelProto& donor, std::minstd_rand& random);

}  // namespace rnnstate::fuzz
