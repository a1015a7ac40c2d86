// utf8_boundary(): cuts that keep whole characters.
#include <gtest/gtest.h>

#include <string>

#include "common/utf8.hpp"

namespace ktune {
namespace {

TEST(Utf8Boundary, NeverInsideACharacter) {
  const std::string text = "a\xC3\xA9"
                           "b\xE2\x80\xA6"
                           "c\xF0\x9F\x98\x80";  // a é b … c 😀
  // Byte offsets: a 0, é 1-2, b 3, … 4-6, c 7, 😀 8-11.
  const size_t expected[] = {0, 1, 1, 3, 4, 4, 4, 7, 8, 8, 8, 8, 12};
  for (size_t at = 0; at <= text.size(); ++at) EXPECT_EQ(utf8_boundary(text, at), expected[at]) << at;
  EXPECT_EQ(utf8_boundary(text, 100), text.size());
  EXPECT_EQ(utf8_boundary("", 5), 0u);
  EXPECT_EQ(utf8_boundary("\x80\x80", 1), 0u) << "stray continuation bytes: back to the start";
}

}  // namespace
}  // namespace ktune
