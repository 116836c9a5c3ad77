#pragma once
/// \file
/// The authors' own "empty means start from the default" protocol. Streaming models
/// such as Silero VAD keep two copies of their recurrent layers in the branches of an If on the state
/// input's size: one reads the fed state, the other starts from zeros when the fed state is empty. This
/// unit decides, by evaluating the If's condition on the input's shape, which branch runs for an empty
/// state and which for a fed one.

#include <map>
#include <string>

#include "graph/model_index.h"

namespace rnnstate {

/// True when the If at node `node` of the graph at `path` takes branch `branch` when the state inputs
/// (main-graph input -> its batch axis) are empty (size 0 on the batch axis, or on a fixed axis the
/// condition tests: PyTorch's `len(state)`), and the other branch when every dynamic axis holds 1 or 2:
/// its condition depends only on their shapes and constants.
bool RunsOnlyWhenEmpty(const ModelIndex& index, const GraphPath& path, int node, const std::string& branch,
                       const std::map<std::string, size_t>& state_inputs);

}  // namespace rnnstate
