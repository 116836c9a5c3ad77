#pragma once
/// \file
/// Small read helpers over ONNX protos that several stages need: node attributes, and the names a
/// subgraph reads from enclosing scopes.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace rnnstate {

/// `name` (a name or string read from a model) with every byte that is not printable ASCII as \xNN, for
/// messages that quote it: a NUL would cut the message short, a control byte would reach the terminal.
std::string Printable(const std::string& name);

/// Bytes per element of a type a state can have: the float types (FLOAT, DOUBLE, FLOAT16, BFLOAT16) of
/// recurrent operators, and the integer types and BOOL a loop may carry (an autoregressive decoder's
/// token); 0 for others (STRING, complex, 4-bit and 8-bit float types).
size_t StateElementSize(int32_t elem_type);

/// "FLOAT", "STRING", ...: the onnx::TensorProto_DataType name of `elem_type` ("data type N" for a value
/// the enum does not have).
std::string DataTypeName(int32_t elem_type);

/// "[1,batch,?]": a declared shape as messages quote it ("?" for a dim with neither a value nor a name).
std::string ShapeText(const onnx::TensorShapeProto& shape);

/// The size in bytes of a dense tensor of `elem_type` with `dims`, or nullopt when the element type is
/// not a state's (StateElementSize 0), a dim is negative, or the size does not fit in 64 bits.
std::optional<uint64_t> DenseTensorBytes(int32_t elem_type, const std::vector<int64_t>& dims);

/// True for the default ONNX operator domain ("" or "ai.onnx").
inline bool IsOnnxDomain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

/// The ai.onnx opset `model` imports (0 when none).
int64_t OnnxOpset(const onnx::ModelProto& model);

/// True when `node` is of the default ONNX domain and one of `ops`.
bool IsOnnxOp(const onnx::NodeProto& node, std::initializer_list<const char*> ops);

/// The attribute `name` of `node`, or nullptr.
const onnx::AttributeProto* FindAttribute(const onnx::NodeProto& node, const std::string& name);

/// The integer attribute `name`, or `fallback` when absent.
int64_t IntAttribute(const onnx::NodeProto& node, const std::string& name, int64_t fallback);

/// The string attribute `name`, or `fallback` when absent.
std::string StringAttribute(const onnx::NodeProto& node, const std::string& name, const std::string& fallback);

/// The GRAPH attribute `name`, or nullptr when absent or of another type.
const onnx::GraphProto* GraphAttribute(const onnx::NodeProto& node, const std::string& name);
onnx::GraphProto* GraphAttribute(onnx::NodeProto& node, const std::string& name);

/// Names `graph` reads without defining them (its outer-scope references), including those of its own
/// subgraphs that it does not define either.
std::set<std::string> FreeNames(const onnx::GraphProto& graph);

/// The outer-scope names read by the subgraphs of `node` (empty for a node without subgraphs).
std::set<std::string> SubgraphReferences(const onnx::NodeProto& node);

/// FreeNames and SubgraphReferences for many graphs of one model: each subgraph's free names are worked
/// out once, from those of its own subgraphs, so that a graph nested D levels deep is not walked again
/// for each of the D levels holding it. The graphs must not change while the cache is in use.
class OuterReferences {
 public:
  /// FreeNames(graph).
  const std::set<std::string>& Of(const onnx::GraphProto& graph);
  /// SubgraphReferences(node).
  std::set<std::string> OfNode(const onnx::NodeProto& node);

 private:
  std::unordered_map<const onnx::GraphProto*, std::set<std::string>> free_;
};

}  // namespace rnnstate
