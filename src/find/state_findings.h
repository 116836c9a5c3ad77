#pragma once
/// \file
/// What the producers of states find (see analysis.cc's kStateProducers): the owners, described for
/// reports, their states, and what looked state-like but is not taken as a state, with the reason — so
/// that nothing recurrent passes `report` and `check` silently.

#include <string>
#include <vector>

#include "find/recurrent_node.h"
#include "states/recurrent_state.h"

namespace rnnstate {

/// Something state-like that is not a rewritable state.
struct StateNote {
  enum class Kind {
    kNotState,      ///< a carried variable that does not recur (pass-through, counter, per-step collector, ...)
    kUnclassified,  ///< a carried variable that recurs in a way rnnstate cannot classify (check warns)
    kUnhandledOp,   ///< an operator outside the table whose slots carry state (check warns unless exposed)
  };
  Kind kind = Kind::kNotState;
  StateOwner owner;      ///< the Loop / Scan, or the operator
  std::string variable;  ///< the carried variable (its body input name), or the operator's state slots
  std::string reason;
  /// kUnhandledOp: its state slots are already fed by a main-graph input and returned as a main-graph output.
  bool exposed = false;

  /// True when `check` warns about it.
  bool Warns() const { return kind == Kind::kUnclassified || (kind == Kind::kUnhandledOp && !exposed); }
};

/// "not_state", "unclassified" or "unhandled_op" (JSON reports).
const char* StateNoteKindName(StateNote::Kind kind);

/// One sentence for reports and warnings: "Loop 'x' carried 'p': not a state (passed through unchanged)".
std::string StateNoteText(const StateNote& note);

/// Everything the producers found, in model order per producer.
struct Findings {
  std::vector<RecurrentNode> nodes;    ///< the owners of states, described for reports
  std::vector<RecurrentState> states;  ///< grouped by owner, in the owners' order
  std::vector<StateNote> notes;
};

}  // namespace rnnstate
