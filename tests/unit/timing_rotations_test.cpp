// Input copies for a cold cache: cycling through them touches at least 3x the last-level cache.
#include <gtest/gtest.h>

#include <limits>

#include "backend/backend.hpp"
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

TEST(TimingRotations, AHugeCacheOfTinyCopiesStaysAPositiveCount) {
  EXPECT_EQ(rotations_for(1, int64_t{1} << 30), std::numeric_limits<int>::max()) << "3 Gi copies do not fit an int";
}

// The last-level cache is the larger of the reported L2 and the cache behind it.
TEST(TimingRotations, TheLastLevelCacheOfADevice) {
  backend::DeviceInfo mi300;
  mi300.arch = "gfx942";
  mi300.l2_bytes = 4 << 20;  // one XCD's
  EXPECT_EQ(mi300.last_level_cache_bytes(), int64_t{256} << 20) << "the Infinity Cache of target_facts";
  backend::DeviceInfo mi355 = mi300;
  mi355.arch = "gfx950";
  EXPECT_EQ(mi355.last_level_cache_bytes(), int64_t{256} << 20);
  backend::DeviceInfo mi250 = mi300;
  mi250.arch = "gfx90a";
  mi250.l2_bytes = 8 << 20;
  EXPECT_EQ(mi250.last_level_cache_bytes(), int64_t{8} << 20) << "no cache behind the L2";
  backend::DeviceInfo h200;
  h200.arch = "sm_90a";
  h200.l2_bytes = 60 * kMB;
  EXPECT_EQ(h200.last_level_cache_bytes(), 60 * kMB);
}

TEST(TimingRotations, EmptyCopyIsAnError) {
  EXPECT_THROW(rotations_for(0, 60 * kMB), Error);
  EXPECT_THROW(rotations_for(-5, 60 * kMB), Error);
}

}  // namespace
}  // namespace ktune::bench
