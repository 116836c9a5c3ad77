#pragma once
/// \file
/// Internal: where TensorProtos live in an ONNX model — the one table of message fields (onnx 1.12,
/// onnx.proto) on the paths from ModelProto to every TensorProto, and a walk over a parsed model driven by
/// that table. The wire-level reader (wire_splice) follows the same table over serialized bytes, so the
/// tensors whose payloads it can defer are exactly the tensors ForEachTensor visits, and external data
/// checks see every tensor: graph initializers, sparse initializers, node attributes (`t`, `tensors`,
/// `sparse_tensor`, `sparse_tensors`), nested graphs, function bodies and training info.

#include <google/protobuf/descriptor.h>
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace rnnstate::places {

/// The message types on a path from ModelProto to a TensorProto.
enum class Msg { kModel, kTrainingInfo, kGraph, kFunction, kNode, kAttribute, kSparseTensor, kTensor };

/// Field `field` of a `parent` message holds `child` messages (repeated or not).
struct Edge {
  Msg parent;
  uint32_t field;
  Msg child;
};

/// Every field on a path to a TensorProto. Every other field holds no tensor.
inline constexpr Edge kTensorPaths[] = {
    {Msg::kModel, 7, Msg::kGraph},              // ModelProto.graph
    {Msg::kModel, 20, Msg::kTrainingInfo},      // ModelProto.training_info
    {Msg::kModel, 25, Msg::kFunction},          // ModelProto.functions
    {Msg::kTrainingInfo, 1, Msg::kGraph},       // TrainingInfoProto.initialization
    {Msg::kTrainingInfo, 2, Msg::kGraph},       // TrainingInfoProto.algorithm
    {Msg::kGraph, 1, Msg::kNode},               // GraphProto.node
    {Msg::kGraph, 5, Msg::kTensor},             // GraphProto.initializer
    {Msg::kGraph, 15, Msg::kSparseTensor},      // GraphProto.sparse_initializer
    {Msg::kFunction, 7, Msg::kNode},            // FunctionProto.node
    {Msg::kNode, 5, Msg::kAttribute},           // NodeProto.attribute
    {Msg::kAttribute, 5, Msg::kTensor},         // AttributeProto.t
    {Msg::kAttribute, 6, Msg::kGraph},          // AttributeProto.g
    {Msg::kAttribute, 10, Msg::kTensor},        // AttributeProto.tensors
    {Msg::kAttribute, 11, Msg::kGraph},         // AttributeProto.graphs
    {Msg::kAttribute, 22, Msg::kSparseTensor},  // AttributeProto.sparse_tensor
    {Msg::kAttribute, 23, Msg::kSparseTensor},  // AttributeProto.sparse_tensors
    {Msg::kSparseTensor, 1, Msg::kTensor},      // SparseTensorProto.values
    {Msg::kSparseTensor, 2, Msg::kTensor},      // SparseTensorProto.indices
};

/// The message type held by field `field` of a `parent`, if it is on a path to a TensorProto.
std::optional<Msg> ChildMessage(Msg parent, uint32_t field);

/// The protobuf descriptor of `kind` (onnx::ModelProto's for kModel, ...).
const google::protobuf::Descriptor* DescriptorOf(Msg kind);

/// Where a tensor was found: the fields from the ModelProto down to it.
class TensorPath {
 public:
  /// The path as text, e.g. `functions[0].node[2].attribute[0].t` or `graph.initializer[3]`.
  std::string ToString() const;

 private:
  friend class TensorWalk;
  struct Step {
    const google::protobuf::FieldDescriptor* field;
    int index;  ///< -1 for a singular field
  };
  std::vector<Step> steps_;
};

/// Called for each tensor with the path that leads to it.
using TensorVisitor = std::function<void(const onnx::TensorProto& tensor, const TensorPath& path)>;

/// Visits every TensorProto of `model` on the paths of kTensorPaths, depth first, in field order of the
/// table (parents before the tensors nested in their subgraphs).
void ForEachTensor(const onnx::ModelProto& model, const TensorVisitor& visit);

}  // namespace rnnstate::places
