#include "exposure/strided_view.h"

#include <algorithm>
#include <functional>

namespace rnnstate {

namespace {

/// The sizes axis `axis` (of fixed size `size`) splits into, for the coefficients of its varying state
/// axes; an empty list when it needs no split; nullopt when it cannot be split.
std::optional<std::vector<int64_t>> PartsOf(const ElementMap& map, size_t axis, const SymDim& size) {
  std::vector<int64_t> coefs;
  for (size_t a : map.Varying(axis)) {
    if (!map.state()[a].fixed()) return std::nullopt;  // a dynamic state axis is only ever a whole axis
    coefs.push_back(map.coef(axis, a));
  }
  if (coefs.empty() || (coefs.size() == 1 && coefs[0] == 1)) return std::vector<int64_t>{};
  if (!size.fixed()) return std::nullopt;
  std::sort(coefs.begin(), coefs.end(), std::greater<int64_t>());
  if (coefs.back() <= 0 || size.value % coefs.front() != 0) return std::nullopt;
  std::vector<int64_t> parts{size.value / coefs.front()};
  for (size_t i = 1; i < coefs.size(); ++i) {
    if (coefs[i] == coefs[i - 1] || coefs[i - 1] % coefs[i] != 0) return std::nullopt;
    parts.push_back(coefs[i - 1] / coefs[i]);
  }
  if (coefs.back() > 1) parts.push_back(coefs.back());
  return parts;
}

}  // namespace

std::optional<StridedView> StridedViewOf(const ElementMap& map, const SymShape& shape) {
  if (map.rank() != shape.size() || !map.Injective()) return std::nullopt;
  std::vector<std::vector<int64_t>> parts(shape.size());
  bool any = false;
  for (size_t j = 0; j < shape.size(); ++j) {
    std::optional<std::vector<int64_t>> split = PartsOf(map, j, shape[j]);
    if (!split) return std::nullopt;
    parts[j] = std::move(*split);
    any = any || !parts[j].empty();
  }
  if (!any) return std::nullopt;
  StridedView view{{}, map};
  // From the last axis to the first, so that the axes still to split keep their positions.
  for (size_t j = shape.size(); j-- > 0;) {
    if (!parts[j].empty() && !view.map.Split(j, parts[j])) return std::nullopt;
  }
  for (size_t j = 0; j < shape.size(); ++j) {
    if (parts[j].empty()) {
      view.shape.push_back(shape[j]);
    } else {
      for (int64_t part : parts[j]) view.shape.push_back(SymDim{part, ""});
    }
  }
  return view;
}

}  // namespace rnnstate
