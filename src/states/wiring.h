#pragma once
/// \file
/// Whether one value is computed from another, across scopes: how `check` and the analysis verify that a
/// recorded state pair is really wired to its node.

#include <string>

#include "graph/graph_path.h"
#include "graph/model_index.h"
#include "states/recurrent_state.h"

namespace rnnstate {

/// A value in one graph of a model.
struct ValueRef {
  GraphPath graph;
  std::string name;
  bool operator<(const ValueRef& other) const {
    return graph < other.graph || (graph == other.graph && name < other.name);
  }
  bool operator==(const ValueRef& other) const { return graph == other.graph && name == other.name; }
};

/// True when `value` is `source` or is computed from it: walks producers backwards through nodes, from a
/// subgraph to its enclosing graphs (outer-scope names; Loop and Scan inputs, including loop-carried values
/// from the previous iteration) and from the outputs of Loop / Scan / If nodes into their subgraphs. The
/// walk does not continue through Shape and Size (their outputs carry no values of their input) nor
/// through recurrent operators (their outputs are new states, not their inputs carried along).
bool ComputedFrom(const ModelIndex& index, const ValueRef& value, const ValueRef& source);

/// How main-graph values `input` and `output` relate to a state.
struct PairWiring {
  bool input_reaches_slot = false;  ///< the owner's initial-state slot is computed from `input`
  bool output_from_final = false;   ///< `output` is computed from the owner's final-state slot
};

/// Traces a state pair to the owner's own slots (a Loop carrying the state is only a way through).
PairWiring TracePairWiring(const ModelIndex& index, const RecurrentState& state, const std::string& input,
                           const std::string& output);

}  // namespace rnnstate
