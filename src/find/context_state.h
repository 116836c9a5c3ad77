#pragma once
/// \file
/// Context states the metadata records (kind "context", see ContextSpec), recognized in the graph. A
/// context state carries the last N frames of a value from one call to the next; its wiring is
///
///   ctx_in ──[Expand(target): the zero default's broadcast]──> Concat(axis)(·, value) ──> readers of value
///                                                                     └──Slice(starts -N, ends ∞, axes axis)──> ctx_out
///
/// (ctx_in and ctx_out are graph inputs and outputs, or values inside the graph where --pack made them
/// members of a packed value). The record holds when the Concat the pair names joins something computed
/// from its input in front of its value along its axis, and its output is computed from the last N frames
/// of that Concat; a context with a `pad` mode (ContextSpec::pad) is read by a Pad in that mode whose amounts
/// the graph computes (time/pad_fill.h). Pure analysis: rewrite keeps the pairs that hold, check reports those that do not.

#include <string>
#include <vector>

#include "graph/model_index.h"
#include "rnnstate/check_problem.h"
#include "rnnstate/metadata.h"

namespace rnnstate {

/// One recorded context pair, judged against the graph.
struct ContextFinding {
  size_t pair = 0;  ///< index into the recorded pairs
  int concat = -1;  ///< main-graph index of the Concat the pair names (-1: none)
  /// A context with a `pad` mode: main-graph index of the Pad in that mode that reads the Concat and pads
  /// what the context lacks (-1: none).
  int fill_pad = -1;
  /// Why the record does not hold ("" when it does), and the kind of problem check reports for it.
  std::string problem;
  CheckProblem::Kind problem_kind = CheckProblem::Kind::kInputNotWired;

  bool holds() const { return problem.empty(); }
};

/// Judges every recorded pair of kind "context" (in order); other pairs are not looked at.
std::vector<ContextFinding> FindContextStates(const ModelIndex& index, const std::vector<StatePair>& recorded);

/// The Slice node of the main graph that takes the last `frames` frames along `axis` of `value` (see the
/// file comment), or -1.
int LastFramesSlice(const ModelIndex& index, const std::string& value, int64_t axis, int64_t frames);

}  // namespace rnnstate
