#pragma once
/// \file
/// Where a recorded state pair's `path` leads: the subgraph it names, for the metadata rules.

#include <onnx/onnx_pb.h>

#include <string>

#include "rnnstate/metadata.h"

namespace rnnstate {

/// The graph a pair's `path` leads to, or nullptr with `problem` set: each step names a node of the graph
/// before (by name, or an unnamed one by the label rnnstate gives it, NodeLabel) with that graph attribute;
/// `graph` must be the path's text. Old metadata (without the contract fields) may lack the path.
const onnx::GraphProto* ResolvePath(const onnx::ModelProto& model, const StatePair& pair, std::string* problem);

}  // namespace rnnstate
