#pragma once
/// \file
/// The shapes the view operators work with. Exporters compute Reshape and Expand
/// targets and ScatterND indices from Shape (PyTorch: `Concat([1], Slice(Shape(cache), 1))`); this
/// evaluates such small integer vectors symbolically — sizes and dim_param names — so that a mapping
/// through them can be proven.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "graph/model_index.h"
#include "values/element_map.h"

namespace rnnstate {

/// The declared or inferred shape of `name` seen from the graph at `path`; nullopt when unknown.
std::optional<SymShape> ShapeOf(const ModelIndex& index, const GraphPath& path, const std::string& name);

/// The value of a small integer tensor computed from constants and shapes (Constant, initializers,
/// Shape, Gather, Slice, Concat, Squeeze, Unsqueeze, Cast, Range, and integer Add, Sub, Mul, Div, Max,
/// Min of known values), flattened; nullopt when it is not such
/// a value.
std::optional<SymShape> ShapeValue(const ModelIndex& index, const GraphPath& path, const std::string& name);

/// The shape of `name` when it is ConstantOfShape(s) or Expand(v, s) (of v's rank), through Identity
/// and Cast, with a shape vector `s` that ShapeValue evaluates; nullopt otherwise. Exporters compute a
/// loop's initial zeros so (and rnnstate broadcasts a default so), and this shape is the computation's
/// own, where declarations can be stale (TorchScript declares a body's [batch, 5] state [seq, batch]).
/// An axis it cannot be sure of is unknown.
std::optional<SymShape> FilledShape(const ModelIndex& index, const GraphPath& path, const std::string& name);

/// The integer values of `name` when every element is known (see ShapeValue).
std::optional<std::vector<int64_t>> IntValues(const ModelIndex& index, const GraphPath& path, const std::string& name);

/// The value of the one-element boolean `name` when shapes and constants decide it: a constant, and Not,
/// And, Or, Cast, Identity, Squeeze and Unsqueeze of such values, and Equal, Less, Greater, LessOrEqual,
/// GreaterOrEqual of one-element integers IntValues knows (PyTorch's `Equal(Shape(x)[0], 1)` before
/// squeezing a batch of one); nullopt otherwise.
std::optional<bool> KnownCondition(const ModelIndex& index, const GraphPath& path, const std::string& name);

/// `a` with its unknown dims filled from `b` (same rank), or whichever is known.
SymShape MergeShapes(const std::optional<SymShape>& a, const std::optional<SymShape>& b);

}  // namespace rnnstate
