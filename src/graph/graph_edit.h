#pragma once
/// \file
/// Stateless primitives that build and edit ONNX protos: nodes, constants, attributes, value infos, zero
/// tensors, and the graph edits every mutating stage (apply, time axis, layout, packing) makes. They never
/// allocate names: callers pass names their NameAllocator handed out.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "graph/dim.h"
#include "rnnstate/metadata.h"

namespace rnnstate {

/// A node `op(inputs) -> outputs`, named after its first output.
onnx::NodeProto MakeNode(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs);

/// A Constant node `output` holding `value` (whose own name is dropped: a Constant's tensor is unnamed).
onnx::NodeProto TensorConstantNode(const std::string& output, onnx::TensorProto value);

/// An INT64 tensor named `name` holding `values` (one axis of their count, or a scalar).
onnx::TensorProto Int64Tensor(const std::string& name, const std::vector<int64_t>& values, bool scalar = false);

/// A Constant node `output` holding int64 `values`, 1-D (or a scalar when `scalar` and one value).
onnx::NodeProto Int64ConstantNode(const std::string& output, const std::vector<int64_t>& values, bool scalar = false);

/// Adds an INT / INTS / GRAPH attribute to `node`.
void SetIntAttribute(onnx::NodeProto& node, const std::string& name, int64_t value);
void SetIntsAttribute(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& values);
void SetGraphAttribute(onnx::NodeProto& node, const std::string& name, onnx::GraphProto graph);

/// Zeros of `elem_type` with `dims` (a 0 dim gives an empty tensor), as raw data. Error(kUnsupported)
/// when rnnstate cannot make zeros of that element type (see DenseTensorBytes).
onnx::TensorProto ZeroTensor(const std::string& name, int32_t elem_type, const std::vector<int64_t>& dims);

/// A tensor ValueInfo of `elem_type` and `shape` (a dim neither fixed nor named is an unknown dim).
onnx::ValueInfoProto TensorInfo(const std::string& name, int32_t elem_type, const std::vector<Dim>& shape);
onnx::ValueInfoProto TensorInfo(const std::string& name, int32_t elem_type, const std::vector<MetaDim>& shape);
/// Makes `info` what TensorInfo returns, in place: on the model's arena where `info` is one of its values (a
/// message built on the heap and moved into an arena is copied; at 10,000 LSTMs 40,000 inputs and outputs).
void SetTensorInfo(onnx::ValueInfoProto& info, const std::string& name, int32_t elem_type,
                   const std::vector<Dim>& shape);
void SetTensorInfo(onnx::ValueInfoProto& info, const std::string& name, int32_t elem_type,
                   const std::vector<MetaDim>& shape);

/// A Sequence<Tensor<elem_type>> ValueInfo.
onnx::ValueInfoProto SequenceInfo(const std::string& name, int32_t elem_type);

/// A tensor ValueInfo of known rank whose dims are all unknown (If branch outputs whose size differs).
onnx::ValueInfoProto RankOnlyInfo(const std::string& name, int32_t elem_type, size_t rank);

/// Renames every read of `from` in `graph` and in its subgraphs to `to`; a subgraph output that is the
/// outer name itself reads it too, and is renamed.
void RenameReads(onnx::GraphProto& graph, const std::string& from, const std::string& to);

/// Renames the reads of `from` by one node to `to`: its inputs, and every read in its subgraphs (as
/// RenameReads does in a graph).
void RenameNodeReads(onnx::NodeProto& node, const std::string& from, const std::string& to);

/// Removes the graph input, output or initializer named `name` (if any).
void RemoveGraphInput(onnx::GraphProto& graph, const std::string& name);
void RemoveGraphOutput(onnx::GraphProto& graph, const std::string& name);
void RemoveInitializer(onnx::GraphProto& graph, const std::string& name);

/// The initializer named `name` in `graph`, or nullptr.
onnx::TensorProto* FindInitializer(onnx::GraphProto& graph, const std::string& name);
const onnx::TensorProto* FindInitializer(const onnx::GraphProto& graph, const std::string& name);

/// True when `graph` has an output named `name`.
bool HasGraphOutput(const onnx::GraphProto& graph, const std::string& name);

/// IR 3 requires every main-graph initializer to be a graph input as well; IR 4 drops that rule and
/// changes nothing else. For a model of IR < 4 with an initializer that is no graph input (one the model
/// came with, as ONNX Runtime's IR 3 test models have, or a default moved to `NAME.default`), raises the
/// IR version to 4 instead of declaring it: an initializer declared as an input is an input a runtime
/// lets the caller override (weights, for one), which the rewrite must not add to the interface. Nothing
/// for IR >= 4 or when every initializer is an input.
void RaiseIrForUndeclaredInitializers(onnx::ModelProto& model);

/// Takes every node out of `graph`'s node list, in order, without copying: a rebuild of the list puts
/// each one back with `UnsafeArenaAddAllocated` on the same list (so a node on the model's arena stays
/// on it; `ReleaseLast` would copy every node off the arena).
std::vector<onnx::NodeProto*> ReleaseNodes(onnx::GraphProto& graph);

/// Puts `before` at the front of `graph`'s node list and `after` at its end, in order, moving (not
/// copying) the nodes already there.
void SurroundNodes(onnx::GraphProto& graph, std::vector<onnx::NodeProto> before, std::vector<onnx::NodeProto> after);

/// Puts each `before[k]` right in front of node k of `graph` (k = node count: at the end), in order, moving
/// (not copying) the nodes already there.
void InsertNodesBefore(onnx::GraphProto& graph, std::map<int, std::vector<onnx::NodeProto>> before);

}  // namespace rnnstate
