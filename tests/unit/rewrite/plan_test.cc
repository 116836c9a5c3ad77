// The plan as data (rewrite/plan.h): whether an edit changes the model, the line --dry-run prints for each
// input and output variant, whether a plan changes anything at all, and the look-ups of an edit or a skip
// (a skip of a whole owner covering each of its states, the first in plan order winning), the same through
// PlanLookup.

#include "rewrite/plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "test_models.h"
#include "test_names.h"

namespace rnnstate::plan_test {
namespace {

using namespace test_names;

/// The edit of GRU 'gru' (node 2, initial_h slot 5) with `input` and `output` variants.
StateEdit Edit(InputEdit input, OutputEdit output) {
  StateEdit edit;
  edit.key = StateKey{{}, 2, 5};
  edit.shape = {Dim{1, ""}, Dim{-1, "batch"}, Dim{3, ""}};
  edit.input = "gru.h_in";
  edit.original = "h0";
  edit.input_edit = std::move(input);
  edit.output = "gru.h_out";
  edit.final_value = "Yh";
  edit.output_edit = std::move(output);
  return edit;
}

SkippedState Skip(int node, int slot, const std::string& reason) {
  SkippedState skip;
  skip.key = StateKey{{}, node, slot};
  skip.reason = reason;
  return skip;
}

TEST(StateEdit, ChangesTheModelUnlessBothSidesAreKept) {
  EXPECT_FALSE(Edit(KeepInput{}, KeepOutput{}).Changes());
  EXPECT_TRUE(Edit(ReuseInput{}, KeepOutput{}).Changes());
  EXPECT_TRUE(Edit(KeepInput{}, NameSlot{}).Changes());
  EXPECT_TRUE(Edit(NewInput{}, IdentityOutput{}).Changes());
}

TEST(StateEdit, DescribesEachInputAndOutputVariant) {
  EXPECT_EQ(Edit(NewInput{NoDefault{}, "", {}}, NameSlot{}).Describe(),
            "new input 'gru.h_in' [1,batch,3] (required); new output 'gru.h_out'");
  EXPECT_EQ(Edit(NewInput{ZerosDefault{}, "", {}}, IdentityOutput{}).Describe(),
            "new input 'gru.h_in' [1,batch,3] (default: zeros); new output 'gru.h_out' (Identity of 'Yh')");
  EXPECT_EQ(Edit(NewInput{BroadcastZerosDefault{}, "", {}}, ReuseOutput{}).Describe(),
            "new input 'gru.h_in' [1,batch,3] (default: zeros broadcast to the batch of X); output 'gru.h_out' "
            "(existing graph output)");
  EXPECT_EQ(Edit(NewInput{InitializerDefault{true, {}, {}}, "", {}}, KeepOutput{}).Describe(),
            "new input 'gru.h_in' [1,batch,3] (default: initializer 'h0'); output 'gru.h_out' (already exposed)");
  EXPECT_EQ(Edit(NewInput{InitializerDefault{false, {}, {}}, "", {}}, KeepOutput{}).Describe(),
            "new input 'gru.h_in' [1,batch,3] (default: copy of initializer 'h0'); output 'gru.h_out' (already "
            "exposed)");
  EXPECT_EQ(Edit(NewInput{SelectOriginalDefault{}, "", {}}, KeepOutput{}).Describe(),
            "new input 'gru.h_in' [1,batch,3] (default: the original computation of 'h0'); output 'gru.h_out' "
            "(already exposed)");
  EXPECT_EQ(Edit(KeepInput{}, KeepOutput{}).Describe(),
            "input 'gru.h_in' (already exposed); output 'gru.h_out' (already exposed)");
  EXPECT_EQ(Edit(ReuseInput{}, KeepOutput{}).Describe(),
            "input 'gru.h_in' (existing graph input); output 'gru.h_out' (already exposed)");
  EXPECT_EQ(Edit(DropDefault{}, KeepOutput{}).Describe(),
            "input 'gru.h_in' (default removed: required); output 'gru.h_out' (already exposed)");
  DefaultBehindSelect behind;
  behind.default_name = "h0.default";
  EXPECT_EQ(Edit(behind, KeepOutput{}).Describe(),
            "input 'gru.h_in' (its default kept as 'h0.default', selected when the fed tensor is empty); output "
            "'gru.h_out' (already exposed)");
  behind.keep_empty_default = false;
  EXPECT_THAT(Edit(behind, KeepOutput{}).Describe(), HasSubstr("selected when the fed tensor is empty; required)"));
}

TEST(StateEdit, SaysWhenTheStateIsFedToALoopsCarriedVariable) {
  StateEdit edit = Edit(NewInput{NoDefault{}, "", {}}, NameSlot{});
  edit.site.carried = true;
  EXPECT_EQ(edit.Describe(),
            "new input 'gru.h_in' [1,batch,3] (required), fed to the loop-carried variable; new output 'gru.h_out'");
}

TEST(Plan, ChangesTheModelWhenAnEditANameOrTheMetadataDoes) {
  Plan plan;
  EXPECT_FALSE(plan.ChangesModel());
  plan.edits.push_back(Edit(KeepInput{}, KeepOutput{}));
  EXPECT_FALSE(plan.ChangesModel());
  plan.metadata_changes = true;
  EXPECT_TRUE(plan.ChangesModel());
  plan.metadata_changes = false;
  plan.node_names.push_back({{{}, 2}, "gru"});
  EXPECT_TRUE(plan.ChangesModel());
  plan.node_names.clear();
  plan.edits.push_back(Edit(NewInput{}, NameSlot{}));
  EXPECT_TRUE(plan.ChangesModel());
  plan.skipped.push_back(Skip(7, -1, "bidirectional"));
  EXPECT_TRUE(plan.ChangesModel());
}

TEST(Plan, FindsAnEditByItsKeyAndASkipByTheKeyOrItsOwner) {
  Plan plan;
  plan.edits.push_back(Edit(NewInput{}, NameSlot{}));
  plan.edits.push_back(Edit(KeepInput{}, KeepOutput{}));  // the same key again: the first is found
  StateEdit nested = Edit(KeepInput{}, KeepOutput{});
  nested.key.graph = {GraphStep{1, "then_branch", -1}};
  plan.edits.push_back(nested);
  plan.skipped.push_back(Skip(4, 6, "c only"));
  plan.skipped.push_back(Skip(4, 6, "c only, again"));
  plan.skipped.push_back(Skip(4, -1, "the whole owner"));
  plan.skipped.push_back(Skip(9, -1, "the whole owner first"));
  plan.skipped.push_back(Skip(9, 5, "h later"));
  const PlanLookup lookup(plan);
  for (const auto& find_edit :
       {std::function<const StateEdit*(const StateKey&)>([&](const StateKey& k) { return plan.FindEdit(k); }),
        std::function<const StateEdit*(const StateKey&)>([&](const StateKey& k) { return lookup.FindEdit(k); })}) {
    EXPECT_EQ(find_edit(StateKey{{}, 2, 5}), &plan.edits[0]);
    EXPECT_EQ(find_edit(StateKey{{}, 2, 6}), nullptr);
    EXPECT_EQ(find_edit(StateKey{{GraphStep{2, "body", -1}}, 2, 5}), nullptr);
    EXPECT_EQ(find_edit(StateKey{{GraphStep{1, "then_branch", -1}}, 2, 5}), &plan.edits[2]);
  }
  for (const auto& find_skip :
       {std::function<const SkippedState*(const StateKey&)>([&](const StateKey& k) { return plan.FindSkip(k); }),
        std::function<const SkippedState*(const StateKey&)>([&](const StateKey& k) { return lookup.FindSkip(k); })}) {
    auto reason = [&](const StateKey& key) -> std::string {
      const SkippedState* skip = find_skip(key);
      return skip == nullptr ? "not skipped" : skip->reason;
    };
    EXPECT_EQ(reason(StateKey{{}, 4, 6}), "c only");
    EXPECT_EQ(reason(StateKey{{}, 4, 5}), "the whole owner");
    EXPECT_EQ(reason(StateKey{{}, 9, 5}), "the whole owner first");
    EXPECT_EQ(reason(StateKey{{}, 2, 5}), "not skipped");
  }
}

}  // namespace
}  // namespace rnnstate::plan_test
