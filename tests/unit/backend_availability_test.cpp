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
  for (Backend* b : all())
    for (const char* arch : {"gfx90a", "gfx942", "gfx950", "sm_90a"}) {
      if (!b->handles_arch(arch)) continue;
      if (b->compiler_available(arch)) {
        EXPECT_EQ(b->compiler_unavailable_reason(arch), "") << b->name() << " " << arch;
        EXPECT_FALSE(b->compiler_version(arch).empty()) << b->name() << " " << arch;
      } else {
        EXPECT_FALSE(b->compiler_unavailable_reason(arch).empty()) << b->name() << " " << arch;
        EXPECT_THROW(b->compiler_version(arch), Unavailable) << b->name() << " " << arch;
      }
      // The compilers listed for the arch: the chosen one is the one compiler_version names.
      size_t chosen = 0;
      for (const CompilerStatus& c : b->compilers(arch)) {
        EXPECT_EQ(c.chosen && !c.why_not.empty(), false) << c.name << " chosen though it cannot build " << arch;
        chosen += c.chosen;
      }
      EXPECT_EQ(chosen, b->compiler_available(arch) ? 1u : 0u) << b->name() << " " << arch;
    }
}

}  // namespace
}  // namespace ktune::backend
