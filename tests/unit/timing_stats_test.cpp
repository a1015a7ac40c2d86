// Order statistics of timing samples: percentiles, and the distribution-free confidence
// interval of the median that decides when timing stops.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "bench/stats.hpp"

namespace ktune::bench {
namespace {

TEST(TimingStats, MedianCiNeedsSixSamplesAt95Percent) {
  EXPECT_FALSE(median_ci_ranks(5).has_value()) << "2 * 0.5^5 = 6.25% > 5%: no interval exists";
  ASSERT_TRUE(median_ci_ranks(6).has_value());
  EXPECT_EQ(*median_ci_ranks(6), std::make_pair(0, 5));  // 2 * 0.5^6 = 3.1%
}

TEST(TimingStats, MedianCiRanksMatchTheBinomialTable) {
  // n = 100: P(B <= 39) = 1.76% <= 2.5% < P(B <= 40) = 2.84%, so [x_(40), x_(61)] 1-based.
  EXPECT_EQ(*median_ci_ranks(100), std::make_pair(39, 60));
  // n = 20: P(B <= 5) = 2.07% <= 2.5% < P(B <= 6) = 5.77%, so [x_(6), x_(15)].
  EXPECT_EQ(*median_ci_ranks(20), std::make_pair(5, 14));
  // Large n stays finite (no underflow of 0.5^n) and tightens around the middle.
  auto [lo, hi] = *median_ci_ranks(5000);
  EXPECT_NEAR(lo, 2500 - 1.96 * std::sqrt(5000.0) / 2, 2);
  EXPECT_EQ(lo + hi, 4999) << "symmetric";
}

TEST(TimingStats, MedianCiCoversTheTrueMedianAtLeast95PercentOfTheTime) {
  std::mt19937_64 rng(7);
  std::exponential_distribution<double> skewed(1.0);
  const double true_median = std::log(2.0);
  const int trials = 4000;
  int covered = 0;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> xs(30);
    for (double& x : xs) x = skewed(rng);
    std::sort(xs.begin(), xs.end());
    auto [lo, hi] = *median_ci_ranks(30);
    covered += xs[lo] <= true_median && true_median <= xs[hi];
  }
  EXPECT_GE(covered, trials * 0.94);
  EXPECT_LE(covered, trials * 0.995) << "an interval that covers always is uselessly wide";
}

TEST(TimingStats, SummarizeGivesMedianAndInterpolatedPercentiles) {
  std::vector<double> xs;
  for (int i = 11; i >= 1; --i) xs.push_back(i);  // unsorted on purpose
  const Stats s = summarize(xs);
  EXPECT_EQ(s.n, 11);
  EXPECT_DOUBLE_EQ(s.median_us, 6);
  EXPECT_DOUBLE_EQ(s.p10_us, 2);
  EXPECT_DOUBLE_EQ(s.p90_us, 10);
  // n = 11: interval [x_(2), x_(10)] = [2, 10], half-width 4 around 6.
  EXPECT_DOUBLE_EQ(s.rel_ci, 4.0 / 6.0);

  const Stats even = summarize(std::vector<double>{4, 1, 3, 2});
  EXPECT_DOUBLE_EQ(even.median_us, 2.5);
  EXPECT_TRUE(std::isinf(even.rel_ci)) << "4 samples cannot bound the median";
}

TEST(TimingStats, TightSamplesHaveSmallCiAndNoisyOnesLarge) {
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> tight(99.5, 100.5), noisy(50, 150);
  std::vector<double> a(50), b(50);
  for (double& x : a) x = tight(rng);
  for (double& x : b) x = noisy(rng);
  EXPECT_LT(summarize(a).rel_ci, 0.005);
  EXPECT_GT(summarize(b).rel_ci, 0.05);
}

TEST(TimingStats, EmptyInputHasNoMedian) {
  const Stats s = summarize(std::vector<double>{});
  EXPECT_EQ(s.n, 0);
  EXPECT_TRUE(std::isinf(s.rel_ci));
}

// A sample that is no time made std::sort undefined: {1,2,NaN,3,4,5,6} summarised to a median of
// 3, which the sweep recorded as ok. Now the summary is NaN, and not plausible.
TEST(TimingStats, ASampleThatIsNoTimeMakesTheSummaryImplausible) {
  for (double bad : {std::nan(""), static_cast<double>(INFINITY), -1.0}) {
    const Stats s = summarize(std::vector<double>{1, 2, bad, 3, 4, 5, 6});
    EXPECT_EQ(s.n, 7);
    EXPECT_TRUE(std::isnan(s.median_us)) << bad;
    EXPECT_FALSE(plausible(s)) << bad;
  }
  EXPECT_TRUE(plausible(summarize(std::vector<double>{1, 2, 3, 4, 5, 6, 7})));
}

TEST(TimingStats, PlausibleIsATimeBetweenItsPercentiles) {
  EXPECT_FALSE(plausible(Stats{})) << "no samples";
  EXPECT_TRUE(plausible(Stats{5, 4, 6, 3}));
  EXPECT_FALSE(plausible(Stats{0, 0, 0, 20})) << "zero";
  EXPECT_FALSE(plausible(Stats{5, 6, 7, 3})) << "median below p10";
  EXPECT_FALSE(plausible(Stats{5, 4, 4.5, 3})) << "median above p90";
  EXPECT_FALSE(plausible(Stats{5, 4, INFINITY, 3})) << "infinite p90";
}

}  // namespace
}  // namespace ktune::bench
