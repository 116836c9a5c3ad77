#pragma once
/// \file
/// The one way rnnstate runs onnx shape inference: on a structural copy (no tensor payloads), with the
/// same options everywhere (types not checked; data propagation on, but off at an opset newer than onnx
/// knows, where it crashed), never on a model whose nodes lack attributes their schema requires (onnx
/// dereferences those unchecked: a Scan without num_scan_inputs crashes it).

#include <google/protobuf/arena.h>
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "graph/graph_path.h"

namespace onnx {
class OpSchema;
}  // namespace onnx

namespace rnnstate {

/// A copy of `model` with everything but initializer payloads (names, types and dims are kept), for
/// shape inference without duplicating the weights. Allocated on (and owned by) `arena`.
onnx::ModelProto* StructuralCopy(const onnx::ModelProto& model, google::protobuf::Arena& arena);

/// True when a StructuralCopy keeps `tensor`, an initializer, whole (small, not external data): the
/// initializers shape inference may read the values of. Of the others it keeps name, type and dims.
bool CopiedWhole(const onnx::TensorProto& tensor);

/// The type of initializer `tensor` (its element type and dims), allocated on `arena`.
const onnx::TypeProto* InitializerType(const onnx::TensorProto& tensor, google::protobuf::Arena& arena);

/// A StructuralCopy with the arena that owns it.
struct OwnedCopy {
  std::unique_ptr<google::protobuf::Arena> arena;
  onnx::ModelProto* model = nullptr;
};

/// StructuralCopy of `model` on an arena of its own.
OwnedCopy MakeStructuralCopy(const onnx::ModelProto& model);

/// A StructuralCopy after InferShapes (the types it inferred in its value infos), sharing the ownership of
/// the arena it is on.
struct InferredModel {
  std::shared_ptr<const google::protobuf::Arena> memory;
  const onnx::ModelProto* model = nullptr;  ///< nullptr: none kept
  /// How many of the main graph's value infos the model declared: inference appends the rest after them.
  int declared_value_infos = 0;
  /// The same for every subgraph of `model`, by its address there (nullptr: not known).
  std::shared_ptr<const std::unordered_map<const onnx::GraphProto*, int>> declared_in_subgraphs;
};

/// Options for the arena of a StructuralCopy: blocks that grow to 1 MiB (protobuf's default stops growing
/// at 8 KiB: thousands of allocations for a big graph).
google::protobuf::ArenaOptions StructuralCopyArenaOptions();

/// A value the analysis knows that onnx's inference cannot compute (onnx 1.12 reads a Slice's bounds only
/// from constants, and its data propagation stops at Div): the one output of node `node` of the graph at
/// `graph`, a 1-D integer tensor of element type `element_type`.
struct KnownValue {
  GraphPath graph;
  int node = 0;
  int32_t element_type = onnx::TensorProto::INT64;
  std::vector<int64_t> values;
};

/// Makes each node of `known` a Constant of its value in `copy` (a StructuralCopy, never the model a
/// rewrite writes), so that inference reads what the analysis evaluated. A node that does not exist or
/// has several outputs is left as it is.
void BindKnownValues(onnx::ModelProto& copy, const std::vector<KnownValue>& known);

/// onnx's ai.onnx schema of `op_type` at `opset` (OpSchemaRegistry::Schema: the newest version up to it),
/// or nullptr. Looked up in onnx's registry once per thread, opset and operator, not once per model (a
/// lookup hashes the name three times over): the answers never change, as onnx registers every ai.onnx
/// schema at its first lookup and rnnstate registers only other domains (contrib_schemas.h).
const onnx::OpSchema* OnnxSchemaAt(const std::string& op_type, int64_t opset);

/// Infers the types of `copy` (a StructuralCopy) in place. Returns "" or why inference failed or was not
/// run.
std::string InferShapes(onnx::ModelProto& copy);

/// InferShapes's verdict on `model` itself, without a StructuralCopy (which takes as much memory as the
/// graph): inference runs on `model` and what it wrote there — the types it merged into every graph's
/// inputs, outputs and value infos, the value infos it appended — is put back as it was, so `model` ends
/// with the same contents (the same bytes). Only for a verdict: the inferred types are not kept. No other
/// thread may read `model` while it runs.
std::string InferShapesInPlace(onnx::ModelProto& model);

}  // namespace rnnstate
