// libFuzzer target: any bytes that parse as a ModelProto must be checked for external data, analyzed,
// planned, rewritten and validated without crashing; failures must surface as rnnstate::Error (or a
// caught exception), never as a crash, sanitizer report or hang. Build: tools/fuzz/run.sh.

#include <cstddef>
#include <cstdint>

#include "rnnstate/error.h"
#include "external_data.h"
#include "rewrite.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  onnx::ModelProto model;
  if (!model.ParseFromArray(data, static_cast<int>(size)) || !model.has_graph()) return 0;
  try {
    // What OpenModel does before any rewrite. Locations resolve in fuzz_data/ (in the working directory),
    // where tools/fuzz/run.sh puts the seeds' data files; a refused model goes no further, as in the CLI.
    rnnstate::CheckExternalData(model, "fuzz_data");
  } catch (const rnnstate::Error& e) {
    if (e.code() != rnnstate::ExitCode::kBadInput) __builtin_trap();
    return 0;
  }
  try {
    rnnstate::PlanOptions options;
    options.mode = size % 2 ? rnnstate::StateInputMode::kRequired : rnnstate::StateInputMode::kDefaults;
    rnnstate::RewriteModel(model, options, /*strict=*/false);
    rnnstate::RewriteModel(model, options, /*strict=*/false);  // a second run must not crash either
  } catch (const rnnstate::Error& e) {
    // Expected for unsupported or invalid models; kInternal means a rewrite failed validation.
    if (e.code() == rnnstate::ExitCode::kInternal) __builtin_trap();
  } catch (const std::exception&) {
    // onnx's checker and shape inference throw their own types on malformed models.
  }
  return 0;
}
