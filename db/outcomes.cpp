#include "db/outcomes.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.hpp"

namespace ktune::db {

std::vector<std::string> families_in(Database& db, const Filter& f) {
  std::set<std::string> names;
  for (const auto& r : db.runs(f)) names.insert(r.family);
  for (const auto& g : db.gaps(f)) names.insert(g.family);
  return {names.begin(), names.end()};
}

Outcomes load_outcomes(Database& db, const Filter& f) {
  if (!f.family) throw Error("load_outcomes: the filter must name a family");
  Outcomes o;
  o.path = db.path();
  o.family = *f.family;
  o.runs = db.runs(f);
  std::set<std::string> devices, arches;
  for (const auto& r : o.runs) {
    devices.insert(r.device_name);
    arches.insert(r.arch);
  }
  const auto gaps = db.gaps(f);
  for (const auto& g : gaps) arches.insert(g.arch);
  if (devices.size() > 1)
    throw Error(fmt::format("{}: the {} runs are of several devices ({}); name one with --device", db.path(), o.family,
                            fmt::join(devices, ", ")));
  if (arches.size() > 1)
    throw Error(fmt::format("{}: the {} results are of several arches ({}); name one with --arch", db.path(), o.family,
                            fmt::join(arches, ", ")));
  // winners() is ordered by run id: a later run's winner replaces an earlier one's.
  for (auto& w : db.winners(f)) {
    auto& k = o.keys[w.m.key];
    k.key = w.m.key;
    k.winner = std::move(w);
  }
  for (const auto& m : db.measurements(f)) {
    if (m.status != Status::ok) continue;
    const auto it = o.keys.find(m.key);
    if (it == o.keys.end() || !it->second.winner || it->second.winner->run.id != m.run_id) continue;
    auto [t, fresh] = o.ok_times.try_emplace({m.key, m.config}, m.median_us);
    if (!fresh) t->second = std::min(t->second, m.median_us);
  }
  // A key without a winner: its newest measured gap, else a declared one (gaps() lists them by
  // key and source, so the order of run ids is checked here).
  for (const auto& g : gaps) {
    auto& k = o.keys[g.key];
    k.key = g.key;
    if (k.winner) continue;
    const bool newer = k.gap && g.run_id && (!k.gap->run_id || *g.run_id > *k.gap->run_id);
    if (!k.gap || newer) k.gap = g;
  }
  return o;
}

std::optional<double> fraction_of_binding_roof(const Measurement& m) {
  if (!m.frac_copy_bw && !m.frac_matrix) return std::nullopt;
  return std::max(m.frac_copy_bw.value_or(0), m.frac_matrix.value_or(0));
}

}  // namespace ktune::db
