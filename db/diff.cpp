#include "db/diff.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "common/error.hpp"

namespace ktune::db {
namespace {

// The key with the pair's field left out (the name both sides' keys share).
Params without(const Params& key, const std::string& field) {
  Params p;
  for (const auto& [name, value] : key.items())
    if (name != field) p.set(name, value);
  return p;
}

bool inside_band(double median, const Measurement& m) { return m.p10_us <= median && median <= m.p90_us; }

void compare(KeyDiff& d, const Outcomes& b) {
  if (!d.a) {
    d.verdict = Verdict::only_b;
    return;
  }
  if (!d.b) {
    d.verdict = Verdict::only_a;
    return;
  }
  const auto& wa = d.a->winner;
  const auto& wb = d.b->winner;
  if (!wa || !wb) {
    d.verdict = wa ? Verdict::gap_opened : wb ? Verdict::gap_closed : Verdict::gap_both;
    return;
  }
  d.ratio = wb->m.median_us / wa->m.median_us;
  d.config_changed = wa->m.config != wb->m.config;
  const bool noise = inside_band(wb->m.median_us, wa->m) || inside_band(wa->m.median_us, wb->m);
  d.verdict = noise ? Verdict::same : *d.ratio < 1 ? Verdict::faster : Verdict::slower;
  const auto t = b.ok_times.find({wb->m.key, wa->m.config});
  if (t != b.ok_times.end()) d.a_winner_on_b = t->second / wb->m.median_us;
}

void summarize(Diff& d) {
  auto& s = d.summary;
  double log_sum = 0, log_sum_on_b = 0;
  for (const auto& k : d.keys) {
    s.keys_a += k.a != nullptr;
    s.keys_b += k.b != nullptr;
    ++s.counts[static_cast<int>(k.verdict)];
    s.configs_changed += k.config_changed;
    if (k.ratio) {
      s.min_ratio = s.both_timed == 0 ? *k.ratio : std::min(s.min_ratio, *k.ratio);
      s.max_ratio = std::max(s.max_ratio, *k.ratio);
      ++s.both_timed;
      log_sum += std::log(*k.ratio);
    }
    if (k.a_winner_on_b) {
      ++s.a_winner_on_b_keys;
      log_sum_on_b += std::log(*k.a_winner_on_b);
      s.a_winner_on_b_max = std::max(s.a_winner_on_b_max, *k.a_winner_on_b);
    }
  }
  if (s.both_timed > 0) s.geomean_ratio = std::exp(log_sum / s.both_timed);
  if (s.a_winner_on_b_keys > 0) s.a_winner_on_b_geomean = std::exp(log_sum_on_b / s.a_winner_on_b_keys);
}

}  // namespace

std::string_view to_string(Verdict v) noexcept {
  switch (v) {
    case Verdict::faster: return "faster";
    case Verdict::slower: return "slower";
    case Verdict::same: return "same";
    case Verdict::gap_opened: return "gap_opened";
    case Verdict::gap_closed: return "gap_closed";
    case Verdict::gap_both: return "gap_both";
    case Verdict::only_a: return "only_a";
    case Verdict::only_b: return "only_b";
  }
  return "?";
}

Diff diff(const Outcomes& a, const Outcomes& b, const std::optional<Pair>& pair) {
  if (a.family != b.family)
    throw Error(fmt::format("{} holds {} results and {} holds {}: a diff compares one kernel family", a.path, a.family,
                            b.path, b.family));
  Diff d;
  d.pair = pair;
  // Both sides by the key they are matched on.
  std::map<Params, KeyDiff> by_key;
  auto name = [&](const Params& key) { return pair ? without(key, pair->field) : key; };
  for (const auto& [key, outcome] : a.keys) {
    if (pair && key.find(pair->field) != pair->a) continue;
    auto& k = by_key[name(key)];
    k.key = name(key);
    k.a = &outcome;
  }
  for (const auto& [key, outcome] : b.keys) {
    if (pair && key.find(pair->field) != pair->b) continue;
    auto& k = by_key[name(key)];
    k.key = name(key);
    k.b = &outcome;
  }
  for (auto& [key, k] : by_key) {
    compare(k, b);
    d.keys.push_back(std::move(k));
  }
  summarize(d);
  return d;
}

std::vector<const KeyDiff*> worst_keys(const Diff& d, size_t n) {
  std::vector<const KeyDiff*> timed;
  for (const auto& k : d.keys)
    if (k.ratio) timed.push_back(&k);
  std::stable_sort(timed.begin(), timed.end(),
                   [](const KeyDiff* x, const KeyDiff* y) { return *x->ratio > *y->ratio; });
  if (timed.size() > n) timed.resize(n);
  return timed;
}

std::vector<const KeyDiff*> regressions(const Diff& d, double threshold) {
  std::vector<const KeyDiff*> out;
  for (const auto& k : d.keys)
    if (k.verdict == Verdict::gap_opened || (k.verdict == Verdict::slower && *k.ratio > threshold)) out.push_back(&k);
  return out;
}

}  // namespace ktune::db
