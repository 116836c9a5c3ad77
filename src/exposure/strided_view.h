#pragma once
/// \file
/// A strided state as a box of a view. A state whose elements lie in one axis of a tensor
/// with strides — `cache [1,1056]` holding a GRU's h [1,33,8] at `cache[0, 16*b + h]`, the flat caches of
/// speech enhancement models — is no box (region) of the tensor, but it is a box of the tensor's elements
/// seen, row-major, with that axis split by the strides: [0, 0:33, 0:8] of the view [1,66,16].
///
///     cache [1, 1056]  --split axis 1 by the strides 16, 1-->  view [1, 66, 16]
///     h[0, b, k] = cache[0, 16*b + k]                          h[0, b, k] = view[0, b, k]

#include <optional>

#include "values/element_map.h"

namespace rnnstate {

/// A view of a tensor (see ViewSplit in rnnstate/metadata.h) and a state's element map on it.
struct StridedView {
  SymShape shape;  ///< the view's shape: the tensor's, each split axis replaced by its parts
  ElementMap map;  ///< the state's elements on the view: coefficients 0 or 1
};

/// The view of a tensor of shape `shape` on which the injective `map` has only coefficients 0 and 1:
/// each tensor axis carrying state axes with coefficients c1 > c2 > ... > ck (each dividing the one
/// before, c1 dividing the axis size) is split into [size/c1, c1/c2, ..., ck] (the last part dropped when
/// ck is 1), its offset written in that mixed radix. nullopt when no axis needs a split (every axis
/// carries at most one state axis, with coefficient 1), or when one that needs it cannot be split so: its
/// size not fixed, a state axis on it whose size is not fixed, a negative coefficient, coefficients or a
/// size that do not divide, or a state whose offset and span would carry from one part into the next.
std::optional<StridedView> StridedViewOf(const ElementMap& map, const SymShape& shape);

}  // namespace rnnstate
