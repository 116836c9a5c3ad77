#include "rnnstate/json.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace rnnstate::json_test {
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

/// What ParseJson did with nlohmann's callback parser (which scans the enclosing array at the end of
/// every object: quadratic in the number of pairs): the document, or the error message.
std::string CallbackParse(const std::string& text) {
  auto limit_depth = [](int depth, Json::parse_event_t, Json&) {
    if (depth > kMaxJsonDepth) throw std::runtime_error("JSON nested deeper than " + std::to_string(kMaxJsonDepth));
    return true;
  };
  try {
    return DumpJson(Json::parse(text, limit_depth));
  } catch (const std::exception& e) {
    return std::string("error: ") + e.what();
  }
}

std::string Parsed(const std::string& text) {
  try {
    return DumpJson(ParseJson(text));
  } catch (const std::exception& e) {
    return std::string("error: ") + e.what();
  }
}

TEST(Json, RefusesWhatTheCallbackParserRefusedWithTheSameMessage) {
  const auto nested = [](int depth, const std::string& inside) {
    return std::string(static_cast<size_t>(depth), '[') + inside + std::string(static_cast<size_t>(depth), ']');
  };
  std::vector<std::string> texts = {
      "",
      "{",
      "[1,]",
      "{\"a\":}",
      "\"unterminated",
      "01x",
      "{\"a\":1} trailing",
      "nul",
      R"({"version":1,"states":[{"input":"a","path":[{"node":"n"}]},{"x":[1,2.5,null]}]})"};
  for (int depth : {kMaxJsonDepth - 1, kMaxJsonDepth, kMaxJsonDepth + 1, kMaxJsonDepth + 2}) {
    texts.push_back(nested(depth, ""));
    texts.push_back(nested(depth, "1"));
    texts.push_back(nested(depth, "{}"));
    texts.push_back(nested(depth, "{\"k\":true}"));
    texts.push_back(nested(depth, "1,]"));         // malformed after the depth is reached
    texts.push_back("[1,]" + nested(depth, "1"));  // malformed before
  }
  // The same documents and the same refusals; the messages are rnnstate's own since issue 23 (below).
  const auto verdict = [](const std::string& result) { return result.rfind("error: ", 0) == 0 ? "error" : result; };
  for (const std::string& text : texts) EXPECT_EQ(verdict(Parsed(text)), verdict(CallbackParse(text))) << text;
}

// Messages say what is wrong and where, without the library's text ("[json.exception.parse_error.101]").
TEST(Json, MessagesNameTheProblemAndItsByte) {
  EXPECT_EQ(Parsed("[1,]"), "error: not valid JSON at byte 4: syntax error while parsing value - unexpected ']'; "
                            "expected '[', '{', or a literal");
  EXPECT_EQ(Parsed("{\"a\":1} trailing").rfind("error: not valid JSON at byte 11: syntax error", 0), 0u);
  EXPECT_EQ(Parsed(std::string(100, '[')), "error: invalid: JSON nested deeper than 64");
  EXPECT_EQ(Parsed("{\"a\":1,\"a\":2}"), "error: invalid: key 'a' is given twice in one object");
  EXPECT_EQ(Parsed("[18446744073709551615]"),
            "error: invalid: the number 18446744073709551615 does not fit a 64-bit integer");
  std::string keys = "{";
  for (size_t i = 0; i <= kMaxJsonObjectKeys; ++i) keys += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":0";
  EXPECT_EQ(Parsed(keys + "}"), "error: invalid: an object has more than 4096 keys");
}

TEST(Json, AssigningAKeyAgainReplacesItInPlace) {
  Json object = Json::object();
  object["a"] = 1;
  object["b"] = 2;
  object["a"] = 3;
  EXPECT_EQ(DumpJson(object), R"({"a":3,"b":2})");
}

