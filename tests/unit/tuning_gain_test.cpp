// tuning_gain(): the single config best on average and what the per-key winners gain over it.
#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "db/tuning_gain.hpp"
#include "unit/db_test_support.hpp"

namespace ktune::db {
namespace {

using ::testing::HasSubstr;

// Two keys, three configs:          key A   key B
//   rows=16                          10      40      (best on A)
//   rows=32                          20      20      (best on B)
//   rows=64                          12      30
// Ratios to the per-key best: 16: 1, 2 (geomean sqrt 2 = 1.414); 32: 2, 1 (1.414); 64: 1.2, 1.5
// (geomean sqrt 1.8 = 1.342): rows=64 is the single config best on average.
std::vector<Measurement> two_keys() {
  const auto a = test::key(16, 1), b = test::key(128, 1);
  return {test::timed(1, a, test::config(16), 10), test::timed(1, b, test::config(16), 40),
          test::timed(1, a, test::config(32), 20), test::timed(1, b, test::config(32), 20),
          test::timed(1, a, test::config(64), 12), test::timed(1, b, test::config(64), 30)};
}

TEST(TuningGain, BestSingleConfigIsTheLowestGeometricMeanOfRatios) {
  const auto g = tuning_gain(two_keys());
  EXPECT_EQ(g.run_id, 1);
  EXPECT_EQ(g.keys, 2);
  EXPECT_EQ(g.configs, 3);
  EXPECT_EQ(g.configs_on_every_key, 3);
  ASSERT_TRUE(g.best_single);
  EXPECT_EQ(*g.best_single, test::config(64));
  EXPECT_NEAR(g.gain_geomean, std::sqrt(1.2 * 1.5), 1e-12);
  EXPECT_NEAR(g.gain_max, 1.5, 1e-12);
  EXPECT_EQ(g.worst_key, test::key(128, 1));
}

TEST(TuningGain, OnlyConfigsTimedOkOnEveryKeyCanBeTheSingleConfig) {
  auto ms = two_keys();
  // rows=64 fails verification on key B (a faster time that must not count), rows=16 lacks key B.
  ms[5] = test::timed(1, test::key(128, 1), test::config(64), 5, Status::verify_failed);
  ms.erase(ms.begin() + 1);
  const auto g = tuning_gain(ms);
  EXPECT_EQ(g.configs_on_every_key, 1);
  ASSERT_TRUE(g.best_single);
  EXPECT_EQ(*g.best_single, test::config(32));
  EXPECT_NEAR(g.gain_geomean, std::sqrt(20.0 / 10.0 * 1.0), 1e-12) << "key A's best is rows=16 (10 us)";
}

TEST(TuningGain, TheFastestOfRepeatedMeasurementsCounts) {
  auto ms = two_keys();
  ms.push_back(test::timed(1, test::key(128, 1), test::config(64), 20));  // rows=64 now ties rows=32 on key B
  const auto g = tuning_gain(ms);
  ASSERT_TRUE(g.best_single);
  EXPECT_EQ(*g.best_single, test::config(64));
  EXPECT_NEAR(g.gain_geomean, std::sqrt(1.2 * 1.0), 1e-12);
}

TEST(TuningGain, NoConfigOnEveryKeyLeavesNoSingleConfig) {
  const auto g = tuning_gain({test::timed(1, test::key(16, 1), test::config(16), 10),
                              test::timed(1, test::key(128, 1), test::config(64), 30)});
  EXPECT_EQ(g.keys, 2);
  EXPECT_EQ(g.configs_on_every_key, 0);
  EXPECT_FALSE(g.best_single);
}

TEST(TuningGain, OneConfigForEverythingGainsNothing) {
  const auto g = tuning_gain({test::timed(1, test::key(16, 1), test::config(16), 10),
                              test::timed(1, test::key(128, 1), test::config(16), 30)});
  ASSERT_TRUE(g.best_single);
  EXPECT_DOUBLE_EQ(g.gain_geomean, 1.0);
}

TEST(TuningGain, MixedRunsAreRefused) {
  auto ms = two_keys();
  ms.back().run_id = 2;
  try {
    tuning_gain(ms);
    FAIL() << "measurements of two runs were accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("runs 1 and 2"));
  }
  // Run 0 is a run like any other (SQLite never numbers one 0, another tool may).
  ms = two_keys();
  ms.front().run_id = 0;
  try {
    tuning_gain(ms);
    FAIL() << "measurements of runs 0 and 1 were accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("runs 0 and 1"));
  }
  for (auto& m : ms) m.run_id = 0;
  EXPECT_EQ(tuning_gain(ms).run_id, 0);
  EXPECT_TRUE(tuning_gain(ms).best_single);
}

}  // namespace
}  // namespace ktune::db
