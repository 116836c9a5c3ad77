#pragma once
/// \file
/// An optional value held on the heap: the part of std::optional's interface the analysis uses, for
/// records that exist once per state and are usually empty (an empty one costs a pointer, not the value's
/// size: an exposure is 288 bytes, and 20,000 states of a large model mostly have none).

#include <memory>
#include <utility>

namespace rnnstate {

/// std::optional<T> with the value out of line; copies copy the value.
template <typename T>
class BoxedOptional {
 public:
  BoxedOptional() = default;
  BoxedOptional(T value) : value_(std::make_unique<T>(std::move(value))) {}  // NOLINT: as std::optional
  BoxedOptional(const BoxedOptional& other) : value_(other ? std::make_unique<T>(*other) : nullptr) {}
  BoxedOptional(BoxedOptional&&) noexcept = default;
  BoxedOptional& operator=(const BoxedOptional& other) {
    if (this != &other) value_ = other ? std::make_unique<T>(*other) : nullptr;
    return *this;
  }
  BoxedOptional& operator=(BoxedOptional&&) noexcept = default;
  BoxedOptional& operator=(T value) {
    value_ = std::make_unique<T>(std::move(value));
    return *this;
  }

  /// True when a value is held.
  bool has_value() const { return value_ != nullptr; }
  explicit operator bool() const { return has_value(); }
  /// The value; only when has_value().
  const T& operator*() const { return *value_; }
  T& operator*() { return *value_; }
  const T* operator->() const { return value_.get(); }
  T* operator->() { return value_.get(); }
  /// The value, or nullptr when none is held.
  const T* get() const { return value_.get(); }
  /// Drops the value.
  void reset() { value_.reset(); }

 private:
  std::unique_ptr<T> value_;
};

}  // namespace rnnstate
