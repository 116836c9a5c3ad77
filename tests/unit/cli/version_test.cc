// What `rnnstate --version` prints: the release, the source revision and the onnx and protobuf versions,
// as lines of text and as one JSON object with the same values.

#include "cli/version.h"

#include <google/protobuf/stubs/common.h>
#include <gtest/gtest.h>

#include <sstream>

#include "rnnstate/json.h"
#include "test_names.h"

namespace rnnstate::version_test {
namespace {

using namespace test_names;
using ::testing::MatchesRegex;

/// The `NAME VALUE` lines of VersionText, in order.
std::vector<std::pair<std::string, std::string>> VersionLines() {
  std::vector<std::pair<std::string, std::string>> lines;
  std::istringstream in(VersionText());
  for (std::string line; std::getline(in, line);) {
    const size_t space = line.find(' ');
    lines.emplace_back(line.substr(0, space), space == std::string::npos ? "" : line.substr(space + 1));
  }
  return lines;
}

TEST(VersionText, IsFourNamedLinesWithoutATrailingNewline) {
  const auto lines = VersionLines();
  ASSERT_EQ(lines.size(), 4u) << VersionText();
  EXPECT_EQ(lines[0].first, "rnnstate");
  EXPECT_THAT(lines[0].second, MatchesRegex("[0-9]+\\.[0-9]+\\.[0-9]+"));
  EXPECT_EQ(lines[1].first, "revision");
  EXPECT_THAT(lines[1].second, Not(IsEmpty()));
  EXPECT_EQ(lines[2].first, "onnx");
  EXPECT_THAT(lines[2].second, MatchesRegex("1\\.[0-9]+\\.[0-9]+"));
  EXPECT_EQ(lines[3].first, "protobuf");
  EXPECT_NE(VersionText().back(), '\n');
}

TEST(VersionText, NamesTheProtobufTheBinaryWasCompiledAgainst) {
  const auto lines = VersionLines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[3].second, google::protobuf::internal::VersionString(GOOGLE_PROTOBUF_VERSION));
}

TEST(VersionJson, IsOneObjectOfTheSameValuesAsTheText) {
  const std::string text = VersionJson();
  EXPECT_EQ(text.find('\n'), std::string::npos);
  const Json version = ParseJson(text);
  std::vector<std::string> keys;
  for (const auto& item : version.items()) {
    keys.push_back(item.key());
    EXPECT_TRUE(item.value().is_string()) << item.key();
  }
  EXPECT_THAT(keys, ElementsAre("name", "version", "revision", "onnx", "protobuf"));
  const auto lines = VersionLines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(version["name"], "rnnstate");
  EXPECT_EQ(version["version"], lines[0].second);
  EXPECT_EQ(version["revision"], lines[1].second);
  EXPECT_EQ(version["onnx"], lines[2].second);
  EXPECT_EQ(version["protobuf"], lines[3].second);
}

}  // namespace
}  // namespace rnnstate::version_test
