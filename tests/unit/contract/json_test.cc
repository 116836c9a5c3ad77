#include "rnnstate/json.h"

#include <gtest/gtest.h>

namespace rnnstate {
namespace {

TEST(Json, RoundTripsNestedDocumentInKeyOrder) {
  std::string text = R"({"version":1,"states":[{"input":"a\"b","optional":true,"n":-3,"x":null}]})";
  EXPECT_EQ(DumpJson(ParseJson(text)), text);
}

TEST(Json, DecodesEscapesAndUnicode) {
  Json value = ParseJson(R"("tab\t \u00e9 \ud83d\ude00")");
  EXPECT_EQ(value.get<std::string>(), "tab\t \xc3\xa9 \xf0\x9f\x98\x80");
}

TEST(Json, RejectsMalformedInput) {
  for (const char* bad : {"", "{", "[1,]", "{\"a\":}", "\"unterminated", "01x", "{\"a\":1} trailing", "nul"}) {
    EXPECT_THROW(ParseJson(bad), std::runtime_error) << bad;
  }
}

TEST(Json, RejectsExcessiveNesting) {
  EXPECT_THROW(ParseJson(std::string(1000, '[') + std::string(1000, ']')), std::runtime_error);
  EXPECT_NO_THROW(ParseJson(std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']')));
}

TEST(Json, AssigningAKeyAgainReplacesItInPlace) {
  Json object = Json::object();
  object["a"] = 1;
  object["b"] = 2;
  object["a"] = 3;
  EXPECT_EQ(DumpJson(object), R"({"a":3,"b":2})");
}

TEST(Json, InvalidUtf8IsReplacedNotThrown) {
  Json name = std::string("LSTM\xff");
  EXPECT_EQ(DumpJson(name), "\"LSTM\xef\xbf\xbd\"");
}

}  // namespace
}  // namespace rnnstate
