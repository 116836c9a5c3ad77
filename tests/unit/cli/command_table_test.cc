// The command table: every command once, in the order `rnnstate --help` lists them, each with its help
// line, its examples and what declares its options.

#include <gtest/gtest.h>

#include <set>

#include "cli/command.h"
#include "test_names.h"

namespace rnnstate::command_table_test {
namespace {

using namespace test_names;

TEST(Commands, AreTheDocumentedSixInHelpOrderEachNamedOnce) {
  std::vector<std::string> names;
  for (const cli::Command& command : cli::Commands()) names.emplace_back(command.name);
  EXPECT_THAT(names, ElementsAre("rewrite", "report", "check", "init", "export", "verify"));
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
}

TEST(Commands, EachHasAHelpLineExamplesOfItselfAndADeclaration) {
  for (const cli::Command& command : cli::Commands()) {
    const std::string name = command.name;
    ASSERT_NE(command.help, nullptr) << name;
    EXPECT_THAT(std::string(command.help), Not(IsEmpty())) << name;
    EXPECT_EQ(std::string(command.help).find('\n'), std::string::npos) << name << ": one line";
    ASSERT_NE(command.examples, nullptr) << name;
    // Examples follow "Examples:" in --help: each starts on a line of its own.
    EXPECT_THAT(std::string(command.examples), ::testing::StartsWith("\n  rnnstate " + name + " ")) << name;
    EXPECT_NE(command.declare, nullptr) << name;
  }
}

TEST(Commands, IsOneTableForEveryCaller) { EXPECT_EQ(&cli::Commands(), &cli::Commands()); }

}  // namespace
}  // namespace rnnstate::command_table_test
