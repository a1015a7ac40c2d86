// The stopping rule of timing, driven by synthetic samplers and a fake clock: quiet samples
// stop early, noisy ones must not, and the sample and time budgets hold.
#include <gtest/gtest.h>

#include <random>

#include <fmt/format.h>

#include "bench/stopping.hpp"

namespace ktune::bench {
namespace {

// A sampler of uniform noise of +-`spread` (relative) around 100 us.
std::function<double()> sampler(double spread, uint64_t seed) {
  auto rng = std::make_shared<std::mt19937_64>(seed);
  return [rng, spread] { return std::uniform_real_distribution<double>(100 * (1 - spread), 100 * (1 + spread))(*rng); };
}

const std::function<double()> kNoTimePasses = [] { return 0.0; };

TEST(TimingStopping, QuietSamplesStopAtTheMinimumCount) {
  TimingPolicy policy;
  const Stats s = sample_until_stable([] { return 42.0; }, kNoTimePasses, policy);
  EXPECT_EQ(s.n, policy.min_samples) << "not earlier: a CI from fewer samples is not trusted";
  EXPECT_DOUBLE_EQ(s.median_us, 42.0);
  EXPECT_DOUBLE_EQ(s.rel_ci, 0.0);
  EXPECT_EQ(s.stop, Stop::converged);
  EXPECT_EQ(precision(s), "median within +-0.0% (95% CI); converged");
}

TEST(TimingStopping, ModerateNoiseRunsUntilTheCiIsTight) {
  TimingPolicy policy;
  // +-10% uniform noise needs about 100 samples for a 2% half-width (1.96 * 10% / sqrt(n)).
  const Stats s = sample_until_stable(sampler(0.10, 3), kNoTimePasses, policy);
  EXPECT_LE(s.rel_ci, policy.rel_ci);
  EXPECT_GT(s.n, 3 * policy.min_samples);
  EXPECT_LT(s.n, policy.max_samples);
  EXPECT_NEAR(s.median_us, 100, 2);
}

TEST(TimingStopping, HeavyNoiseNeverStopsEarly) {
  TimingPolicy policy;
  const Stats s = sample_until_stable(sampler(0.5, 5), kNoTimePasses, policy);
  EXPECT_EQ(s.n, policy.max_samples);
  EXPECT_GT(s.rel_ci, policy.rel_ci) << "the result admits it is not converged";
  EXPECT_EQ(s.stop, Stop::max_samples);
  EXPECT_EQ(precision(s),
            fmt::format("median within +-{:.1f}% (95% CI); stopped at the most samples, 500", 100 * s.rel_ci));
}

TEST(TimingStopping, TimeBudgetEndsSampling) {
  TimingPolicy policy;
  policy.budget_ms = 2000;
  double now = 0;
  const Stats s = sample_until_stable(
      sampler(0.5, 11), [&] { return now += 100; }, policy);
  EXPECT_EQ(s.n, 20);  // the clock reads 2000 ms after the 20th sample
  EXPECT_EQ(s.stop, Stop::budget);
}

TEST(TimingStopping, SpentBudgetStillTakesOneSample) {
  TimingPolicy policy;
  policy.budget_ms = 0;
  const Stats s = sample_until_stable([] { return 7.0; }, [] { return 5.0; }, policy);
  EXPECT_EQ(s.n, 1);
  EXPECT_DOUBLE_EQ(s.median_us, 7.0);
  EXPECT_EQ(s.stop, Stop::budget);
  EXPECT_EQ(precision(s), "median not bounded (1 sample); stopped at the time budget");
}

TEST(TimingStopping, BatchFillsTheMinimumSampleTime) {
  TimingPolicy policy;
  policy.min_sample_us = 100;
  policy.max_batch = 64;
  EXPECT_EQ(batch_size(500, policy), 1);
  EXPECT_EQ(batch_size(100, policy), 1);
  EXPECT_EQ(batch_size(30, policy), 4);
  EXPECT_EQ(batch_size(0.5, policy), 64) << "capped";
  EXPECT_EQ(batch_size(0, policy), 64) << "below the event resolution";
}

}  // namespace
}  // namespace ktune::bench
