#include "rnnstate/json.h"

#include <limits>
#include <set>
#include <stdexcept>
#include <vector>

namespace rnnstate {

std::string DumpJson(const Json& value) {
  return value.dump(/*indent=*/-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

namespace {

/// Builds a document as nlohmann's own DOM parser does, and refuses nesting deeper than kMaxJsonDepth at
/// the very element where a parser callback that sees each element's depth would. (nlohmann's callback
/// parser itself scans the enclosing array at the end of every object in it: quadratic in the number
/// of state pairs.)
class DepthLimitedDom {
 public:
  explicit DepthLimitedDom(Json& root) : dom_(root) {}

  bool null() { return Checked(open_) && dom_.null(); }
  bool boolean(bool value) { return Checked(open_) && dom_.boolean(value); }
  bool number_integer(Json::number_integer_t value) { return Checked(open_) && dom_.number_integer(value); }
  bool number_unsigned(Json::number_unsigned_t value) {
    // Read as int64 everywhere: a larger number would wrap to a negative one.
    if (value > static_cast<Json::number_unsigned_t>(std::numeric_limits<int64_t>::max())) {
      throw std::runtime_error("invalid: the number " + std::to_string(value) + " does not fit a 64-bit integer");
    }
    return Checked(open_) && dom_.number_unsigned(value);
  }
  bool number_float(Json::number_float_t value, const Json::string_t& text) {
    return Checked(open_) && dom_.number_float(value, text);
  }
  bool string(Json::string_t& value) { return Checked(open_) && dom_.string(value); }
  bool binary(Json::binary_t& value) { return Checked(open_) && dom_.binary(value); }
  bool start_object(std::size_t size) {
    keys_.emplace_back();
    return Checked(open_++) && dom_.start_object(size);
  }
  bool key(Json::string_t& value) {
    // An ordered object looks each key up among the keys before it: its size is bounded, and a key given
    // twice (which value counts?) is refused.
    std::set<std::string>& keys = keys_.back();
    if (keys.size() >= kMaxJsonObjectKeys) {
      throw std::runtime_error("invalid: an object has more than " + std::to_string(kMaxJsonObjectKeys) + " keys");
    }
    if (!keys.insert(value).second) throw std::runtime_error("invalid: key '" + value + "' is given twice in one object");
    return Checked(open_) && dom_.key(value);
  }
  bool end_object() {
    --open_;
    keys_.pop_back();
    return dom_.end_object();
  }
  bool start_array(std::size_t size) { return Checked(open_++) && dom_.start_array(size); }
  bool end_array() {
    --open_;
    return dom_.end_array();
  }
  template <typename Exception>
  bool parse_error(std::size_t position, const std::string& token, const Exception& error) {
    return dom_.parse_error(position, token, error);
  }

 private:
  /// `depth`: the containers open around the element (what a parser callback is given).
  static bool Checked(std::size_t depth) {
    if (depth > static_cast<std::size_t>(kMaxJsonDepth)) {
      throw std::runtime_error("invalid: JSON nested deeper than " + std::to_string(kMaxJsonDepth));
    }
    return true;
  }

  nlohmann::detail::json_sax_dom_parser<Json> dom_;
  std::size_t open_ = 0;
  std::vector<std::set<std::string>> keys_;  // the keys of each open object
};

/// The reason in one of nlohmann's messages, without the library's own prefix
/// ("[json.exception.parse_error.101] parse error at line 1, column 18: ").
std::string Reason(const std::string& message) {
  std::string text = message;
  if (const size_t end = text.find("] "); text.rfind("[json.exception.", 0) == 0 && end != std::string::npos) {
    text.erase(0, end + 2);
  }
  for (const char* lead : {"parse error at ", "parse error: "}) {
    if (text.rfind(lead, 0) != 0) continue;
    const size_t colon = text.find(": ");
    text.erase(0, colon == std::string::npos ? std::string(lead).size() : colon + 2);
  }
  return text;
}

}  // namespace

Json ParseJson(const std::string& text) {
  // The parser itself is iterative, but a deeply nested value is only refused by a handler that sees
  // the depth of every element as it is read.
  Json document;
  DepthLimitedDom dom(document);
  try {
    Json::sax_parse(text, &dom, nlohmann::detail::input_format_t::json, /*strict=*/true, /*ignore_comments=*/false);
  } catch (const Json::parse_error& e) {
    throw std::runtime_error("not valid JSON at byte " + std::to_string(e.byte) + ": " + Reason(e.what()));
  } catch (const Json::exception& e) {
    throw std::runtime_error(std::string("not valid JSON: ") + Reason(e.what()));
  }
  return document;
}

}  // namespace rnnstate
