#include "rnnstate/json.h"

#include <gtest/gtest.h>

namespace rnnstate {
namespace {

TEST(Json, RoundTripsNestedDocument) {
  std::string text = R"({"version":1,"states":[{"input":"a\"b","optional":true,"n":-3,"x":null}]})";
  EXPECT_EQ(Json::Parse(text).Dump(), text);
}

TEST(Json, DecodesEscapesAndUnicode) {
  Json value = Json::Parse(R"("tab\t \u00e9 \ud83d\ude00")");
  EXPECT_EQ(value.AsString(), "tab\t \xc3\xa9 \xf0\x9f\x98\x80");
}

TEST(Json, RejectsMalformedInput) {
  for (const char* bad : {"", "{", "[1,]", "{\"a\":}", "\"unterminated", "01x", "{\"a\":1} trailing", "nul"}) {
    EXPECT_THROW(Json::Parse(bad), std::runtime_error) << bad;
  }
}

TEST(Json, RejectsExcessiveNesting) {
  EXPECT_THROW(Json::Parse(std::string(1000, '[') + std::string(1000, ']')), std::runtime_error);
}

TEST(Json, SetReplacesInPlace) {
  Json object = Json::Object();
  object.Set("a", 1);
  object.Set("b", 2);
  object.Set("a", 3);
  EXPECT_EQ(object.Dump(), R"({"a":3,"b":2})");
}

}  // namespace
}  // namespace rnnstate
