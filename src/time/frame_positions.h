#pragma once
/// \file
/// The frames' own positions within a call, and the Gather that picks every frame by them: how PyTorch
/// exports `nn.Unfold` with a kernel of one frame on time (GTCRN's subband feature extraction unfolds
/// over frequency only):
///
///   t   = Gather(Shape(v), 2)                 the chunk's length, read from frames v (time on axis 2)
///   pos = Range(0, t, 1)                      positions 0 .. t-1: restart in every chunk
///   idx = Add(Unsqueeze(pos, [0]), [[0]])     the kernel's one offset, 0
///   g   = Gather(Pad(v, frequency only), idx, axis = 2)
///                                             every frame of v once, in order: the frames again
///
/// The positions themselves are no frames a chunk reproduces (TimeFact::positions carries a break); only
/// views, additions of zeros and such a Gather read them. Anything else that computes with them — an
/// offset, a step, a table indexed by them, a Gather of frames of another length — is mixed.

#include <optional>

#include "time/time_rules.h"

namespace rnnstate {

/// `Range(0, t, 1)` where `t` is the chunk's length read from the shape of a value of this graph: the
/// frames' positions (axis 0), counting that value's frames. nullopt for any other Range (another start or
/// step, a length of another axis), which the caller judges as before.
std::optional<TimeFact> RangePositions(const NodeTime& n);

/// True when `n` adds zeros to its input `slot` (`Add(x, 0)`, `Add(0, x)`, `Sub(x, 0)`): a constant of
/// zeros of any shape as the other operand. Such an addition keeps a length or positions as they are.
bool AddsZeros(const NodeTime& n, int slot);

/// For a node that reads positions: a mixed fact when it is not one that keeps them (Identity, Squeeze,
/// Unsqueeze, an addition of zeros) nor a Gather taking them as indices; nullopt when the usual rules
/// apply (those keep the positions flag as they move the axis). nullopt too when no input is positions.
std::optional<TimeFact> PositionsGate(const NodeTime& n);

/// A Gather whose indices are positions (PositionsGate let it through): the frames of its data again, time
/// where the indices hold it, when the data's time axis is the gathered one and its frames are those the
/// positions count (the value they were read from, or it through operators that keep every frame: an
/// elementwise one, a Pad that pads other axes only). Mixed otherwise.
TimeFact GatherByPositions(const NodeTime& n);

}  // namespace rnnstate
