#include "bench/stats.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ktune::bench {
namespace {

double percentile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(pos));
  const size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (pos - static_cast<double>(below)) * (sorted[above] - sorted[below]);
}

constexpr std::pair<Stop, std::string_view> kStops[] = {{Stop::none, "none"},
                                                        {Stop::converged, "converged"},
                                                        {Stop::max_samples, "max_samples"},
                                                        {Stop::budget, "budget"},
                                                        {Stop::abandoned, "abandoned"}};

}  // namespace

std::string_view to_string(Stop s) noexcept {
  for (const auto& [stop, name] : kStops)
    if (stop == s) return name;
  return "none";
}

std::optional<Stop> stop_from_string(std::string_view text) noexcept {
  for (const auto& [stop, name] : kStops)
    if (name == text) return stop;
  return std::nullopt;
}

std::optional<std::pair<int, int>> median_ci_ranks(int n, double confidence) {
  // The interval [x_(j), x_(n+1-j)] (1-based) misses the median with probability
  // 2 * P(B <= j - 1), B ~ Binomial(n, 1/2); take the largest j that keeps that within
  // 1 - confidence. The terms are summed in log space so that large n does not underflow.
  const double tail = (1.0 - confidence) / 2;
  const double log_norm = std::lgamma(n + 1.0) - n * std::log(2.0);
  double cdf = 0;  // P(B <= j) after the step for j
  int j = 0;
  for (; j < n / 2; ++j) {
    cdf += std::exp(log_norm - std::lgamma(j + 1.0) - std::lgamma(n - j + 1.0));
    if (cdf > tail) break;
  }
  if (j == 0) return std::nullopt;
  return std::pair{j - 1, n - j};
}

Stats summarize(std::span<const double> samples_us) {
  Stats s;
  s.n = static_cast<int>(samples_us.size());
  if (samples_us.empty()) return s;
  // A sample that is no time (NaN, infinite, negative) cannot be sorted meaningfully (NaN makes
  // std::sort undefined) and a finite median would hide it: the summary is NaN, not plausible().
  if (std::any_of(samples_us.begin(), samples_us.end(), [](double v) { return !std::isfinite(v) || v < 0; })) {
    s.median_us = s.p10_us = s.p90_us = std::numeric_limits<double>::quiet_NaN();
    return s;
  }
  std::vector<double> sorted(samples_us.begin(), samples_us.end());
  std::sort(sorted.begin(), sorted.end());
  s.median_us = percentile(sorted, 0.5);
  s.p10_us = percentile(sorted, 0.1);
  s.p90_us = percentile(sorted, 0.9);
  if (auto ranks = median_ci_ranks(s.n); ranks && s.median_us > 0)
    s.rel_ci = (sorted[ranks->second] - sorted[ranks->first]) / 2 / s.median_us;
  return s;
}

bool plausible(const Stats& s) noexcept {
  return s.n > 0 && std::isfinite(s.p10_us) && std::isfinite(s.p90_us) && s.median_us > 0 && s.p10_us <= s.median_us &&
         s.median_us <= s.p90_us;
}

}  // namespace ktune::bench
