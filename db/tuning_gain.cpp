#include "db/tuning_gain.hpp"

#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "common/error.hpp"

namespace ktune::db {

TuningGain tuning_gain(const std::vector<Measurement>& ms) {
  TuningGain g;
  // time[config][key]: the fastest ok median; best[key]: the fastest over configs.
  std::map<Params, std::map<Params, double>> time;
  std::map<Params, double> best;
  if (!ms.empty()) g.run_id = ms.front().run_id;  // (any id: another tool may have written a run 0)
  for (const auto& m : ms) {
    if (m.run_id != g.run_id)
      throw Error(fmt::format("tuning gain: measurements of runs {} and {} mixed; compare one run at a time", g.run_id,
                              m.run_id));
    if (m.status != Status::ok) continue;
    auto [it, fresh] = time[m.config].try_emplace(m.key, m.median_us);
    if (!fresh) it->second = std::min(it->second, m.median_us);
    auto [b, first] = best.try_emplace(m.key, m.median_us);
    if (!first) b->second = std::min(b->second, m.median_us);
  }
  g.keys = static_cast<int>(best.size());
  g.configs = static_cast<int>(time.size());
  double best_log = std::numeric_limits<double>::infinity();
  for (const auto& [config, by_key] : time) {
    if (by_key.size() != best.size()) continue;  // not timed on every key
    ++g.configs_on_every_key;
    double log_sum = 0;
    for (const auto& [key, t] : by_key) log_sum += std::log(t / best.at(key));
    // Strictly less: among equals the first config in canonical order wins, for a stable answer.
    if (log_sum < best_log) {
      best_log = log_sum;
      g.best_single = config;
    }
  }
  if (!g.best_single) return g;
  g.gain_geomean = std::exp(best_log / g.keys);
  for (const auto& [key, t] : time.at(*g.best_single)) {
    const double ratio = t / best.at(key);
    if (ratio > g.gain_max) {
      g.gain_max = ratio;
      g.worst_key = key;
    }
  }
  return g;
}

}  // namespace ktune::db
