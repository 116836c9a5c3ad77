// "Did you mean ...?" for a mistyped command: the edit distance with swaps, and which names are close
// enough to suggest.

#include "cli/closest_name.h"

#include <gtest/gtest.h>

namespace rnnstate::closest_name_test {
namespace {

const std::vector<std::string> kCommands = {"rewrite", "report", "check", "init", "export", "verify"};

TEST(EditDistance, CountsInsertionsDeletionsSubstitutionsAndSwaps) {
  EXPECT_EQ(EditDistance("rewrite", "rewrite"), 0u);
  EXPECT_EQ(EditDistance("rewirte", "rewrite"), 1u);  // two neighbours swapped: one edit, not two
  EXPECT_EQ(EditDistance("rewrit", "rewrite"), 1u);
  EXPECT_EQ(EditDistance("rewritee", "rewrite"), 1u);
  EXPECT_EQ(EditDistance("rewrote", "rewrite"), 1u);
  EXPECT_EQ(EditDistance("", "init"), 4u);
  EXPECT_EQ(EditDistance("init", ""), 4u);
  EXPECT_EQ(EditDistance("ca", "abc"), 3u);  // no substring edited twice (a swap then an insertion inside it)
}

TEST(ClosestName, SuggestsTheCommandATypoMeant) {
  EXPECT_EQ(ClosestName("rewirte", kCommands), "rewrite");
  EXPECT_EQ(ClosestName("reprot", kCommands), "report");
  EXPECT_EQ(ClosestName("chek", kCommands), "check");
  EXPECT_EQ(ClosestName("inti", kCommands), "init");
  EXPECT_EQ(ClosestName("verfy", kCommands), "verify");
  EXPECT_EQ(ClosestName("Export", kCommands), "export");
}

TEST(ClosestName, SuggestsNothingForAWordTooFarFromEveryName) {
  EXPECT_EQ(ClosestName("model.onnx", kCommands), std::nullopt);
  EXPECT_EQ(ClosestName("xyz", kCommands), std::nullopt);
  EXPECT_EQ(ClosestName("", kCommands), std::nullopt);
  EXPECT_EQ(ClosestName("ex", kCommands), std::nullopt);  // four edits from export: a guess, not a typo
  EXPECT_EQ(ClosestName("rewrite", {}), std::nullopt);
}

TEST(ClosestName, TheNearestWinsAndTheFirstOfATie) {
  EXPECT_EQ(ClosestName("repor", kCommands), "report");  // one edit from report, two from rewrite
  EXPECT_EQ(ClosestName("ab", {"abc", "abd"}), "abc");   // both one edit away
  EXPECT_EQ(ClosestName("abc", {"abd", "abc"}), "abc");  // an exact match beats a nearer-listed one
}

}  // namespace
}  // namespace rnnstate::closest_name_test
