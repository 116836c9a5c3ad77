// libFuzzer target: any bytes that parse as a ModelProto must be checked for external data, validated,
// analyzed, planned, rewritten and validated again without crashing; failures must surface as
// rnnstate::Error (or a caught exception), never as a crash, sanitizer report or hang. `check`, `report`
// and the rewrite must reach one verdict on an invalid model (model_rules.h). Build: tools/fuzz/run.sh.

#include <cstddef>
#include <cstdint>
#include <string>

#include "io/external_data.h"
#include "pipeline_stages.h"
#include "rnnstate/error.h"
#include "rnnstate/pipeline.h"

namespace {

/// "CODE MESSAGE" of the Error `run` throws, "" when it throws none. An internal error (a rewrite failing
/// its own validation) is a bug.
template <typename Run>
std::string VerdictOf(Run&& run) {
  try {
    run();
  } catch (const rnnstate::Error& e) {
    if (e.code() == rnnstate::ExitCode::kInternal) __builtin_trap();
    return std::to_string(static_cast<int>(e.code())) + " " + e.what();
  } catch (const std::exception& e) {
    // onnx's checker and shape inference throw their own types on malformed models.
    return std::string("exception ") + e.what();
  }
  return "";
}

}  // namespace

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
  // `check` and `report` refuse exactly the same models, with the same message.
  const std::string check = VerdictOf([&] { rnnstate::CheckForStreaming(model); });
  const std::string report = VerdictOf([&] { rnnstate::ReportOf(model); });
  if (check != report) __builtin_trap();
  rnnstate::PlanOptions options;
  options.mode = size % 2 ? rnnstate::StateInputMode::kRequired : rnnstate::StateInputMode::kDefaults;
  // Expected for unsupported or invalid models. A model that check refuses, the rewrite refuses alike
  // (one the check accepts may still be unsupported, or fail onnx's checks once rewritten).
  const std::string rewrite = VerdictOf([&] { rnnstate::RewriteModel(model, options, /*strict=*/false); });
  if (!check.empty() && rewrite != check) __builtin_trap();
  VerdictOf([&] { rnnstate::RewriteModel(model, options, /*strict=*/false); });  // a second run must not crash
  return 0;
}
