#pragma once
/// \file
/// Stage 7: check a rewritten model before it is written — our own structural checks always, onnx's
/// checker and shape inference where onnx 1.12 understands the model.

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

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
};

/// Decides which checks apply, by running them on the input model.
ValidationBaseline MakeValidationBaseline(const onnx::ModelProto& input, bool inference_succeeded,
                                          const std::string& model_dir);

/// Checks `model`: every value defined before use in its scope, single assignment, unique graph inputs
/// and outputs; then onnx's checker and shape inference as the baseline allows. Throws Error(kInternal)
/// naming the first problem — except a shape inference failure on a model whose input onnx's checker
/// could not vouch for (too new, or rejected for a reason outside model_rules): Error(kUnsupported).
void ValidateRewritten(const onnx::ModelProto& model, const ValidationBaseline& baseline);

/// Only the structural part of ValidateRewritten, returning the first problem as "GRAPH: PROBLEM" or "":
/// a name read before anything defines it (undefined, or nodes out of order / in a cycle), a name defined
/// twice in one graph, a duplicate graph input or output, a graph output nothing defines. Also run on
/// every input model (model_rules.h).
std::string StructuralProblem(const onnx::ModelProto& model);

}  // namespace rnnstate
