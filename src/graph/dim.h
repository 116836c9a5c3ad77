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

/// True for the names onnx's shape inference invents for sizes it does not know ("unk__82"), in this
/// run's inference or in value_info an earlier tool wrote into the file: no caller ever feeds them, so
/// they say nothing about a size.
bool IsInventedDimName(const std::string& name);

/// "[1,batch,4]".
std::string ShapeText(const std::vector<Dim>& shape);

}  // namespace rnnstate
