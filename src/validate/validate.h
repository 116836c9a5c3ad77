#pragma once
/// \file
/// Checks a rewritten model before it is written — our own structural checks always, onnx's
/// checker and shape inference where onnx 1.12 understands the model.

#include <onnx/onnx_pb.h>

#include <future>
#include <optional>
#include <string>
#include <vector>

#include "graph/shape_inference.h"

namespace rnnstate {

/// What the input model allowed us to check.
struct ValidationBaseline {
  std::string model_dir;           ///< where external data files are found (the input's directory)
  bool checker_applies = false;    ///< IR <= 8, opsets known, and the input passes onnx's checker
  bool inference_applies = false;  ///< onnx shape inference succeeded on the input
  std::string why_not;             ///< why full checking is skipped, for a warning
  /// Operators (`domain.op_type`) of domains onnx 1.12 has no schemas for (e.g. com.microsoft): its checker
  /// and shape inference pass over those nodes without checking them.
  std::vector<std::string> unchecked_ops;
  /// The input as the analysis indexed it, with its inferred types: when set, and the checker and inference
  /// apply, only what the rewrite changed is given to them where that suffices (changed_region.h).
  InferredModel input;
};

/// onnx's checker on `model` (the input of a rewrite), started on another thread so that it runs beside
/// other work: nullopt when the model passes, else the checker's message. An invalid future when the
/// checker does not apply (an IR version or opset newer than onnx 1.12 knows). `model` must not change
/// until the result is taken (MakeValidationBaseline).
std::future<std::optional<std::string>> StartChecker(const onnx::ModelProto& model, const std::string& model_dir);

/// Decides which checks apply, by running them on the input model; `checked`, when valid, is the
/// checker already started on it (StartChecker).
ValidationBaseline MakeValidationBaseline(const onnx::ModelProto& input, bool inference_succeeded,
                                          const std::string& model_dir,
                                          std::future<std::optional<std::string>> checked = {});

/// Checks `model`: every value defined before use in its scope, single assignment, unique graph inputs
/// and outputs; then onnx's checker and shape inference as the baseline allows — on the part the rewrite
/// changed when that vouches for the whole (ChangesPassOnTheirOwn), else on the whole. Throws Error(kInternal)
/// naming the first problem — except a shape inference failure on a model whose input onnx's checker
/// could not vouch for (too new, or rejected for a reason outside model_rules): Error(kUnsupported).
/// `model` is inferred in place and left as it was (InferShapesInPlace): no other thread may read it meanwhile.
void ValidateRewritten(onnx::ModelProto& model, ValidationBaseline baseline);

/// True when onnx's checker and shape inference, run on the part of `model` its rewrite changed (the
/// region FindChangedRegion finds against `baseline.input`), vouch for the whole model; false when the
/// whole model must be checked (no input kept, checks that do not apply, a region that cannot stand for
/// the whole, or one that fails). What ValidateRewritten tries first.
bool ChangesPassOnTheirOwn(const onnx::ModelProto& model, const ValidationBaseline& baseline);

}  // namespace rnnstate
