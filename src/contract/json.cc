#include "rnnstate/json.h"

#include <stdexcept>

namespace rnnstate {

std::string DumpJson(const Json& value) {
  return value.dump(/*indent=*/-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

Json ParseJson(const std::string& text) {
  // The parser itself is iterative, but a deeply nested value is only refused by a callback that sees
  // the depth of every element as it is read.
  auto limit_depth = [](int depth, Json::parse_event_t, Json&) {
    if (depth > kMaxJsonDepth) throw std::runtime_error("JSON nested deeper than " + std::to_string(kMaxJsonDepth));
    return true;
  };
  try {
    return Json::parse(text, limit_depth);
  } catch (const Json::exception& e) {
    throw std::runtime_error(e.what());
  }
}

}  // namespace rnnstate
