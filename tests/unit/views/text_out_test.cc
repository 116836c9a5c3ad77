// TextOut, the text report's builder: it must write what a default-formatted stream writes.

#include "views/text_out.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <sstream>
#include <string>

namespace rnnstate::text_out_test {
namespace {

TEST(TextOut, WritesWhatAStreamWrites) {
  const std::string name = "lstm_1";
  const size_t count = 20000;
  const int negative = -3;
  const int64_t big = std::numeric_limits<int64_t>::min();
  const uint64_t huge = std::numeric_limits<uint64_t>::max();
  TextOut out;
  std::ostringstream stream;
  out << "node '" << name << "' " << count << ' ' << negative << ' ' << big << ' ' << huge << '\n'
      << std::string_view("view") << 0;
  stream << "node '" << name << "' " << count << ' ' << negative << ' ' << big << ' ' << huge << '\n'
         << std::string_view("view") << 0;
  EXPECT_EQ(out.Take(), stream.str());
}

TEST(TextOut, TakeLeavesItEmpty) {
  TextOut out;
  out << "a";
  EXPECT_EQ(out.Take(), "a");
  out << "b";
  EXPECT_EQ(out.Take(), "b");
}

}  // namespace
}  // namespace rnnstate::text_out_test
