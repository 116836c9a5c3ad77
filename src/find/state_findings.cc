#include "find/state_findings.h"

namespace rnnstate {

const char* StateNoteKindName(StateNote::Kind kind) {
  switch (kind) {
    case StateNote::Kind::kNotState:
      return "not_state";
    case StateNote::Kind::kUnclassified:
      return "unclassified";
    case StateNote::Kind::kUnhandledOp:
      return "unhandled_op";
  }
  return "?";
}

std::string StateNoteText(const StateNote& note) {
  const std::string owner = note.owner.graph_name + " " + note.owner.op + " '" + note.owner.name + "'";
  switch (note.kind) {
    case StateNote::Kind::kNotState:
      return owner + " carried '" + note.variable + "': not a state (" + note.reason + ")";
    case StateNote::Kind::kUnclassified:
      return owner + " carried '" + note.variable + "': recurs, but not classified: " + note.reason;
    case StateNote::Kind::kUnhandledOp:
      return owner + " (" + note.variable + "): a stateful operator rnnstate does not handle: " + note.reason;
  }
  return owner;
}

}  // namespace rnnstate
