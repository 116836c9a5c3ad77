#pragma once
/// \file
/// JSON for rnnstate's metadata and report schemas: Debian's nlohmann-json, with key order kept (so
/// written documents are byte-stable) and two entry points that fit untrusted input.

#include <nlohmann/json.hpp>
#include <cstddef>
#include <functional>
#include <string>

namespace rnnstate {

/// A JSON value whose objects keep their keys in insertion order.
using Json = nlohmann::ordered_json;

/// Deepest nesting ParseJson accepts: metadata is two levels deep, so anything deeper is hostile.
inline constexpr int kMaxJsonDepth = 64;
/// Most keys one object may have: metadata objects have about twenty, and an ordered object's lookups
/// are linear in its keys.
inline constexpr size_t kMaxJsonObjectKeys = 4096;

/// Compact one-line text (no spaces). Strings that are not valid UTF-8 (names read from a model) get
/// U+FFFD for the bad bytes instead of an exception.
std::string DumpJson(const Json& value);
/// Appends DumpJson(value) to `out`.
void AppendJson(const Json& value, std::string& out);
/// Appends DumpJson(Json(text)) to `out`: `text` as a JSON string, without making a Json of it.
void AppendJsonString(const std::string& text, std::string& out);

/// Parses a complete document from untrusted text (metadata read from a model). Throws
/// std::runtime_error with a message to follow "metadata 'rnnstate' is ": "not valid JSON at byte N:
/// REASON" on malformed input or trailing text, "invalid: ..." for nesting deeper than kMaxJsonDepth, an
/// object with more than kMaxJsonObjectKeys keys or one key twice, or an integer beyond int64.
/// With `sink`, each element of the array under the root object's key `streamed` is given to `sink` as
/// soon as it is parsed and then dropped: that array stays in the document, empty (a document with a
/// million state pairs need not be held whole). Elements reach the sink in order, before the parse has
/// seen the rest of the text, so a later syntax error still throws.
using JsonElementSink = std::function<void(Json& element)>;
Json ParseJson(const std::string& text, const std::string& streamed = "", const JsonElementSink& sink = nullptr);

}  // namespace rnnstate
