#pragma once
/// \file
/// States a model's authors already stream through their own tensors. A state is
/// exposed when its initial value is read from a region of a graph input and its final value is written
/// to the same region of a graph output (exposure.h proves both, element by element): feeding that
/// output back as that input then streams it. PyTorch's `(h0, c0)` export (rows of `h0` and `h_n`) is one
/// such form; h and c packed in one tensor, several layers on several axes, caches updated with
/// ScatterND, and states read inside If branches from outer scope are others.

#include <optional>
#include <string>
#include <vector>

#include "exposure/boxed_optional.h"
#include "exposure/branch_facts.h"
#include "exposure/exposure.h"
#include "graph/model_index.h"
#include "rnnstate/metadata.h"
#include "states/recurrent_state.h"
#include "states/state_origin.h"

namespace rnnstate {

/// Where an exposed state lives: the same region of a graph input and a graph output.
struct Exposure {
  std::string input;
  std::string output;
  std::vector<RegionAxis> region;
  std::vector<std::string> axes;  ///< the state axis each kept axis of the region is
  std::optional<RowRange> rows;   ///< the rows form (axis 0, the rest whole), kept for older readers
  ElementMap map;                 ///< the element map the region stands for (on the tensor itself)
  /// Set when the region is on a view of the tensors (a strided state, see strided_view.h): its shape.
  std::vector<MetaDim> view;
  std::vector<MetaDim> shape;  ///< the shape of `input`, which the view splits
  /// Set for the state of an If branch that runs only when the fed state is empty (the authors' "empty
  /// means start from zeros"): it reads no input, but writes where the state it stands in for reads.
  std::string default_path_of;
};

/// What was found about a state's exposure: the exposures it could have, or why there is none (for
/// reports). Held by every state of the analysis, and empty for most: its rare parts are kept small.
struct ExposureFinding {
  std::vector<Exposure> candidates;  ///< one per graph output the final value lands in as it was read; the
                                     ///< first is the exposure, unless another state's votes choose one
  std::string why_not;               ///< "" when exposed or when nothing was read from a graph input
  std::string read;                  ///< where the initial value is read from, as text ("" when not from an input)
  std::string written;               ///< where the final value is written, as text ("" when nowhere whole)
  std::vector<ElementPlace> writes;  ///< every graph output that holds the final value whole
  BoxedOptional<ElementPlace> read_place;  ///< the graph input the initial value is read from whole
  std::vector<RegionAxis> read_region;     ///< its region there (empty when not one box)
  std::vector<MetaDim> read_view;          ///< the view `read_region` is on (empty: the tensor itself)
};

/// Finds the exposure of `state` at `site` (only a site on the owner itself; a state a loop carries is
/// the loop's).
ExposureFinding FindExposure(const ModelIndex& index, const RecurrentState& state, const StateSite& site,
                             const BranchFacts* facts = nullptr);

/// True when the two states cannot run in the same call: their owners sit in different branches of one If.
bool Exclusive(const RecurrentState& a, const RecurrentState& b);

/// Why two exposures (of states that are not exclusive) cannot both hold.
enum class ClaimConflict {
  kNone,         ///< disjoint tensors, or disjoint regions of the same input and output
  kOverlapping,  ///< they share an input or output and their regions overlap (two states, one value)
  kCrossed,      ///< one input paired with two outputs, or the reverse (two values to feed one input)
};

/// No view: a region of the tensor itself.
inline const std::vector<MetaDim> kTensorItself{};

/// A state's claim on regions of an input and an output (on a view of them when `view` is not empty;
/// `shape` is theirs, needed only to compare regions on different views).
struct RegionClaim {
  const std::string& input;
  const std::string& output;
  const std::vector<RegionAxis>& region;
  const std::vector<MetaDim>& view = kTensorItself;
  const std::vector<MetaDim>& shape = kTensorItself;
};

/// The one rule for claims on the authors' tensors, used by the analysis (which drops conflicting
/// exposures) and by `check` (which reports conflicting recorded pairs).
ClaimConflict ClaimsConflict(const RegionClaim& a, const RegionClaim& b);

/// The claim of an exposure.
inline RegionClaim ClaimOf(const Exposure& e) { return RegionClaim{e.input, e.output, e.region, e.view, e.shape}; }

/// True when `pair` records exactly `exposure` (nullptr: none): the same input, output and region (or
/// rows) on the same view.
bool RecordsExposure(const StatePair& pair, const Exposure* exposure);

/// "region [0, :, :] of input 'state' -> region [0, :, :] of output 'stateN'"; a region of a view:
/// "region [0, 0:33, 0:8] of view [1,66,16] of input 'cache' -> ...".
std::string ExposureText(const Exposure& exposure);

/// The region of a recorded pair, from its `region` or its `rows` (rank of `rank`).
std::vector<RegionAxis> PairRegion(const StatePair& pair, size_t rank);

}  // namespace rnnstate
