// Watchdog: work that outlives its limit ends the process with the message; work that finishes
// in time disarms it.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "common/watchdog.hpp"

namespace ktune {
namespace {

using namespace std::chrono_literals;

TEST(WatchdogDeathTest, WorkOverItsLimitEndsTheProcessWithTheMessage) {
  // The watchdog is a thread: the child re-runs the test rather than fork a threaded process.
  const auto style = GTEST_FLAG_GET(death_test_style);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        Watchdog dog(50ms, [] { return std::string("the kernel did not finish within 0.05 s"); });
        std::this_thread::sleep_for(5s);
      },
      ::testing::ExitedWithCode(124), "ktune: error: the kernel did not finish within 0.05 s");
  GTEST_FLAG_SET(death_test_style, style);
}

TEST(Watchdog, WorkInTimeDisarmsIt) {
  int asked = 0;
  {
    Watchdog dog(200ms, [&] {
      ++asked;
      return std::string("fired");
    });
  }  // joins its thread: one still armed would end this test when the limit passes
  EXPECT_EQ(asked, 0);
}

}  // namespace
}  // namespace ktune
