#pragma once
/// \file
/// A tensor dimension as states, plans and reports name it: fixed, symbolic or unknown.

#include <cstdint>
#include <string>
#include <vector>

namespace rnnstate {

/// A tensor dimension: a fixed size, a symbolic name, or unknown.
struct Dim {
  int64_t value = -1;  ///< >= 0 when fixed
  std::string param;   ///< symbolic name when not fixed (may be empty: unknown)
  bool fixed() const { return value >= 0; }
  /// "8", "batch" or "?".
  std::string ToString() const;
  bool operator==(const Dim& o) const { return value == o.value && param == o.param; }
};

/// "[1,batch,4]".
std::string ShapeText(const std::vector<Dim>& shape);

}  // namespace rnnstate
