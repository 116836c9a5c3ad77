#pragma once

#include <charconv>
#include <string>
#include <string_view>
#include <type_traits>

namespace rnnstate {

/// Text built by appending, written as to a stream (`out << "a " << name << count`): the text report's
/// lines without a stream's per-insertion sentry and locale work (20,000 states' lines at 10,000 LSTMs).
/// Integers are written in decimal, as a default-formatted stream writes them; bool is not accepted (a
/// stream writes 1 or 0: say which words are meant).
class TextOut {
 public:
  TextOut& operator<<(std::string_view text) {
    text_.append(text);
    return *this;
  }
  TextOut& operator<<(char c) {
    text_.push_back(c);
    return *this;
  }
  template <
      typename Int,
      std::enable_if_t<std::is_integral_v<Int> && !std::is_same_v<Int, bool> && !std::is_same_v<Int, char>, int> = 0>
  TextOut& operator<<(Int number) {
    char digits[24];
    const auto [end, error] = std::to_chars(digits, digits + sizeof digits, number);
    text_.append(digits, end);
    return *this;
  }

  /// The text so far, moved out (the builder is left empty).
  std::string Take() {
    std::string text = std::move(text_);
    text_.clear();  // a moved-from string is only "valid": made empty as promised
    return text;
  }

 private:
  std::string text_;
};

}  // namespace rnnstate
