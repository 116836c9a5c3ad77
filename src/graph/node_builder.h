#pragma once
/// \file
/// Nodes for the stages after the state rewrite (layout, packing), in the form the model's ai.onnx opset
/// defines: `axes` of Squeeze/Unsqueeze and `split` of Split are attributes before opset 13 and inputs from
/// it on. Helper values get names from the stage's NameAllocator, so that nothing collides in any scope.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "graph/graph_edit.h"
#include "graph/naming.h"
#include "rnnstate/metadata.h"

namespace rnnstate {

/// The ai.onnx opset that introduced Expand (the zero defaults broadcast with it need this or newer).
inline constexpr int64_t kExpandOpset = 8;

/// Every value, node and graph name used anywhere in `model` (all scopes), plus its dim_param names.
std::set<std::string> ModelNames(const onnx::ModelProto& model);

/// The node names `model` uses anywhere (all scopes).
std::set<std::string> ModelNodeNames(const onnx::ModelProto& model);

/// The dim_param names `model` uses anywhere.
std::set<std::string> ModelDimParams(const onnx::ModelProto& model);

/// True when ai.onnx `opset` has a ConstantOfShape that makes tensors of `elem_type` (numbers and bool from
/// opset 9, bfloat16 from opset 20).
bool ConstantOfShapeTakes(int32_t elem_type, int64_t opset);

/// Builds nodes into one list, each named after its first output (made unique among node names).
class NodeBuilder {
 public:
  /// `names` hands out value names, `node_names` node names (ONNX Runtime wants them unique).
  NodeBuilder(int64_t opset, NameAllocator& names, NameAllocator& node_names)
      : opset_(opset), names_(names), node_names_(node_names) {}

  /// A fresh name based on `wanted` (see NameAllocator).
  std::string Name(const std::string& wanted) { return names_.Allocate(wanted); }

  /// Appends a node `op(inputs) -> outputs` and returns it (for attributes).
  onnx::NodeProto& Add(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs);

  /// A Constant holding int64 `values` (1-D, or a scalar).
  void Int64Constant(const std::string& output, const std::vector<int64_t>& values, bool scalar = false);
  /// A Constant holding a tensor.
  void TensorConstant(const std::string& output, onnx::TensorProto value);

  /// Zeros of `elem_type` in the shape the 1-D int64 value `shape` holds, by a ConstantOfShape: nothing of
  /// their size is stored in the model (needs ConstantOfShapeTakes).
  void ZerosOfShape(const std::string& shape, int32_t elem_type, const std::string& output);

  void Squeeze(const std::string& input, const std::vector<int64_t>& axes, const std::string& output);
  void Unsqueeze(const std::string& input, const std::vector<int64_t>& axes, const std::string& output);
  /// Split on `axis` into parts of `sizes`.
  void Split(const std::string& input, int64_t axis, const std::vector<int64_t>& sizes,
             const std::vector<std::string>& outputs);
  /// Reshape to `shape` (0 copies the input's dimension).
  void Reshape(const std::string& input, const std::vector<int64_t>& shape, const std::string& output);
  void Transpose(const std::string& input, const std::vector<int64_t>& perm, const std::string& output);
  void Concat(const std::vector<std::string>& inputs, int64_t axis, const std::string& output);

  /// The nodes built so far (moved out).
  std::vector<onnx::NodeProto> Take() { return std::move(nodes_); }
  int64_t opset() const { return opset_; }

 private:
  /// Appends `node`, renamed to a name unique among node names.
  void Push(onnx::NodeProto node);
  /// `axes` as an attribute (before opset 13) or a Constant input.
  void AddAxes(onnx::NodeProto& node, const std::string& stem, const std::vector<int64_t>& axes);

  int64_t opset_;
  NameAllocator& names_;
  NameAllocator& node_names_;
  std::vector<onnx::NodeProto> nodes_;
};

}  // namespace rnnstate
