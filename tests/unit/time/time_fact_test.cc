// What a value is along time (time/time_fact.h): the text a fact reads as, a length's positions moved
// (steady once none is left), and the first break among facts.

#include "time/time_fact.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "test_models.h"
#include "test_names.h"

namespace rnnstate::time_fact_test {
namespace {

using namespace test_names;

/// A break at the operator `op` saying `why`.
TimeBreak BreakAt(const std::string& op, const std::string& why) {
  TimeBreak at;
  at.op = op;
  at.what = op + " 'n'";
  at.why = why;
  return at;
}

TEST(TimeFactText, ReadsEveryKind) {
  EXPECT_EQ(TimeFactText(TimeFact::Steady()), "steady");
  EXPECT_EQ(TimeFactText(TimeFact::Frames(2)), "frames on axis 2");
  EXPECT_EQ(TimeFactText(TimeFact::Final()), "final");
  EXPECT_EQ(TimeFactText(TimeFact::First()), "first frames");
  EXPECT_EQ(TimeFactText(TimeFact::Length({1})), "length at [1]");
  EXPECT_EQ(TimeFactText(TimeFact::Length({0, 2}, {1})), "length at [0,2], folded at [1]");
  EXPECT_EQ(TimeFactText(TimeFact::Mixed(BreakAt("ReduceMean", "reduces over time"))), "mixed");
}

TEST(TimeFactText, SaysWhenFramesAreFoldedPositionsOrInexact) {
  TimeFact folded = TimeFact::Frames(0);
  folded.folded = true;
  EXPECT_EQ(TimeFactText(folded), "frames on axis 0 (time folded outermost)");
  folded.outer = false;
  EXPECT_EQ(TimeFactText(folded), "frames on axis 0 (time folded with other axes)");
  TimeFact positions = TimeFact::Frames(0);
  positions.positions = true;
  EXPECT_EQ(TimeFactText(positions), "frames on axis 0, positions");
  EXPECT_EQ(TimeFactText(TimeFact::Frames(1, BreakAt("Conv", "slides"))), "frames on axis 1, inexact");
  EXPECT_EQ(TimeFactText(TimeFact::Final(BreakAt("LSTM", "runs backwards"))), "final, inexact");
}

TEST(TimeFact, FactoriesSetTheirKindAndExactness) {
  EXPECT_TRUE(TimeFact::Steady().steady());
  EXPECT_TRUE(TimeFact::Steady().exact());
  EXPECT_TRUE(TimeFact::Frames(1).frames());
  EXPECT_EQ(TimeFact::Frames(1).axis, 1);
  EXPECT_FALSE(TimeFact::Frames(1, BreakAt("Conv", "slides")).exact());
  EXPECT_FALSE(TimeFact::Mixed(BreakAt("ReduceMean", "reduces")).exact());
  EXPECT_EQ(TimeFact::Mixed(BreakAt("ReduceMean", "reduces")).kind, TimeFact::Kind::kMixed);
  EXPECT_EQ(BreakAt("Conv", "slides a window").Text(), "Conv 'n' slides a window");
  TimeBreak unnamed;
  unnamed.why = "is fixed";
  EXPECT_EQ(unnamed.Text(), "is fixed");
}

TEST(RemapLength, MovesThePositionsAndDropsThoseThatAreGone) {
  const TimeFact length = TimeFact::Length({0, 2}, {3});
  // A Gather of positions 2 and 3 of a shape vector: 2 -> 0, 3 -> 1, the rest gone.
  const TimeFact picked = RemapLength(length, [](int64_t e) -> std::optional<int64_t> {
    if (e == 2) return 0;
    if (e == 3) return 1;
    return std::nullopt;
  });
  EXPECT_EQ(TimeFactText(picked), "length at [0], folded at [1]");
  const TimeFact shifted = RemapLength(length, [](int64_t e) -> std::optional<int64_t> { return e + 1; });
  EXPECT_EQ(TimeFactText(shifted), "length at [1,3], folded at [4]");
  const TimeFact gone = RemapLength(length, [](int64_t) -> std::optional<int64_t> { return std::nullopt; });
  EXPECT_EQ(TimeFactText(gone), "steady");
  const TimeFact folded_only = RemapLength(
      length, [](int64_t e) -> std::optional<int64_t> { return e == 3 ? std::optional<int64_t>(0) : std::nullopt; });
  EXPECT_EQ(TimeFactText(folded_only), "length at [], folded at [0]");
}

TEST(FirstBreak, IsTheFirstInexactFactInOrder) {
  const TimeFact steady = TimeFact::Steady();
  const TimeFact conv = TimeFact::Frames(1, BreakAt("Conv", "slides"));
  const TimeFact reduce = TimeFact::Mixed(BreakAt("ReduceMean", "reduces"));
  EXPECT_EQ(FirstBreak({}), std::nullopt);
  EXPECT_EQ(FirstBreak({&steady, nullptr}), std::nullopt);
  ASSERT_TRUE(FirstBreak({&steady, nullptr, &reduce, &conv}).has_value());
  EXPECT_EQ(FirstBreak({&steady, nullptr, &reduce, &conv})->op, "ReduceMean");
  EXPECT_EQ(FirstBreak({&conv, &reduce})->op, "Conv");
}

}  // namespace
}  // namespace rnnstate::time_fact_test
