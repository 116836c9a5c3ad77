#include "rnnstate/json.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <stdexcept>
#include <vector>

namespace rnnstate {

namespace {

/// nlohmann's own compact text of `value`: what DumpJson must equal.
std::string LibraryDump(const Json& value) {
  return value.dump(/*indent=*/-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

/// Appends `text` as a JSON string. Printable ASCII but '"' and '\\' is written as it is; anything else
/// (control characters to escape, bytes of UTF-8 to check and replace when invalid) takes nlohmann's own
/// escaping. nlohmann checks every byte through its UTF-8 decoder and writes a character at a time: for
/// the names metadata is made of, most of the time a rewrite of 10,000 LSTMs spent on its metadata text.
void AppendStringText(const std::string& text, std::string& out) {
  const bool plain = std::all_of(text.begin(), text.end(),
                                 [](unsigned char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; });
  if (!plain) {
    out += LibraryDump(Json(text));
    return;
  }
  out += '"';
  out += text;
  out += '"';
}

template <typename Number>
void AppendNumber(Number number, std::string& out) {
  char digits[24];
  const auto [end, error] = std::to_chars(digits, digits + sizeof digits, number);
  out.append(digits, end);
}

/// Appends LibraryDump(value): AppendJson.
void AppendValue(const Json& value, std::string& out) {
  switch (value.type()) {
    case Json::value_t::object: {
      out += '{';
      bool first = true;
      for (const auto& [key, member] : value.get_ref<const Json::object_t&>()) {
        if (!first) out += ',';
        first = false;
        AppendStringText(key, out);
        out += ':';
        AppendValue(member, out);
      }
      out += '}';
      return;
    }
    case Json::value_t::array: {
      out += '[';
      bool first = true;
      for (const Json& element : value.get_ref<const Json::array_t&>()) {
        if (!first) out += ',';
        first = false;
        AppendValue(element, out);
      }
      out += ']';
      return;
    }
    case Json::value_t::string:
      AppendStringText(value.get_ref<const std::string&>(), out);
      return;
    case Json::value_t::boolean:
      out += value.get<bool>() ? "true" : "false";
      return;
    case Json::value_t::number_integer:
      AppendNumber(value.get<Json::number_integer_t>(), out);
      return;
    case Json::value_t::number_unsigned:
      AppendNumber(value.get<Json::number_unsigned_t>(), out);
      return;
    case Json::value_t::null:
      out += "null";
      return;
    default:  // floating point, binary, discarded: nlohmann's formatting, not to be imitated
      out += LibraryDump(value);
      return;
  }
}

}  // namespace

std::string DumpJson(const Json& value) {
  std::string text;
  AppendValue(value, text);
  return text;
}

void AppendJson(const Json& value, std::string& out) { AppendValue(value, out); }

void AppendJsonString(const std::string& text, std::string& out) { AppendStringText(text, out); }

namespace {

/// Builds a document as nlohmann's own DOM parser does, and refuses nesting deeper than kMaxJsonDepth at
/// the very element where a parser callback that sees each element's depth would. (nlohmann's callback
/// parser itself scans the enclosing array at the end of every object in it: quadratic in the number
/// of state pairs.) The elements of one top-level array (`streamed`) are handed to a sink as each is
/// complete and not kept: a document of a million state pairs is never held whole.
class DepthLimitedDom {
 public:
  DepthLimitedDom(Json& root, const std::string& streamed, const JsonElementSink& sink)
      : root_(root), dom_(root), streamed_(streamed), sink_(sink) {}

  bool null() { return Checked(open_) && dom_.null() && Emitted(); }
  bool boolean(bool value) { return Checked(open_) && dom_.boolean(value) && Emitted(); }
  bool number_integer(Json::number_integer_t value) {
    return Checked(open_) && dom_.number_integer(value) && Emitted();
  }
  bool number_unsigned(Json::number_unsigned_t value) {
    // Read as int64 everywhere: a larger number would wrap to a negative one.
    if (value > static_cast<Json::number_unsigned_t>(std::numeric_limits<int64_t>::max())) {
      throw std::runtime_error("invalid: the number " + std::to_string(value) + " does not fit a 64-bit integer");
    }
    return Checked(open_) && dom_.number_unsigned(value) && Emitted();
  }
  bool number_float(Json::number_float_t value, const Json::string_t& text) {
    return Checked(open_) && dom_.number_float(value, text) && Emitted();
  }
  bool string(Json::string_t& value) { return Checked(open_) && dom_.string(value) && Emitted(); }
  bool binary(Json::binary_t& value) { return Checked(open_) && dom_.binary(value) && Emitted(); }
  bool start_object(std::size_t size) {
    // One key list per depth, reused from object to object: no allocation per object once warm.
    if (keys_.size() <= open_) keys_.resize(open_ + 1);
    keys_[open_].clear();
    return Checked(open_++) && dom_.start_object(size);
  }
  bool key(Json::string_t& value) {
    // An ordered object looks each key up among the keys before it: its size is bounded, and a key given
    // twice (which value counts?) is refused.
    std::vector<std::string>& keys = keys_[open_ - 1];
    if (keys.size() >= kMaxJsonObjectKeys) {
      throw std::runtime_error("invalid: an object has more than " + std::to_string(kMaxJsonObjectKeys) + " keys");
    }
    if (std::find(keys.begin(), keys.end(), value) != keys.end()) {
      throw std::runtime_error("invalid: key '" + value + "' is given twice in one object");
    }
    keys.push_back(value);
    if (open_ == 1) top_key_ = value;
    return Checked(open_) && dom_.key(value);
  }
  bool end_object() {
    --open_;
    return dom_.end_object() && Emitted();
  }
  bool start_array(std::size_t size) {
    const bool streams = sink_ && open_ == 1 && top_key_ == streamed_;
    if (!(Checked(open_++) && dom_.start_array(size))) return false;
    // No top-level key is added while this array is open, so the root's storage, and the array, stay put.
    if (streams) array_ = &*root_.find(streamed_);
    return true;
  }
  bool end_array() {
    --open_;
    if (!dom_.end_array()) return false;
    if (open_ == 1) array_ = nullptr;
    return Emitted();
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

  /// After a value is complete: when it is an element of the streamed array, hands it to the sink and
  /// drops it. Returns true (the parse goes on).
  bool Emitted() {
    if (array_ != nullptr && open_ == 2) {
      auto& elements = array_->get_ref<Json::array_t&>();
      sink_(elements.back());
      elements.pop_back();
    }
    return true;
  }

  Json& root_;
  nlohmann::detail::json_sax_dom_parser<Json> dom_;
  std::size_t open_ = 0;
  std::vector<std::vector<std::string>> keys_;  // the keys of the object open at each depth
  std::string top_key_;                         // the root object's latest key
  const std::string& streamed_;
  const JsonElementSink& sink_;
  Json* array_ = nullptr;  // the streamed array while it is open
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

Json ParseJson(const std::string& text, const std::string& streamed, const JsonElementSink& sink) {
  // The parser itself is iterative, but a deeply nested value is only refused by a handler that sees
  // the depth of every element as it is read.
  Json document;
  DepthLimitedDom dom(document, streamed, sink);
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
