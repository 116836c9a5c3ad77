#include "rnnstate/json.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace rnnstate {

bool Json::AsBool() const {
  if (type_ != Type::kBool) throw std::runtime_error("JSON: expected a boolean");
  return bool_;
}

int64_t Json::AsInt() const {
  if (type_ != Type::kInt) throw std::runtime_error("JSON: expected an integer");
  return int_;
}

const std::string& Json::AsString() const {
  if (type_ != Type::kString) throw std::runtime_error("JSON: expected a string");
  return string_;
}

const std::vector<Json>& Json::Items() const {
  if (type_ != Type::kArray) throw std::runtime_error("JSON: expected an array");
  return items_;
}

Json& Json::Push(Json value) {
  if (type_ != Type::kArray) throw std::runtime_error("JSON: Push on a non-array");
  items_.push_back(std::move(value));
  return items_.back();
}

Json& Json::Set(const std::string& key, Json value) {
  if (type_ != Type::kObject) throw std::runtime_error("JSON: Set on a non-object");
  for (auto& member : members_) {
    if (member.first == key) {
      member.second = std::move(value);
      return member.second;
    }
  }
  members_.emplace_back(key, std::move(value));
  return members_.back().second;
}

const Json* Json::Find(const std::string& key) const {
  if (type_ != Type::kObject) return nullptr;
  for (const auto& member : members_) {
    if (member.first == key) return &member.second;
  }
  return nullptr;
}

const std::vector<std::pair<std::string, Json>>& Json::Members() const {
  if (type_ != Type::kObject) throw std::runtime_error("JSON: expected an object");
  return members_;
}

void AppendJsonString(std::string& out, const std::string& text) {
  out += '"';
  for (unsigned char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
          out += buffer;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

std::string Json::Dump() const {
  std::string out;
  DumpTo(out);
  return out;
}

void Json::DumpTo(std::string& out) const {
  switch (type_) {
    case Type::kNull: out += "null"; break;
    case Type::kBool: out += bool_ ? "true" : "false"; break;
    case Type::kInt: out += std::to_string(int_); break;
    case Type::kDouble: {
      if (!std::isfinite(double_)) {
        out += "null";  // JSON has no NaN or infinity
        break;
      }
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, "%.6g", double_);
      out += buffer;
      break;
    }
    case Type::kString: AppendJsonString(out, string_); break;
    case Type::kArray: {
      out += '[';
      for (size_t i = 0; i < items_.size(); ++i) {
        if (i) out += ',';
        items_[i].DumpTo(out);
      }
      out += ']';
      break;
    }
    case Type::kObject: {
      out += '{';
      for (size_t i = 0; i < members_.size(); ++i) {
        if (i) out += ',';
        AppendJsonString(out, members_[i].first);
        out += ':';
        members_[i].second.DumpTo(out);
      }
      out += '}';
      break;
    }
  }
}

namespace {

/// Recursive-descent parser over a string; depth-limited so hostile metadata cannot overflow the stack.
class Parser {
 public:
  explicit Parser(const std::string& text) : text_(text) {}

  Json ParseDocument() {
    Json value = ParseValue(0);
    SkipSpace();
    if (pos_ != text_.size()) Fail("trailing characters");
    return value;
  }

 private:
  static constexpr int kMaxDepth = 64;

  [[noreturn]] void Fail(const std::string& what) const {
    throw std::runtime_error("JSON: " + what + " at offset " + std::to_string(pos_));
  }

  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\r' ||
                                   text_[pos_] == '\t')) {
      ++pos_;
    }
  }

  bool Consume(const char* literal) {
    size_t n = std::char_traits<char>::length(literal);
    if (text_.compare(pos_, n, literal) == 0) {
      pos_ += n;
      return true;
    }
    return false;
  }

  Json ParseValue(int depth) {
    if (depth > kMaxDepth) Fail("nesting too deep");
    SkipSpace();
    if (pos_ >= text_.size()) Fail("unexpected end");
    char c = text_[pos_];
    if (c == '{') return ParseObject(depth);
    if (c == '[') return ParseArray(depth);
    if (c == '"') return Json(ParseString());
    if (Consume("true")) return Json(true);
    if (Consume("false")) return Json(false);
    if (Consume("null")) return Json();
    if (c == '-' || (c >= '0' && c <= '9')) return ParseNumber();
    Fail("unexpected character");
  }

  Json ParseObject(int depth) {
    ++pos_;
    Json object = Json::Object();
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == '}') {
      ++pos_;
      return object;
    }
    while (true) {
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != '"') Fail("expected a key");
      std::string key = ParseString();
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != ':') Fail("expected ':'");
      ++pos_;
      object.Set(key, ParseValue(depth + 1));
      SkipSpace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == '}') {
        ++pos_;
        return object;
      }
      Fail("expected ',' or '}'");
    }
  }

  Json ParseArray(int depth) {
    ++pos_;
    Json array = Json::Array();
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == ']') {
      ++pos_;
      return array;
    }
    while (true) {
      array.Push(ParseValue(depth + 1));
      SkipSpace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == ']') {
        ++pos_;
        return array;
      }
      Fail("expected ',' or ']'");
    }
  }

  unsigned ParseHex4() {
    if (pos_ + 4 > text_.size()) Fail("truncated \\u escape");
    unsigned value = 0;
    for (int i = 0; i < 4; ++i) {
      char h = text_[pos_++];
      value <<= 4;
      if (h >= '0' && h <= '9') value |= h - '0';
      else if (h >= 'a' && h <= 'f') value |= h - 'a' + 10;
      else if (h >= 'A' && h <= 'F') value |= h - 'A' + 10;
      else Fail("bad \\u escape");
    }
    return value;
  }

  static void AppendUtf8(std::string& out, unsigned code) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  std::string ParseString() {
    ++pos_;  // opening quote
    std::string out;
    while (true) {
      if (pos_ >= text_.size()) Fail("unterminated string");
      char c = text_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) Fail("control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) Fail("unterminated escape");
      char e = text_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned code = ParseHex4();
          if (code >= 0xD800 && code < 0xDC00 && Consume("\\u")) {
            unsigned low = ParseHex4();
            if (low < 0xDC00 || low > 0xDFFF) Fail("bad surrogate pair");
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
          }
          AppendUtf8(out, code);
          break;
        }
        default: Fail("bad escape");
      }
    }
  }

  Json ParseNumber() {
    size_t start = pos_;
    if (text_[pos_] == '-') ++pos_;
    bool is_integer = true;
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c >= '0' && c <= '9') {
        ++pos_;
      } else if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
        is_integer = false;
        ++pos_;
      } else {
        break;
      }
    }
    std::string token = text_.substr(start, pos_ - start);
    try {
      size_t used = 0;
      if (is_integer) {
        int64_t value = std::stoll(token, &used);
        if (used == token.size()) return Json(value);
      } else {
        double value = std::stod(token, &used);
        if (used == token.size()) return Json(value);
      }
    } catch (const std::exception&) {
    }
    Fail("bad number");
  }

  const std::string& text_;
  size_t pos_ = 0;
};

}  // namespace

Json Json::Parse(const std::string& text) { return Parser(text).ParseDocument(); }

}  // namespace rnnstate
