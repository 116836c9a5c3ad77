#include "graph/dim.h"

namespace rnnstate {

std::string Dim::ToString() const {
  if (fixed()) return std::to_string(value);
  return param.empty() ? "?" : param;
}

std::string ShapeText(const std::vector<Dim>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? "," : "") + shape[i].ToString();
  return out + "]";
}

bool IsInventedDimName(const std::string& name) { return name.rfind("unk__", 0) == 0; }

}  // namespace rnnstate
