#pragma once
/// \file
/// Internal to the exposure walks: one step of the write walk (exposure_write.cc) — what a view operator
/// does to a state's elements on the way from one of its inputs to one of its outputs, and what it does
/// to the shape of the value holding them. Every axis, index and size taken from the model is checked.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

#include "graph/model_index.h"
#include "values/element_map.h"

namespace rnnstate {

/// The state's elements in a value the write walk reached.
struct Holding {
  ElementMap map;
  std::vector<int32_t> types;  ///< element types on the way (Casts), for the lossless check
  SymShape shape;              ///< the value's shape, as far as the walk knows it (inference may not)
};

/// Where a step took the state.
struct ForwardStep {
  int output = -1;    ///< the node's output that holds the state, or -1
  std::string why;    ///< for -1: what the node does instead (" overwrites it"), "" when it is no view at all
  bool weak = false;  ///< the node is a view, but of other elements (a Gather of another index)
};

/// Moves `at` from `node`'s input `slot` to one of its outputs (graph at `path`).
ForwardStep StepForward(const ModelIndex& index, const GraphPath& path, const onnx::NodeProto& node, int slot,
                        Holding& at);

}  // namespace rnnstate
