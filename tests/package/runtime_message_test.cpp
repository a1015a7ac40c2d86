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
  // Two-byte characters from an odd offset: the cut point falls inside one.
  const std::string text = "x" + [] {
    std::string s;
    for (size_t i = 0; i < kRoom; ++i) s += "\xc3\xa9";  // é
    return s;
  }();
  const Message message("path {}", text);
  const std::string_view m = message;
  ASSERT_LE(m.size(), kRoom);
  EXPECT_TRUE(m.ends_with("...")) << m;
  const auto body = m.substr(0, m.size() - 3);
  EXPECT_TRUE(body.starts_with("path x\xc3\xa9"));
  EXPECT_TRUE(body.ends_with("\xc3\xa9")) << "no character cut in two";
  EXPECT_GE(m.size(), kRoom - 1) << "as much of the message as fits";
}

}  // namespace
}  // namespace ktune::runtime
