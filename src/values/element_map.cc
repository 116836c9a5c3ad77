#include "values/element_map.h"

#include <algorithm>
#include <cstdint>
#include <numeric>

namespace rnnstate {

namespace {

// Sizes, offsets and steps come from models: arithmetic on them is checked, never undefined.
bool Add(int64_t a, int64_t b, int64_t* out) { return !__builtin_add_overflow(a, b, out); }
bool Mul(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }

}  // namespace

ElementMap ElementMap::Identity(const SymShape& state) {
  ElementMap map;
  map.state_ = state;
  map.offset_.assign(state.size(), 0);
  map.coef_.assign(state.size(), std::vector<int64_t>(state.size(), 0));
  for (size_t a = 0; a < state.size(); ++a) map.coef_[a][a] = 1;
  return map;
}

bool ElementMap::IsConstant(size_t axis) const { return axis < rank() && Varying(axis).empty(); }

std::vector<size_t> ElementMap::Varying(size_t axis) const {
  std::vector<size_t> varying;
  if (axis >= rank()) return varying;
  for (size_t a = 0; a < state_.size(); ++a) {
    if (coef_[axis][a] != 0 && !(state_[a].fixed() && state_[a].value == 1)) varying.push_back(a);
  }
  return varying;
}

bool ElementMap::InsertUnit(size_t position) { return InsertFixed(position, 0); }

bool ElementMap::InsertFixed(size_t position, int64_t index) {
  if (position > rank()) return false;
  offset_.insert(offset_.begin() + static_cast<std::ptrdiff_t>(position), index);
  coef_.insert(coef_.begin() + static_cast<std::ptrdiff_t>(position), std::vector<int64_t>(state_.size(), 0));
  return true;
}

bool ElementMap::RemoveUnit(size_t position) { return RemoveFixed(position, 0); }

bool ElementMap::RemoveFixed(size_t position, int64_t index) {
  if (position >= rank() || !IsConstant(position) || offset_[position] != index) return false;
  // A unit state axis that mapped here is dropped with it (it has size 1: its index is always 0).
  offset_.erase(offset_.begin() + position);
  coef_.erase(coef_.begin() + position);
  return true;
}

bool ElementMap::Permute(const std::vector<int64_t>& perm) {
  for (int64_t p : perm) {
    if (p < 0 || static_cast<size_t>(p) >= rank()) return false;
  }
  std::vector<int64_t> offset;
  std::vector<std::vector<int64_t>> coef;
  for (int64_t p : perm) {
    offset.push_back(offset_[p]);
    coef.push_back(coef_[p]);
  }
  offset_ = std::move(offset);
  coef_ = std::move(coef);
  return true;
}

bool ElementMap::Scale(size_t axis, int64_t step, int64_t start) {
  if (axis >= rank()) return false;
  int64_t offset = 0;
  std::vector<int64_t> coef = coef_[axis];
  if (!Mul(step, offset_[axis], &offset) || !Add(start, offset, &offset)) return false;
  for (auto& c : coef) {
    if (!Mul(c, step, &c)) return false;
  }
  offset_[axis] = offset;
  coef_[axis] = std::move(coef);
  return true;
}

std::optional<std::pair<int64_t, int64_t>> ElementMap::Range(size_t axis) const {
  if (axis >= rank()) return std::nullopt;
  int64_t low = offset_[axis], high = offset_[axis];
  for (size_t a = 0; a < state_.size(); ++a) {
    const int64_t c = coef_[axis][a];
    if (c == 0) continue;
    if (!state_[a].fixed()) return std::nullopt;
    if (state_[a].value == 0) continue;  // an empty axis adds no index
    int64_t span = 0;
    if (!Mul(c, state_[a].value - 1, &span) || !Add(span < 0 ? low : high, span, span < 0 ? &low : &high)) {
      return std::nullopt;
    }
  }
  return std::make_pair(low, high);
}

bool ElementMap::Merge(size_t first, const std::vector<int64_t>& sizes) {
  if (sizes.empty() || first > rank() || sizes.size() > rank() - first) return false;
  // Only the outermost size may be unknown (-1): the others are the strides.
  for (size_t k = 1; k < sizes.size(); ++k) {
    if (sizes[k] <= 0) return false;
  }
  int64_t stride = 1;
  int64_t offset = 0;
  std::vector<int64_t> coef(state_.size(), 0);
  for (size_t k = sizes.size(); k-- > 0;) {
    int64_t term = 0;
    if (!Mul(stride, offset_[first + k], &term) || !Add(offset, term, &offset)) return false;
    for (size_t a = 0; a < state_.size(); ++a) {
      if (!Mul(stride, coef_[first + k][a], &term) || !Add(coef[a], term, &coef[a])) return false;
    }
    if (k > 0 && !Mul(stride, sizes[k], &stride)) return false;
  }
  offset_.erase(offset_.begin() + first, offset_.begin() + first + sizes.size());
  coef_.erase(coef_.begin() + first, coef_.begin() + first + sizes.size());
  offset_.insert(offset_.begin() + first, offset);
  coef_.insert(coef_.begin() + first, coef);
  return true;
}

bool ElementMap::Split(size_t axis, const std::vector<int64_t>& sizes) {
  // Digit k of the index, row-major: stride_k = product of the sizes after k. Each state axis's term
  // (and the offset) must fall into one digit without carrying into the next.
  const size_t n = sizes.size();
  if (axis >= rank() || n == 0) return false;
  // Only the outermost size may be unknown (-1): the others are the strides.
  for (size_t k = 1; k < n; ++k) {
    if (sizes[k] <= 0) return false;
  }
  std::vector<int64_t> stride(n, 1);
  for (size_t k = n - 1; k-- > 0;) {
    if (!Mul(stride[k + 1], sizes[k + 1], &stride[k])) return false;
  }
  std::vector<int64_t> offset(n, 0);
  std::vector<std::vector<int64_t>> coef(n, std::vector<int64_t>(state_.size(), 0));
  int64_t rest = offset_[axis];
  if (rest < 0) return false;
  for (size_t k = 0; k < n; ++k) {
    offset[k] = rest / stride[k];
    rest %= stride[k];
  }
  if (offset[0] >= sizes[0]) return false;
  std::vector<int64_t> highest(offset);  // the largest index each digit reaches
  for (size_t a = 0; a < state_.size(); ++a) {
    const int64_t c = coef_[axis][a];
    if (c == 0 || (state_[a].fixed() && state_[a].value == 1)) continue;
    size_t k = 0;
    while (k < n && (c % stride[k] != 0)) ++k;
    if (k == n || c < 0) return false;
    const int64_t digit = c / stride[k];
    if (!state_[a].fixed()) {
      // A dynamic axis can only be a whole digit of its own: coefficient 1 on a digit of unknown size.
      if (digit != 1 || offset[k] != 0 || sizes[k] >= 0) return false;
    } else {
      int64_t span = 0;
      if (!Mul(digit, std::max<int64_t>(state_[a].value - 1, 0), &span) || !Add(highest[k], span, &highest[k]))
        return false;
      if (sizes[k] >= 0 && highest[k] >= sizes[k]) return false;
    }
    coef[k][a] = digit;
  }
  offset_.erase(offset_.begin() + axis);
  coef_.erase(coef_.begin() + axis);
  offset_.insert(offset_.begin() + axis, offset.begin(), offset.end());
  coef_.insert(coef_.begin() + axis, coef.begin(), coef.end());
  return true;
}

bool ElementMap::SamePlaces(const ElementMap& o) const {
  if (offset_ != o.offset_ || state_.size() != o.state_.size()) return false;
  for (size_t j = 0; j < rank(); ++j) {
    for (size_t a = 0; a < state_.size(); ++a) {
      const bool unit = state_[a].fixed() && state_[a].value == 1;
      if (!unit && coef_[j][a] != o.coef_[j][a]) return false;
    }
  }
  return true;
}

bool ElementMap::Injective() const {
  // Each varying state axis lands on exactly one tensor axis; where several share one, their strides
  // must not interleave (a mixed radix).
  std::vector<int> uses(state_.size(), 0);
  for (size_t j = 0; j < rank(); ++j) {
    std::vector<size_t> varying = Varying(j);
    for (size_t a : varying) ++uses[a];
    if (varying.size() < 2) continue;
    for (size_t a : varying) {
      if (coef_[j][a] == INT64_MIN) return false;  // no std::abs of it
    }
    std::sort(varying.begin(), varying.end(),
              [&](size_t x, size_t y) { return std::abs(coef_[j][x]) < std::abs(coef_[j][y]); });
    for (size_t i = 1; i < varying.size(); ++i) {
      const SymDim& smaller = state_[varying[i - 1]];
      int64_t span = 0;
      if (!smaller.fixed() || !Mul(std::abs(coef_[j][varying[i - 1]]), smaller.value, &span) ||
          std::abs(coef_[j][varying[i]]) < span) {
        return false;
      }
    }
  }
  for (size_t a = 0; a < state_.size(); ++a) {
    const bool unit = state_[a].fixed() && state_[a].value == 1;
    if (!unit && uses[a] != 1) return false;
  }
  return true;
}

}  // namespace rnnstate
