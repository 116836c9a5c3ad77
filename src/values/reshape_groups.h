#pragma once
/// \file
/// How a Reshape relates its input's axes to its output's, proven from the two shapes (sizes and
/// dim_param names): which consecutive axes of one side hold the same elements as which of the other.

#include <cstddef>
#include <optional>
#include <vector>

#include "values/element_map.h"

namespace rnnstate {

/// How a Reshape relates its input's axes to its output's: groups of consecutive axes with the same
/// number of elements. An empty side is a unit axis added or removed.
struct ReshapeGroup {
  std::vector<size_t> in;
  std::vector<size_t> out;
};

/// The groups of Reshape(input of shape `in`) to `target` (0 copies the input's dim, -1 is inferred);
/// nullopt when they cannot be proven (unknown sizes, or axes mixed across groups other than whole
/// static groups).
/// `resolved`, when given, receives the target with 0 and -1 resolved. One input dim of unknown size is
/// taken to be what the fixed target's element count leaves for it (a Reshape that runs keeps the count).
/// A target ending in -1 whose other axes the input's first axes (of known sizes) fill exactly puts every
/// input axis left in that last axis, whatever their sizes (`[B, C, 1, 3, T, F]` to `[B, 3C, -1]`).
std::optional<std::vector<ReshapeGroup>> ReshapeGroups(SymShape in, SymShape target, bool allow_zero,
                                                       SymShape* resolved = nullptr);

}  // namespace rnnstate
