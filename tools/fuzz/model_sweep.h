#pragma once
/// \file
/// One model through what every command of the CLI does with it, via the library entry points the CLI uses
/// (rnnstate/pipeline.h, contract/), in memory: the checks OpenModel makes, `check` (and
/// --streamable-only), `report` (text, JSON, DOT), `init` (batch 1 and 3, --dim) and `export triton` /
/// `openvino`, and `rewrite` in every mode (defaults, required, --pack tensor / sequence, batch-first,
/// --time-axis) — each rewrite's output again through check, init and export. The structure-aware fuzz
/// target (fuzz_structure.cc) runs it on every mutant; the unit tests run it on the saved finds in
/// tests/data/fuzz/ (tests/unit/fuzz_replay_test.cc).

#include <onnx/onnx_pb.h>

#include <cstddef>
#include <string>
#include <vector>

namespace rnnstate::fuzz {

/// The oracles `model` breaks, one line each ("rewrite --pack tensor: internal error: ..."); empty when
/// it breaks none. Broken: an internal error (Error kInternal, or any other exception, which the CLI
/// reports as exit 6); a rewrite of a model onnx's checker accepts whose output the checker refuses; a
/// second rewrite of a rewrite's output, with the same options (but --pack: a packed model is not packed
/// again), that refuses it or changes a byte.
/// `pick` chooses the --time-axis input and axis; `data_dir` is where the model's external data is.
std::vector<std::string> SweepModel(const onnx::ModelProto& model, size_t pick, const std::string& data_dir);

/// `model` serialized deterministically: the bytes a second rewrite must reproduce, and the fuzzer's mutants.
std::string Bytes(const onnx::ModelProto& model);

}  // namespace rnnstate::fuzz