/// A random document of every kind of value, with strings drawn from bytes that take each of DumpJson's
/// ways: printable ASCII, quotes and backslashes, control characters, DEL, valid UTF-8 of 2 to 4 bytes,
/// and bytes that are no UTF-8 at all.
Json RandomDocument(std::mt19937& random, int depth) {
  static const std::vector<std::string> pieces = {"a",
                                                  "Z",
                                                  "0",
                                                  " ",
                                                  "/",
                                                  ".",
                                                  "_",
                                                  "\"",
                                                  "\\",
                                                  "\n",
                                                  "\t",
                                                  std::string(1, '\0'),
                                                  "\x01",
                                                  "\x1f",
                                                  "\x7f",
                                                  "\xc3\xa9",
                                                  "\xe2\x82\xac",
                                                  "\xf0\x9f\x8e\xb5",
                                                  "\xff",
                                                  "\xc3",
                                                  "\x80"};
  auto text = [&] {
    std::string out;
    for (int i = static_cast<int>(random() % 6); i > 0; --i) out += pieces[random() % pieces.size()];
    return out;
  };
  switch (depth > 3 ? random() % 6 : random() % 8) {
    case 0:
      return nullptr;
    case 1:
      return random() % 2 == 0;
    case 2: {
      static const std::vector<int64_t> ints = {0,
                                                -1,
                                                7,
                                                std::numeric_limits<int64_t>::min(),
                                                std::numeric_limits<int64_t>::min() + 1,
                                                std::numeric_limits<int64_t>::max() - 1,
                                                std::numeric_limits<int64_t>::max()};
      return ints[random() % ints.size()];
    }
    case 3:
      return static_cast<uint64_t>(std::numeric_limits<uint64_t>::max() - random() % 3);
    case 4:
      return 0.1 * static_cast<double>(random() % 1000) - 3.0;
    case 5:
      return text();
    case 6: {
      Json array = Json::array();
      for (int i = static_cast<int>(random() % 4); i > 0; --i) array.push_back(RandomDocument(random, depth + 1));
      return array;
    }
    default: {
      Json object = Json::object();
      for (int i = static_cast<int>(random() % 4); i > 0; --i) object[text()] = RandomDocument(random, depth + 1);
      return object;
    }
  }
}

TEST(Json, DumpEqualsNlohmannsOwnCompactTextByteForByte) {
  std::mt19937 random(36);
  for (int i = 0; i < 3000; ++i) {
    const Json document = RandomDocument(random, 0);
    ASSERT_EQ(DumpJson(document), document.dump(-1, ' ', false, Json::error_handler_t::replace)) << "document " << i;
  }
}

TEST(Json, InvalidUtf8IsReplacedNotThrown) {
  Json name = std::string("LSTM\xff");
  EXPECT_EQ(DumpJson(name), "\"LSTM\xef\xbf\xbd\"");
}

TEST(Json, StreamedElementsReachTheSinkInOrderAndAreNotKept) {
  // Objects, scalars and arrays of the streamed array alike; a nested "states" and another key's array are
  // kept as they are.
  const std::string text = R"({"version":1,"states":[{"a":1,"b":{"states":[7]}},2,[3,4],"x"],"other":[5]})";
  std::vector<std::string> seen;
  const Json document = ParseJson(text, "states", [&](Json& element) { seen.push_back(DumpJson(element)); });
  EXPECT_EQ(seen, (std::vector<std::string>{R"({"a":1,"b":{"states":[7]}})", "2", "[3,4]", R"("x")"}));
  EXPECT_EQ(DumpJson(document), R"({"version":1,"states":[],"other":[5]})");
  // Without a sink the document is whole.
  EXPECT_EQ(DumpJson(ParseJson(text)), text);
}

TEST(Json, StreamingStillRefusesWhatTheParserRefuses) {
  int elements = 0;
  const JsonElementSink count = [&](Json&) { ++elements; };
  // A syntax error after complete elements: they were given, and the parse still throws.
  EXPECT_THROW(ParseJson(R"({"states":[{"a":1},{"b":2}] trailing)", "states", count), std::runtime_error);
  EXPECT_EQ(elements, 2);
  EXPECT_THROW(ParseJson(R"({"states":[{"a":1,"a":2}]})", "states", count), std::runtime_error);
  EXPECT_THROW(ParseJson(R"({"states":[1],"states":[2]})", "states", count), std::runtime_error);
}

}  // namespace
}  // namespace rnnstate::json_test
