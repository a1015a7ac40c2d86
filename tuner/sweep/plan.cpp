#include "sweep/plan.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "common/error.hpp"

namespace ktune::sweep {

Shard parse_shard(std::string_view text) {
  Shard s;
  auto slash = text.find('/');
  auto parse = [&](std::string_view part, int& out) {
    auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), out);
    return ec == std::errc() && p == part.data() + part.size() && !part.empty();
  };
  if (slash == std::string_view::npos || !parse(text.substr(0, slash), s.index) ||
      !parse(text.substr(slash + 1), s.count) || s.count < 1 || s.index < 0 || s.index >= s.count)
    throw Error(fmt::format("--shard '{}': expected i/n with 0 <= i < n", text));
  return s;
}

Plan build_plan(const Space& space, const TargetLimits& target, const DoneSet& done, Shard shard) {
  const Family& family = *space.family;
  const auto keys = combinations(family.key_fields(), space.key_values);
  const auto configs = space_configs(space);
  Plan plan;
  for (size_t k = 0; k < keys.size(); ++k) {
    if (static_cast<int>(k % static_cast<size_t>(shard.count)) != shard.index) continue;
    PlannedKey pk;
    pk.key = keys[k];
    for (const auto& config : configs) {
      if (auto why = family.infeasible(pk.key, config, target)) {
        ++pk.infeasible;
        auto it = std::find_if(pk.infeasible_reasons.begin(), pk.infeasible_reasons.end(),
                               [&](const auto& r) { return r.first == *why; });
        if (it == pk.infeasible_reasons.end())
          pk.infeasible_reasons.emplace_back(*why, 1);
        else
          ++it->second;
      } else if (done.contains({pk.key, config})) {
        ++pk.done;
      } else {
        pk.configs.push_back(config);
      }
    }
    plan.candidates += pk.configs.size();
    plan.infeasible += pk.infeasible;
    plan.done += pk.done;
    plan.keys.push_back(std::move(pk));
  }
  return plan;
}

}  // namespace ktune::sweep
