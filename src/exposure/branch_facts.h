#pragma once
/// \file
/// Which branch an If takes in every call that succeeds, when its other branch cannot run. PyTorch
/// exports its "unbatched input" handling of an RNN as rank tests around the node's inputs:
///
///   c  = Not(Equal(Size(Shape(x)), 2))
///   x' = If(Cast(c))  then: Unsqueeze(x, [0])   else: Identity(x)
///   h0 = Unsqueeze(If(Cast(c)) then: Unsqueeze(Gather(state, 0), [0]) else: Gather(state, 0), [0])
///   LSTM(Unsqueeze(x', [0]), ..., h0)
///
/// X, initial_h and initial_c have the rank the operator fixes (3). A branch whose value would give the
/// node an input of another rank never runs in a call that succeeds (ONNX Runtime refuses the input), so
/// its If's condition is known — and so is every If that tests the same value (a Cast of it), such as
/// the Ifs that squeeze the node's finals back.

#include <map>
#include <string>
#include <utility>

#include "graph/model_index.h"

namespace rnnstate {

/// The conditions known from the ranks recurrent nodes require.
class BranchFacts {
 public:
  /// The facts of the model `index` indexes.
  static BranchFacts Find(const ModelIndex& index);

  /// True when `branch` of the If at node `node` of the graph at `path` cannot run in a call that
  /// succeeds.
  bool Excludes(const ModelIndex& index, const GraphPath& path, int node, const std::string& branch) const;

  /// The number of conditions known (for tests and reports).
  size_t size() const { return known_.size(); }

 private:
  /// A condition's value (Casts and Identities stripped) where it is defined -> its value in every call
  /// that succeeds.
  std::map<std::pair<GraphPath, std::string>, bool> known_;
};

}  // namespace rnnstate
