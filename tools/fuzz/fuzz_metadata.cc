// libFuzzer target: any bytes as the `rnnstate` metadata value of a rewritten two-GRU model. Reading and
// validating it (rules/metadata_rules.h, what every command does first) must never crash or throw; a
// document it accepts must survive a write and a read, drive init's and export's code without crashing,
// and a rewrite of the model must leave valid metadata. The CI runs a bounded, deterministic version of
// this (tests/unit/rules/metadata_rules_test.cc, RandomMutationsOfTheDocument).
// Build and run: tools/fuzz/run.sh --metadata [SECONDS].

#include <onnx/defs/parser.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "contract/export_openvino.h"
#include "contract/export_triton.h"
#include "pipeline_stages.h"
#include "rnnstate/error.h"
#include "rules/metadata_rules.h"

namespace {

onnx::ModelProto RewrittenModel() {
  onnx::ModelProto model;
  onnx::OnnxParser::Parse(model, R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[seq, batch, 2] X, float[1, 9, 2] W, float[1, 9, 3] R, float[1, 9, 3] W2) => (float[seq, 1, batch, 3] Y2) {
  Y, H = GRU <hidden_size = 3> (X, W, R)
  axes = Constant <value = int64[1] {1}> ()
  X2 = Squeeze (Y, axes)
  Y2, H2 = GRU <hidden_size = 3> (X2, W2, R)
})");
  rnnstate::RewriteModel(model, rnnstate::PlanOptions{}, /*strict=*/false);
  return model;
}

template <typename Run>
void ExpectOnlyErrors(Run&& run) {
  try {
    run();
  } catch (const rnnstate::Error& e) {
    if (e.code() == rnnstate::ExitCode::kInternal) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const onnx::ModelProto kModel = RewrittenModel();
  onnx::ModelProto model = kModel;
  model.mutable_metadata_props(0)->set_value(std::string(reinterpret_cast<const char*>(data), size));
  rnnstate::MetadataReading reading;
  try {
    reading = rnnstate::ReadMetadata(model);
  } catch (...) {
    __builtin_trap();  // the reader reports, it never throws
  }
  if (!reading.valid()) return 0;
  onnx::ModelProto copy = model;
  rnnstate::WriteStatePairs(copy, reading.pairs);
  std::string error;
  if (rnnstate::ReadStatePairs(copy, &error) != reading.pairs || !error.empty()) __builtin_trap();
  ExpectOnlyErrors([&] { rnnstate::OpenVinoStatePairs(model); });
  ExpectOnlyErrors([&] { rnnstate::TritonStateConfig(model, "m.onnx", nullptr); });
  ExpectOnlyErrors([&] {
    rnnstate::RewriteModel(model, rnnstate::PlanOptions{}, /*strict=*/false);
    if (!rnnstate::ReadMetadata(model).valid()) __builtin_trap();
  });
  return 0;
}
