#pragma once
/// \file
/// Small read helpers over ONNX protos that several stages need: node attributes, the state variables
/// of a Scan, and the names a subgraph reads from enclosing scopes.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <set>
#include <string>

namespace rnnstate {

/// Scan-9 dropped Scan-8's batch axis and its leading sequence_lens input.
inline constexpr int64_t kScanWithoutBatchOpset = 9;

/// The attribute `name` of `node`, or nullptr.
const onnx::AttributeProto* FindAttribute(const onnx::NodeProto& node, const std::string& name);

/// The integer attribute `name`, or `fallback` when absent.
int64_t IntAttribute(const onnx::NodeProto& node, const std::string& name, int64_t fallback);

/// The GRAPH attribute `name`, or nullptr when absent or of another type.
const onnx::GraphProto* GraphAttribute(const onnx::NodeProto& node, const std::string& name);
onnx::GraphProto* GraphAttribute(onnx::NodeProto& node, const std::string& name);

/// The number of state variables of a Scan-9+ node: its inputs before the `num_scan_inputs` scan inputs.
int ScanStateCount(const onnx::NodeProto& scan);

/// Names `graph` reads without defining them (its outer-scope references), including those of its own
/// subgraphs that it does not define either.
std::set<std::string> FreeNames(const onnx::GraphProto& graph);

/// The outer-scope names read by the subgraphs of `node` (empty for a node without subgraphs).
std::set<std::string> SubgraphReferences(const onnx::NodeProto& node);

}  // namespace rnnstate
