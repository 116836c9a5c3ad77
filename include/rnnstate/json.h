#pragma once
/// \file
/// JSON for rnnstate's metadata and report schemas: Debian's nlohmann-json, with key order kept (so
/// written documents are byte-stable) and two entry points that fit untrusted input.

#include <nlohmann/json.hpp>
#include <string>

namespace rnnstate {

/// A JSON value whose objects keep their keys in insertion order.
using Json = nlohmann::ordered_json;

/// Deepest nesting ParseJson accepts: metadata is two levels deep, so anything deeper is hostile.
inline constexpr int kMaxJsonDepth = 64;

/// Compact one-line text (no spaces). Strings that are not valid UTF-8 (names read from a model) get
/// U+FFFD for the bad bytes instead of an exception.
std::string DumpJson(const Json& value);

/// Parses a complete document from untrusted text (metadata read from a model). Throws
/// std::runtime_error naming the position on malformed input, trailing text, or nesting deeper than
/// kMaxJsonDepth.
Json ParseJson(const std::string& text);

}  // namespace rnnstate
