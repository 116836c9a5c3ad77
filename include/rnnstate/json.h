#pragma once
/// \file
/// A minimal JSON value with a strict parser and a deterministic writer. rnnstate only needs JSON for
/// its own metadata and report schemas, so this stays small instead of adding a dependency.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace rnnstate {

/// A JSON value: null, bool, number (integers kept exact as int64), string, array or object.
/// Object keys keep insertion order so that written documents are stable and readable.
class Json {
 public:
  enum class Type { kNull, kBool, kInt, kDouble, kString, kArray, kObject };

  Json() = default;
  Json(std::nullptr_t) {}
  Json(bool value) : type_(Type::kBool), bool_(value) {}
  Json(int value) : type_(Type::kInt), int_(value) {}
  Json(int64_t value) : type_(Type::kInt), int_(value) {}
  Json(double value) : type_(Type::kDouble), double_(value) {}
  Json(const char* value) : type_(Type::kString), string_(value) {}
  Json(std::string value) : type_(Type::kString), string_(std::move(value)) {}

  /// An empty array / object.
  static Json Array() { Json j; j.type_ = Type::kArray; return j; }
  static Json Object() { Json j; j.type_ = Type::kObject; return j; }

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::kNull; }
  bool is_object() const { return type_ == Type::kObject; }
  bool is_array() const { return type_ == Type::kArray; }
  bool is_string() const { return type_ == Type::kString; }

  /// Typed accessors; throw std::runtime_error on a type mismatch.
  bool AsBool() const;
  int64_t AsInt() const;
  const std::string& AsString() const;
  const std::vector<Json>& Items() const;

  /// Appends to an array.
  Json& Push(Json value);
  /// Sets `key` in an object (replacing an existing value, keeping its position).
  Json& Set(const std::string& key, Json value);
  /// The member `key` of an object, or nullptr.
  const Json* Find(const std::string& key) const;
  /// Members of an object in order.
  const std::vector<std::pair<std::string, Json>>& Members() const;

  /// Compact one-line serialization (no spaces); deterministic.
  std::string Dump() const;

  /// Parses a complete JSON document; throws std::runtime_error with the offset on malformed input.
  static Json Parse(const std::string& text);

 private:
  void DumpTo(std::string& out) const;

  Type type_ = Type::kNull;
  bool bool_ = false;
  int64_t int_ = 0;
  double double_ = 0;
  std::string string_;
  std::vector<Json> items_;
  std::vector<std::pair<std::string, Json>> members_;
};

/// Appends `text` to `out` as a quoted JSON string.
void AppendJsonString(std::string& out, const std::string& text);

}  // namespace rnnstate
