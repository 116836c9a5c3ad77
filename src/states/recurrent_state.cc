#include "states/recurrent_state.h"

namespace rnnstate {

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
