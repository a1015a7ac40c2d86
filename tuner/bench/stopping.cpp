#include "bench/stopping.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ktune::bench {

Stats sample_until_stable(const std::function<double()>& take_sample_us, const std::function<double()>& elapsed_ms,
                          const TimingPolicy& policy) {
  std::vector<double> samples;
  Stats stats;
  do {
    samples.push_back(take_sample_us());
    stats = summarize(samples);
    if (stats.n >= policy.min_samples && stats.rel_ci <= policy.rel_ci) break;
  } while (stats.n < policy.max_samples && elapsed_ms() < policy.budget_ms);
  return stats;
}

int batch_size(double launch_us, const TimingPolicy& policy) {
  if (!(launch_us > 0)) return std::max(1, policy.max_batch);  // below the event's resolution
  const double needed = std::ceil(policy.min_sample_us / launch_us);
  return static_cast<int>(std::clamp(needed, 1.0, static_cast<double>(std::max(1, policy.max_batch))));
}

}  // namespace ktune::bench
