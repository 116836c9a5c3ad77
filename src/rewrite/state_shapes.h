#pragma once
/// \file
/// The shapes a state's plan records and feeds: what is fed as a state input, the shape its pair records,
/// and which axis of the authors' own tensor holds the state's batch (moved unchanged from planner.cc).

#include <cstdint>
#include <string>
#include <vector>

#include "graph/dim.h"
#include "rnnstate/metadata.h"
#include "states/recurrent_state.h"

namespace rnnstate {

/// The shape of what is fed: the declared one, except that a state without a batch axis declares
/// axis 0 symbolic (so that an empty feed selects its original value) but is fed at its own size.
std::vector<Dim> FedShape(const std::vector<Dim>& declared, const RecurrentState& state);

/// The shape of the tensor fed as a state input, for metadata: the declared shape with the batch as the
/// data inputs name it (a fixed batch stays a number although an input fed empty declares it symbolic).
std::vector<MetaDim> DataShape(const std::vector<Dim>& declared, int64_t batch_axis, const Dim& batch);

/// The axis of the authors' tensor that holds the state's batch: the kept axis whose state axis it is.
/// A region on a view (of a tensor of shape `shape`) has it only where that view axis is a whole axis of
/// the tensor: a part of a split axis (a strided batch) is none.
int64_t TensorBatchAxis(const RecurrentState& state, const std::vector<RegionAxis>& region,
                        const std::vector<std::string>& axes, const std::vector<MetaDim>& view,
                        const std::vector<MetaDim>& shape);

}  // namespace rnnstate
