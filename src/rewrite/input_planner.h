#pragma once
/// \file
/// For MakePlan: the input side of each state — which graph input feeds it, what it
/// declares, how its default reproduces the original model when it is not fed, and how a caller makes
/// its first feed (`init`: zeros, or the empty tensor meaning "the model's own default", the same
/// protocol in both modes: a non-zero default is always selected when the fed tensor is empty).

#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "exposure/branch_facts.h"
#include "find/analysis.h"
#include "find/axis_chain.h"
#include "graph/naming.h"
#include "rewrite/plan.h"

namespace rnnstate {

/// Decides input sides, one state at a time; shares broadcast shape computations between the states
/// whose defaults have the same shape expression (the same batch, read from one value, and the same other
/// dims): an owner's h and c, and every owner whose batch has the same AxisChainRoots root.
class InputPlanner {
 public:
  InputPlanner(const ModelIndex& index, const PlanOptions& options, NameAllocator& names, Plan& plan);

  /// The input side of a state that is not exposed yet: the graph input already feeding it, or a new
  /// input (named by `edit.input` when it is set here) with its default. `batch` is the state's batch as
  /// the data inputs name it, `stem` the owner's stem for helper names. Returns a skip reason or "".
  std::string PlanUnexposed(const StateAnalysis& analyzed, const Dim& batch, const std::string& stem,
                            const std::string& new_input, StateEdit& edit);

  /// The input side of an exposed state (`edit.input` set): kept as it is, except that a non-zero
  /// default moves behind a selection and required mode drops a default. `edit.batch_axis` is the input
  /// tensor's own batch axis.
  void PlanExposed(StateEdit& edit);

  /// The If branches that cannot run (BranchFacts), found on first use: batch traces follow an If's
  /// output into the branches that can.
  const BranchFacts& Facts();

 private:
  std::string PlanInitializerDefault(const StateAnalysis& analyzed, StateEdit& edit, NewInput& input);
  /// A batch name of the owner's own, unused in the model: one per owner (its h and c share it), for a batch
  /// no data input names or a fixed batch declared symbolic.
  std::string UnknownBatchName(const RecurrentState& state);
  std::string PlanZeroDefault(const StateAnalysis& analyzed, StateEdit& edit, NewInput& input);
  /// The default is the original computation, selected when the input is fed empty. The first feed is
  /// zeros when that computation is provably zeros (`original_is_zeros`), else empty.
  std::string PlanSelectOriginal(const RecurrentState& state, StateEdit& edit, NewInput& input, bool original_is_zeros);
  SelectOriginalDefault SelectNames(const std::string& input, const std::vector<int64_t>& empty_dims);
  /// The index in the plan's broadcasts of the shape computation for `state`'s default, made when no
  /// earlier state's has its shape expression; its anchor moves before `site` when that comes first.
  int BroadcastFor(const RecurrentState& state, const StateSite& site, const std::string& stem);
  /// The value whose batch the defaults sharing `state`'s read: its X's AxisChainRoots root, or the
  /// data input traced when X is computed in If branches.
  AxisRoot BatchRead(const RecurrentState& state);
  std::string ScanStateProblem(const StateAnalysis& analyzed, const StateEdit& edit) const;

  const ModelIndex& index_;
  const PlanOptions& options_;
  NameAllocator& names_;
  NameAllocator dim_names_;  // dim_param names of symbolic batches this plan declares
  Plan& plan_;
  std::map<std::pair<GraphPath, int>, std::string> batch_params_;  // per owner: its states share one
  /// One broadcast per shape expression: (the graph of the value its batch is read from, that value, its
  /// axis, the batch's position in the state, the other dims) -> index in the plan's broadcasts.
  std::map<std::tuple<GraphPath, std::string, int64_t, int, std::vector<int64_t>>, int> broadcasts_;
  std::vector<std::pair<GraphPath, int>> broadcast_owners_;  // per broadcast: the owner that made it
  AxisChainRoots batch_roots_;
  std::string stem_;  // the owner's stem, for the names of its broadcast nodes
  std::optional<BranchFacts> facts_;
};

/// The shape a state input declares: the state's shape with its batch as the data names it (`batch`),
/// or `unknown_batch` when nothing is known.
std::vector<Dim> DeclaredShape(const RecurrentState& state, const Dim& batch, const std::string& unknown_batch);

}  // namespace rnnstate
