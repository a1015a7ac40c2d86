#pragma once
// What tuning buys over a fixed kernel: for the measurements of one run, the single config that
// is best on average (lowest geometric mean of its time over each key's best time, among the
// configs verified and timed on every key) and how much faster the per-key winners are than it.
// A gain near 1 means one config would do for the whole space: the space is too narrow to pay.
#include <cstdint>
#include <optional>
#include <vector>

#include "common/params.hpp"
#include "db/database.hpp"

namespace ktune::db {

struct TuningGain {
  int64_t run_id = 0;
  int keys = 0;     // keys with at least one ok measurement
  int configs = 0;  // configs with at least one ok measurement
  int configs_on_every_key = 0;
  // Unset when no config was timed ok on every key (then there is no single config to compare with).
  std::optional<Params> best_single;
  double gain_geomean = 0;  // geometric mean over keys of t(best_single, key) / t(winner, key), >= 1
  double gain_max = 0;      // the largest of those ratios
  Params worst_key;         // where it is largest
};

// `ms`: measurements of one run (any status; only ok ones count). The fastest of several ok
// measurements of one (key, config) counts. Throws Error when `ms` mixes runs.
TuningGain tuning_gain(const std::vector<Measurement>& ms);

}  // namespace ktune::db
