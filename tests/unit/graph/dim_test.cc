// A dimension as plans and reports name it (graph/dim.h): fixed, symbolic or unknown, the names onnx's
// shape inference invents, and a shape as messages quote it.

#include "graph/dim.h"

#include <gtest/gtest.h>

namespace rnnstate::dim_test {
namespace {

TEST(Dim, ReadsAsItsValueItsNameOrAQuestionMark) {
  EXPECT_EQ((Dim{8, ""}).ToString(), "8");
  EXPECT_EQ((Dim{0, ""}).ToString(), "0");
  EXPECT_TRUE((Dim{0, ""}).fixed());
  EXPECT_EQ((Dim{-1, "batch"}).ToString(), "batch");
  EXPECT_FALSE((Dim{-1, "batch"}).fixed());
  EXPECT_EQ(Dim{}.ToString(), "?");
  EXPECT_EQ((Dim{-1, "batch"}), (Dim{-1, "batch"}));
  EXPECT_FALSE((Dim{-1, "batch"}) == (Dim{-1, "time"}));
  EXPECT_FALSE((Dim{1, ""}) == (Dim{2, ""}));
}

TEST(ShapeText, JoinsTheDimsWithoutSpaces) {
  EXPECT_EQ(ShapeText({Dim{1, ""}, Dim{-1, "batch"}, Dim{}}), "[1,batch,?]");
  EXPECT_EQ(ShapeText({}), "[]");
}

TEST(IsInventedDimName, IsTrueForInferencesUnkNamesOnly) {
  EXPECT_TRUE(IsInventedDimName("unk__82"));
  EXPECT_TRUE(IsInventedDimName("unk__"));
  EXPECT_FALSE(IsInventedDimName("batch"));
  EXPECT_FALSE(IsInventedDimName("my_unk__1"));
  EXPECT_FALSE(IsInventedDimName("unk_1"));
  EXPECT_FALSE(IsInventedDimName(""));
}

}  // namespace
}  // namespace rnnstate::dim_test
