#include "rnnstate/json.h"

#include <stdexcept>

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
  bool number_unsigned(Json::number_unsigned_t value) { return Checked(open_) && dom_.number_unsigned(value); }
  bool number_float(Json::number_float_t value, const Json::string_t& text) {
    return Checked(open_) && dom_.number_float(value, text);
  }
  bool string(Json::string_t& value) { return Checked(open_) && dom_.string(value); }
  bool binary(Json::binary_t& value) { return Checked(open_) && dom_.binary(value); }
  bool start_object(std::size_t size) { return Checked(open_++) && dom_.start_object(size); }
  bool key(Json::string_t& value) { return Checked(open_) && dom_.key(value); }
  bool end_object() {
    --open_;
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
      throw std::runtime_error("JSON nested deeper than " + std::to_string(kMaxJsonDepth));
    }
    return true;
  }

  nlohmann::detail::json_sax_dom_parser<Json> dom_;
  std::size_t open_ = 0;
};

}  // namespace

Json ParseJson(const std::string& text) {
  // The parser itself is iterative, but a deeply nested value is only refused by a handler that sees
  // the depth of every element as it is read.
  Json document;
  DepthLimitedDom dom(document);
  try {
    Json::sax_parse(text, &dom, nlohmann::detail::input_format_t::json, /*strict=*/true, /*ignore_comments=*/false);
  } catch (const Json::exception& e) {
    throw std::runtime_error(e.what());
  }
  return document;
}

}  // namespace rnnstate
