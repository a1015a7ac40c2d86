// A backend whose runtime or device is missing says why, and refuses device work with that
// reason instead of crashing (the case on CPU-only machines such as CI).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backend/backend.hpp"
#include "common/error.hpp"

namespace ktune::backend {
namespace {

using ::testing::HasSubstr;

TEST(BackendAvailability, UnavailableRuntimeGivesItsReasonEverywhere) {
  int checked = 0;
  for (Backend* b : all()) {
    if (b->available()) continue;
    ++checked;
    const std::string reason = b->unavailable_reason();
    EXPECT_FALSE(reason.empty()) << b->name();
    EXPECT_EQ(b->device_count(), 0) << b->name();
    try {
      b->open(0);
      ADD_FAILURE() << b->name() << ": open(0) succeeded without a runtime";
    } catch (const Unavailable& e) {
      EXPECT_THAT(e.what(), HasSubstr(reason)) << b->name();
    }
    EXPECT_THROW(b->device_info(0), Unavailable) << b->name();
    EXPECT_THROW(b->driver_version(), Unavailable) << b->name();
  }
  if (checked == 0) GTEST_SKIP() << "every built backend has a usable GPU here";
}

TEST(BackendAvailability, AvailableRuntimeHasNoReasonAndADevice) {
  int checked = 0;
  for (Backend* b : all()) {
    if (!b->available()) continue;
    ++checked;
    EXPECT_EQ(b->unavailable_reason(), "") << b->name();
    EXPECT_GT(b->device_count(), 0) << b->name();
    EXPECT_FALSE(b->driver_version().empty()) << b->name();
    EXPECT_THROW(b->device_info(b->device_count()), Error) << b->name() << ": ordinal past the last device";
  }
  if (checked == 0) GTEST_SKIP() << "no built backend has a usable GPU here";
}

TEST(BackendAvailability, CompilerStateIsConsistent) {
  for (Backend* b : all()) {
    if (b->compiler_available()) {
      EXPECT_EQ(b->compiler_unavailable_reason(), "") << b->name();
      EXPECT_FALSE(b->compiler_version().empty()) << b->name();
    } else {
      EXPECT_FALSE(b->compiler_unavailable_reason().empty()) << b->name();
      EXPECT_THROW(b->compiler_version(), Unavailable) << b->name();
    }
  }
}

}  // namespace
}  // namespace ktune::backend
