// BoxedOptional (boxed_optional.h): std::optional's interface with the value on the heap, for the
// per-state records of the analysis (an exposure is 288 bytes by value; most states have none).

#include "exposure/boxed_optional.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "exposure/exposed_state.h"

namespace rnnstate::boxed_optional_test {
namespace {

TEST(BoxedOptional, EmptyCostsOnePointer) {
  static_assert(sizeof(BoxedOptional<Exposure>) == sizeof(void*));
  BoxedOptional<std::string> none;
  EXPECT_FALSE(none.has_value());
  EXPECT_FALSE(none);
  EXPECT_EQ(none.get(), nullptr);
}

TEST(BoxedOptional, CopiesCopyTheValue) {
  BoxedOptional<std::string> a = std::string("state");
  BoxedOptional<std::string> b = a;
  ASSERT_TRUE(b.has_value());
  EXPECT_NE(a.get(), b.get()) << "a copy holds its own value";
  *b += "N";
  EXPECT_EQ(*a, "state");
  EXPECT_EQ(*b, "stateN");
  a = b;
  EXPECT_EQ(*a, "stateN");
  BoxedOptional<std::string> empty;
  a = empty;
  EXPECT_FALSE(a.has_value()) << "assigning an empty one empties";
  const BoxedOptional<std::string>& same = b;
  b = same;
  EXPECT_EQ(*b, "stateN") << "assigning itself keeps the value";
}

TEST(BoxedOptional, MovesAndResets) {
  BoxedOptional<std::string> a = std::string("h");
  const std::string* held = a.get();
  BoxedOptional<std::string> b = std::move(a);
  EXPECT_EQ(b.get(), held) << "a move hands the value over";
  EXPECT_EQ(b->size(), 1u);
  b = std::string("c");
  EXPECT_EQ(*b, "c");
  b.reset();
  EXPECT_FALSE(b.has_value());
}

}  // namespace
}  // namespace rnnstate::boxed_optional_test
