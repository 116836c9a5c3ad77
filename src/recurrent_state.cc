#include "recurrent_state.h"

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

const char* StateKindName(StateKind kind) {
  switch (kind) {
    case StateKind::kHidden:
      return "h";
    case StateKind::kCell:
      return "c";
    case StateKind::kCarried:
      return "state";
  }
  return "?";
}

}  // namespace rnnstate
