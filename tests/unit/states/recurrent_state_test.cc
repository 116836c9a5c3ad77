// A recurrent state's own helpers (states/recurrent_state.h): the kind names metadata and reports use, a
// state's key and label, and a key that stands for one state or (slot -1) for every state of its owner,
// ordered by graph, node and slot.

#include "states/recurrent_state.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "test_models.h"
#include "test_names.h"

namespace rnnstate::recurrent_state_test {
namespace {

using namespace test_names;

/// The state entering node `node` of the main graph at `slot`, of `kind`, its owner named `name`.
RecurrentState StateAt(int node, int slot, StateKind kind, const std::string& name) {
  RecurrentState state;
  state.owner.node = node;
  state.owner.name = name;
  state.initial_slot = slot;
  state.kind = kind;
  return state;
}

TEST(StateKindName, NamesEachKindAsMetadataDoes) {
  EXPECT_STREQ(StateKindName(StateKind::kHidden), "h");
  EXPECT_STREQ(StateKindName(StateKind::kCell), "c");
  EXPECT_STREQ(StateKindName(StateKind::kCarried), "state");
  EXPECT_STREQ(StateAt(0, 6, StateKind::kCell, "lstm").kind_name(), "c");
}

TEST(RecurrentState, LabelsByOwnerAndKindOrCarriedVariable) {
  EXPECT_EQ(StateAt(3, 5, StateKind::kHidden, "LSTM_3").Label(), "LSTM_3/h");
  RecurrentState carried = StateAt(2, 3, StateKind::kCarried, "Loop_2");
  carried.variable = "h_prev";
  EXPECT_EQ(carried.Label(), "Loop_2/h_prev");
  const StateKey key = StateAt(3, 5, StateKind::kHidden, "LSTM_3").key();
  EXPECT_EQ(key.node, 3);
  EXPECT_EQ(key.slot, 5);
  EXPECT_TRUE(key.graph.empty());
}

TEST(StateKey, CoversItsStateOrEveryStateOfItsOwner) {
  const StateKey h{{}, 3, 5}, c{{}, 3, 6}, owner{{}, 3, -1}, other{{}, 4, 5};
  EXPECT_TRUE(h.Covers(h));
  EXPECT_FALSE(h.Covers(c));
  EXPECT_TRUE(owner.Covers(h));
  EXPECT_TRUE(owner.Covers(c));
  EXPECT_FALSE(owner.Covers(other));
  EXPECT_FALSE(c.Covers(owner));
  EXPECT_FALSE(h == c);
  EXPECT_TRUE(h == (StateKey{{}, 3, 5}));
}

TEST(StateKey, OrdersByNodeThenSlot) {
  const std::set<StateKey> keys{StateKey{{}, 4, 1}, StateKey{{}, 3, 6}, StateKey{{}, 3, 5}, StateKey{{}, 3, 5}};
  ASSERT_EQ(keys.size(), 3u);
  EXPECT_EQ(keys.begin()->slot, 5);
  EXPECT_EQ(keys.rbegin()->node, 4);
}

}  // namespace
}  // namespace rnnstate::recurrent_state_test
