// A status message longer than ktune_result::message holds is cut between whole characters and
// ends with "...", so that a caller can tell a cut message from a whole one.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "dispatch/runtime/message.hpp"

namespace ktune::runtime {
namespace {

constexpr size_t kRoom = sizeof(ktune_result::message) - 1;  // the terminator's byte aside

TEST(RuntimeMessage, AMessageThatFitsIsWhole) {
  const std::string text(kRoom, 'x');
  const Message m("{}", text);
  EXPECT_EQ(std::string_view(m), text);
}

TEST(RuntimeMessage, ALongMessageIsCutBetweenCharactersAndSaysSo) {
  // Two-byte characters from byte 5 on: the cut for "..." (at 508) falls inside the one at 507.
  std::string chars;
  for (size_t i = 0; i < kRoom; ++i) chars += "\xc3\xa9";  // é
  const Message message("path {}", chars.substr(0, 2 * 300) + "x" + chars);
  const std::string_view m = message;
  ASSERT_EQ(m.size(), 507u + 3u) << "the last whole character before the cut, then \"...\"";
  EXPECT_TRUE(m.ends_with("\xc3\xa9...")) << m;
  EXPECT_TRUE(m.starts_with("path \xc3\xa9"));
}

// What report() writes of any text, Message or not (an exception's what(), a path): the same cut.
TEST(RuntimeMessage, AnyTextIsFittedTheSameWay) {
  char out[16];
  EXPECT_EQ(std::string_view(out, write_fitted("short", out, sizeof out)), "short");
  EXPECT_EQ(std::string_view(out, write_fitted("exactly sixteen!", out, sizeof out)), "exactly sixteen!");
  EXPECT_EQ(std::string_view(out, write_fitted("one byte too long", out, sizeof out)), "one byte too ...");
  EXPECT_EQ(std::string_view(out, write_fitted("twelve bytes\xc3\xa9\xc3\xa9\xc3\xa9", out, sizeof out)),
            "twelve bytes...")
      << "the cut at 13 falls inside the first character";
}

}  // namespace
}  // namespace ktune::runtime
