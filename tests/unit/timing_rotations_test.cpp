// Input copies for a cold L2: cycling through them touches at least 3x the L2.
#include <gtest/gtest.h>

#include "bench/rotations.hpp"
#include "common/error.hpp"

namespace ktune::bench {
namespace {

constexpr int64_t kMB = 1000 * 1000;

TEST(TimingRotations, CopiesCoverThreeTimesTheL2) {
  EXPECT_EQ(rotations_for(1 * kMB, 60 * kMB), 180);
  EXPECT_EQ(rotations_for(20 * kMB, 60 * kMB), 9);   // exactly 3x
  EXPECT_EQ(rotations_for(21 * kMB, 60 * kMB), 9);   // 8 copies would be 168 MB < 180 MB
  EXPECT_EQ(rotations_for(19 * kMB, 60 * kMB), 10);  // 9 copies would be 171 MB < 180 MB
}

TEST(TimingRotations, OneCopyWhenItAloneExceedsThreeL2s) {
  EXPECT_EQ(rotations_for(180 * kMB, 60 * kMB), 1);
  EXPECT_EQ(rotations_for(1000 * kMB, 60 * kMB), 1);
  EXPECT_EQ(rotations_for(1, 0), 1) << "no L2";
}

TEST(TimingRotations, EmptyCopyIsAnError) {
  EXPECT_THROW(rotations_for(0, 60 * kMB), Error);
  EXPECT_THROW(rotations_for(-5, 60 * kMB), Error);
}

}  // namespace
}  // namespace ktune::bench
