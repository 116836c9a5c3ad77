// The names and sentences of what looked state-like but is no rewritable state (state_findings.h): the JSON
// kind names, one sentence per kind naming the owner and the variable, and which notes `check` warns about.

#include "find/state_findings.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_names.h"

namespace rnnstate::state_findings_test {
namespace {

using namespace test_names;

/// A note of `kind` on the carried variable "p" of Loop 'loop' in the main graph, for `reason`.
StateNote NoteOf(StateNote::Kind kind, const std::string& reason) {
  StateNote note;
  note.kind = kind;
  note.owner = StateOwner{GraphPath{}, 3, "main", "loop", "Loop"};
  note.variable = "p";
  note.reason = reason;
  return note;
}

TEST(StateNoteKindName, EachKindHasItsOwnJsonName) {
  EXPECT_STREQ(StateNoteKindName(StateNote::Kind::kNotState), "not_state");
  EXPECT_STREQ(StateNoteKindName(StateNote::Kind::kUnclassified), "unclassified");
  EXPECT_STREQ(StateNoteKindName(StateNote::Kind::kUnhandledOp), "unhandled_op");
}

TEST(StateNoteText, ANotStateNamesTheOwnerTheVariableAndTheReason) {
  EXPECT_EQ(StateNoteText(NoteOf(StateNote::Kind::kNotState, "passed through unchanged")),
            "main Loop 'loop' carried 'p': not a state (passed through unchanged)");
}

TEST(StateNoteText, AnUnclassifiedVariableSaysItRecurs) {
  EXPECT_EQ(StateNoteText(NoteOf(StateNote::Kind::kUnclassified, "its update reads a Gather")),
            "main Loop 'loop' carried 'p': recurs, but not classified: its update reads a Gather");
}

TEST(StateNoteText, AnUnhandledOperatorNamesItsSlotsAndTheReason) {
  StateNote note = NoteOf(StateNote::Kind::kUnhandledOp, "its cache has no rule");
  note.owner = StateOwner{GraphPath{}, 0, "main/If_1:then_branch", "attn", "com.microsoft.Attention"};
  note.variable = "past, present";
  EXPECT_EQ(StateNoteText(note),
            "main/If_1:then_branch com.microsoft.Attention 'attn' (past, present): a stateful operator rnnstate "
            "does not handle: its cache has no rule");
}

TEST(StateNoteWarns, CheckWarnsAboutUnclassifiedVariablesAndUnexposedOperatorsOnly) {
  EXPECT_FALSE(NoteOf(StateNote::Kind::kNotState, "a counter").Warns());
  EXPECT_TRUE(NoteOf(StateNote::Kind::kUnclassified, "?").Warns());
  StateNote op = NoteOf(StateNote::Kind::kUnhandledOp, "?");
  EXPECT_TRUE(op.Warns());
  op.exposed = true;
  EXPECT_FALSE(op.Warns());
}

}  // namespace
}  // namespace rnnstate::state_findings_test
