#pragma once
// Order statistics of timing samples. Pure functions, so that the stopping rule built on them
// is tested on the CPU with synthetic samples.
#include <limits>
#include <optional>
#include <span>
#include <string_view>
#include <utility>

namespace ktune::bench {

// Why sampling stopped: the median known to the policy's precision, or a limit reached first.
enum class Stop {
  none,         // not sampled by sample_until_stable (a summary of given samples)
  converged,    // the median's 95% CI within TimingPolicy::rel_ci
  max_samples,  // TimingPolicy::max_samples taken
  budget,       // TimingPolicy::budget_ms spent
  abandoned,    // two launches slower than TimingPolicy::abandon_us: a loser, timed no further
};
std::string_view to_string(Stop s) noexcept;
std::optional<Stop> stop_from_string(std::string_view text) noexcept;

struct Stats {
  double median_us = 0;
  double p10_us = 0;
  double p90_us = 0;
  int n = 0;  // samples (each the per-launch time of one sample's batch)
  // Half-width of the median's 95% confidence interval relative to the median; infinite while
  // there are too few samples to bound the median at all.
  double rel_ci = std::numeric_limits<double>::infinity();
  // What the timed launches took on the device, every launch of every sample and those timed
  // alone before sampling (not the warm-up): the part of a measurement's wall time that is kernel.
  double timed_ms = 0;
  Stop stop = Stop::none;
};

// 0-based ranks (lo, hi) of the sorted samples that bracket the median of the distribution
// with at least `confidence` probability, from the binomial distribution of the number of
// samples below the median (distribution-free, no bootstrap). nullopt when n is too small for
// any such interval (n < 6 at 95%).
std::optional<std::pair<int, int>> median_ci_ranks(int n, double confidence = 0.95);

// Median, 10th/90th percentile (linear interpolation) and the median's relative CI. A sample that
// is not a time (NaN, infinite, negative) makes the three NaN.
Stats summarize(std::span<const double> samples_us);

// What a measurement must be to be a time at all: samples, finite, a positive median between the
// 10th and 90th percentiles. What the database requires of an ok row and the roofline divides by.
bool plausible(const Stats& s) noexcept;

}  // namespace ktune::bench
