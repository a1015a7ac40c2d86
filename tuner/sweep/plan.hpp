#pragma once
// The sweep plan: problem keys x configs of a space, minus what the target cannot run
// (Family::infeasible, counted and never compiled) and minus what a resumed database already
// holds.
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/params.hpp"
#include "kernels/family.hpp"
#include "sweep/space.hpp"

namespace ktune::sweep {

struct PlannedKey {
  Params key;
  std::vector<Params> configs;  // to run: feasible and not done yet
  size_t infeasible = 0;        // configs the target cannot run for this key
  size_t done = 0;              // configs a resumed run already measured
  // Distinct reasons given by Family::infeasible, with how often each was given.
  std::vector<std::pair<std::string, size_t>> infeasible_reasons;

  // True when no config at all can serve the key: a `no_config` gap.
  bool no_config() const noexcept { return configs.empty() && done == 0 && infeasible > 0; }
};

struct Plan {
  std::vector<PlannedKey> keys;  // in space order; keys with nothing left to run included
  size_t candidates = 0;         // configs to run, over all keys
  size_t infeasible = 0;
  size_t done = 0;
};

// Part i of n of the keys (round robin), for job arrays; {0, 1} is everything.
struct Shard {
  int index = 0;
  int count = 1;
};
// "i/n" -> Shard. Throws Error on malformed text or i >= n.
Shard parse_shard(std::string_view text);

using DoneSet = std::set<std::pair<Params, Params>>;  // (key, config) pairs already measured

Plan build_plan(const Space& space, const TargetLimits& target, const DoneSet& done = {}, Shard shard = {});

}  // namespace ktune::sweep
