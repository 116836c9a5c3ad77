// Collision-free names (graph/naming.h): an allocator hands out the wanted name or the first free
// `wanted_N`, against names it holds, names viewed in a model or a look-up; node names made fit for value
// names; user name templates expanded, and refused (exit 2) when malformed.

#include "graph/naming.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "rnnstate/error.h"
#include "test_models.h"
#include "test_names.h"

namespace rnnstate::naming_test {
namespace {

using namespace test_names;

TEST(NameAllocator, GivesTheWantedNameOrTheFirstFreeNumberedOne) {
  NameAllocator names(std::set<std::string>{"h", "h_2", "c"});
  EXPECT_EQ(names.Allocate("h"), "h_3");
  EXPECT_EQ(names.Allocate("h"), "h_4");
  EXPECT_EQ(names.Allocate("x"), "x");
  EXPECT_EQ(names.Allocate("x"), "x_2");
  EXPECT_TRUE(names.Taken("c"));
  EXPECT_TRUE(names.Taken("x_2"));
  EXPECT_FALSE(names.Taken("y"));
  names.Reserve("y");
  EXPECT_TRUE(names.Taken("y"));
  EXPECT_EQ(names.Allocate("y"), "y_2");
}

TEST(NameAllocator, AvoidsNamesViewedInPlaceAndThoseItHandsOut) {
  const std::string a = "state", b = "state_2";
  std::pmr::unordered_set<std::string_view> taken;
  taken.insert(a);
  taken.insert(b);
  NameAllocator names(taken);
  EXPECT_EQ(names.Allocate("state"), "state_3");
  EXPECT_EQ(names.Allocate("state"), "state_4");
  EXPECT_EQ(names.Allocate("other"), "other");
}

TEST(NameAllocator, AsksTheLookUpForEveryCandidate) {
  int asked = 0;
  NameAllocator names([&](const std::string& name) {
    ++asked;
    return name == "v" || name == "v_2";
  });
  EXPECT_EQ(names.Allocate("v"), "v_3");
  EXPECT_EQ(asked, 3);
  EXPECT_EQ(names.Allocate("v"), "v_4");  // v_3 is now its own
}

TEST(NodeStem, DropsLeadingSlashesAndDotsTheRest) {
  EXPECT_EQ(NodeStem("/encoder/lstm/LSTM"), "encoder.lstm.LSTM");
  EXPECT_EQ(NodeStem("//a:0"), "a.0");
  EXPECT_EQ(NodeStem("lstm_1"), "lstm_1");
  EXPECT_EQ(NodeStem(""), "node");
  EXPECT_EQ(NodeStem("///"), "node");
}

TEST(ExpandNameTemplate, FillsEveryPlaceholder) {
  EXPECT_EQ(ExpandNameTemplate("{node}.{kind}", "enc.lstm", "h", "LSTM"), "enc.lstm.h");
  EXPECT_EQ(ExpandNameTemplate("state_{op}_{node}_{kind}_{node}", "n", "c", "GRU"), "state_GRU_n_c_n");
  EXPECT_EQ(ExpandNameTemplate("{node}", "n", "h", "RNN"), "n");
}

TEST(ExpandNameTemplate, RefusesAMalformedTemplateAsAUsageError) {
  ExpectError([] { ExpandNameTemplate("{kind}_{op}", "n", "h", "LSTM"); }, ExitCode::kUsage, "must contain {node}");
  ExpectError([] { ExpandNameTemplate("{node}_{layer}", "n", "h", "LSTM"); }, ExitCode::kUsage,
              "unknown placeholder {layer}");
  ExpectError([] { ExpandNameTemplate("{node", "n", "h", "LSTM"); }, ExitCode::kUsage, "unclosed '{'");
}

}  // namespace
}  // namespace rnnstate::naming_test
