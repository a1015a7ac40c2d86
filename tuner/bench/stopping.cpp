#include "bench/stopping.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

namespace ktune::bench {

Stats sample_until_stable(const std::function<double()>& take_sample_us, const std::function<double()>& elapsed_ms,
                          const TimingPolicy& policy) {
  std::vector<double> samples;
  Stats stats;
  for (;;) {
    samples.push_back(take_sample_us());
    stats = summarize(samples);
    if (stats.n >= policy.min_samples && stats.rel_ci <= policy.rel_ci) {
      stats.stop = Stop::converged;
      break;
    }
    if (stats.n >= policy.max_samples) {
      stats.stop = Stop::max_samples;
      break;
    }
    if (elapsed_ms() >= policy.budget_ms) {
      stats.stop = Stop::budget;
      break;
    }
  }
  return stats;
}

std::string precision(const Stats& s) {
  const auto known = std::isfinite(s.rel_ci)
                         ? fmt::format("median within +-{:.1f}% (95% CI)", 100 * s.rel_ci)
                         : fmt::format("median not bounded ({} sample{})", s.n, s.n == 1 ? "" : "s");
  switch (s.stop) {
    case Stop::converged: return known + "; converged";
    case Stop::max_samples: return fmt::format("{}; stopped at the most samples, {}", known, s.n);
    case Stop::budget: return known + "; stopped at the time budget";
    case Stop::abandoned: return known + "; abandoned: two launches slower than the cutoff";
    case Stop::none: break;
  }
  return known;
}

int batch_size(double launch_us, const TimingPolicy& policy) {
  if (!(launch_us > 0)) return std::max(1, policy.max_batch);  // below the event's resolution
  const double needed = std::ceil(policy.min_sample_us / launch_us);
  return static_cast<int>(std::clamp(needed, 1.0, static_cast<double>(std::max(1, policy.max_batch))));
}

}  // namespace ktune::bench
