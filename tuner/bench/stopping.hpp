#pragma once
// When to stop timing: the sampling loop with its stopping rule, free of any device so that it
// is tested with synthetic samples and a fake clock.
#include <functional>
#include <string>

#include "bench/stats.hpp"

namespace ktune::bench {

struct TimingPolicy {
  int warmup = 3;        // untimed launches first (code loading, clocks ramping up)
  int min_samples = 10;  // never trust a confidence interval from fewer samples
  int max_samples = 500;
  double rel_ci = 0.02;        // stop once the median's 95% CI half-width is within this fraction
  double budget_ms = 2000;     // wall-clock time for one whole measurement, warm-up included
  double min_sample_us = 100;  // launches shorter than this are batched into one sample...
  int max_batch = 64;          // ...of at most this many launches
  // Two timed launches slower than this (and than min_sample_us), the first two, end the
  // measurement with those two samples (0: never): a candidate twice as slow as its key's best
  // needs no confidence interval to lose.
  double abandon_us = 0;
};

// Takes samples until the median is known to policy.rel_ci (after at least min_samples), or
// max_samples are taken, or elapsed_ms() reaches policy.budget_ms. At least one sample is
// always taken, so the result has a median even when the budget was spent before sampling.
Stats sample_until_stable(const std::function<double()>& take_sample_us, const std::function<double()>& elapsed_ms,
                          const TimingPolicy& policy);

// How well the median is known and why sampling stopped, for reports: "median within +-1.3% (95%
// CI); converged", "median within +-4.0% (95% CI); stopped at the time budget", "median not bounded
// (2 samples); abandoned: two launches slower than the cutoff".
std::string precision(const Stats& s);

// Launches per sample: enough that a sample of launches `launch_us` long lasts
// policy.min_sample_us, within [1, policy.max_batch].
int batch_size(double launch_us, const TimingPolicy& policy);

}  // namespace ktune::bench
