#pragma once
/// \file
/// Where the elements of a state lie in another tensor. A state of shape [D, B, H] read
/// from (or written into) a tensor T through view-like operators — Slice, Gather with constant indices,
/// Squeeze, Unsqueeze, Transpose, Reshape, Concat, Split — sits at an affine map: the element at state
/// index s is T's element at t, with t_j = offset_j + sum_a coef_j,a * s_a. Two maps that are equal put
/// every element of the state at the same place; that is how an exposure is proven.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rnnstate {

/// A symbolic dimension: a size, or a name (a dim_param: the same name is the same size), or unknown.
struct SymDim {
  int64_t value = -1;  ///< >= 0 when fixed
  std::string name;    ///< the dim_param when not fixed; "" when unknown
  bool fixed() const { return value >= 0; }
  bool known() const { return fixed() || !name.empty(); }
  bool operator==(const SymDim& o) const { return value == o.value && name == o.name; }
};
using SymShape = std::vector<SymDim>;

/// An affine map from the indices of a state (its axes have sizes `state`) to the indices of a tensor.
/// Every operation takes axes and sizes that come from a model: one that names an axis the map does not
/// have, or whose arithmetic would overflow, returns false (nullopt) and leaves the map unchanged.
class ElementMap {
 public:
  /// The identity of a tensor of the state's own shape.
  static ElementMap Identity(const SymShape& state);

  size_t rank() const { return offset_.size(); }
  const SymShape& state() const { return state_; }
  /// The offset and coefficients of tensor axis `axis` (< rank(); std::out_of_range otherwise).
  int64_t offset(size_t axis) const { return offset_.at(axis); }
  int64_t coef(size_t axis, size_t state_axis) const { return coef_.at(axis).at(state_axis); }
  /// True when tensor axis `axis` is the same index for every state element (false for no such axis).
  bool IsConstant(size_t axis) const;
  /// The state axes (of size other than 1) axis `axis` varies with (empty for no such axis).
  std::vector<size_t> Varying(size_t axis) const;

  /// A new axis at `position` (<= rank()) that is always 0 (an Unsqueeze forwards, a Squeeze backwards).
  [[nodiscard]] bool InsertUnit(size_t position);
  /// A new axis at `position` (<= rank()) fixed at `index` (a Gather with a scalar index, backwards).
  [[nodiscard]] bool InsertFixed(size_t position, int64_t index);
  /// Removes axis `position`; false when it is not always 0 (then the map is unchanged).
  [[nodiscard]] bool RemoveUnit(size_t position);
  /// Removes axis `position` when it is always `index` (a Gather forwards); false otherwise.
  [[nodiscard]] bool RemoveFixed(size_t position, int64_t index);
  /// Axis i of the result is axis perm[i] of this map (a Transpose forwards); false when one is no axis.
  [[nodiscard]] bool Permute(const std::vector<int64_t>& perm);
  /// t_axis becomes start + step * t_axis (a Slice, backwards).
  [[nodiscard]] bool Scale(size_t axis, int64_t step, int64_t start);
  /// The smallest and largest index of axis `axis` over the state, or nullopt when a varying state axis
  /// has no fixed size (or there is no such axis, or the index does not fit in 64 bits).
  std::optional<std::pair<int64_t, int64_t>> Range(size_t axis) const;
  /// Replaces axes [first, first + sizes.size()) by one axis, row-major (a Reshape merging them).
  [[nodiscard]] bool Merge(size_t first, const std::vector<int64_t>& sizes);
  /// Replaces axis `axis` by axes of `sizes`, row-major (a Reshape splitting it); false when an index
  /// cannot be written as an affine map of the state's indices (it would wrap).
  [[nodiscard]] bool Split(size_t axis, const std::vector<int64_t>& sizes);
  /// True when distinct state elements land on distinct tensor elements.
  bool Injective() const;

  /// True when both maps put every state element at the same tensor element (the coefficients of state
  /// axes of size 1 do not matter: their index is always 0).
  bool SamePlaces(const ElementMap& o) const;

 private:
  SymShape state_;
  std::vector<int64_t> offset_;
  std::vector<std::vector<int64_t>> coef_;
};

}  // namespace rnnstate
