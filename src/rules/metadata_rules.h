#pragma once
/// \file
/// The one validation of the `rnnstate` metadata a model carries. Metadata read from a file is untrusted
/// input: every command (rewrite, report, check, init, export) reads it through ReadMetadata, so that what
/// one command refuses no other command relies on. The rules compare the document with the model's
/// interface only (inputs, outputs, declared types and shapes, subgraph paths); whether a pair's input
/// really reaches its state is check's deeper question (views/check.h). Cost: linear in the number of
/// pairs and in the size of the main graph's interface.

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>
#include <vector>

#include "contract/stream_record.h"
#include "rnnstate/check_problem.h"
#include "rnnstate/metadata.h"
#include "rnnstate/packed_metadata.h"

namespace rnnstate {

/// Most pairs that may share one tensor (the rows or regions of the model's own tensor): more is refused
/// rather than compared pair by pair.
inline constexpr size_t kMaxPairsPerTensor = 1024;

/// The metadata of a model, read and judged.
struct MetadataReading {
  std::vector<StatePair> pairs;        ///< as read (what could be read when the document is malformed)
  std::optional<PackedStates> packed;  ///< the "packed" object, when there is a valid one
  std::optional<StreamRecord> stream;  ///< the "stream" object, when there is a valid one
  /// Every rule a pair or the document breaks, in document order; kinds as check reports them
  /// (kBadMetadata for the document and field values, kNotGraphInput, kDuplicateInput, ...).
  std::vector<CheckProblem> problems;
  /// False when the document itself is unusable (not JSON, a wrong schema, given twice): its pairs must
  /// not be relied on at all. True when only pairs contradict the model.
  bool document_valid = true;

  bool valid() const { return problems.empty(); }
  /// The first problem, and how many more: one line for an error or a warning ("" when valid).
  std::string Summary() const;
};

/// Reads the `rnnstate` metadata of `model` and checks it against the model (see the file comment).
MetadataReading ReadMetadata(const onnx::ModelProto& model);

/// The pairs and packed description of `model` for commands that act on them (init, export): throws
/// Error(kBadInput) with MetadataReading::Summary() when any rule is broken.
MetadataReading RequireValidMetadata(const onnx::ModelProto& model);

}  // namespace rnnstate
