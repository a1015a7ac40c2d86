#include "dispatch/table.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "common/error.hpp"
#include "dispatch/cpp_text.hpp"
#include "dispatch/row_select.hpp"
#include "dispatch/validators.hpp"

namespace ktune::dispatch {

int64_t ArchTable::kernels() const noexcept {
  return std::count_if(entries.begin(), entries.end(), [](const Entry& e) { return e.kernel.has_value(); });
}

int64_t ArchTable::gaps() const noexcept {
  return std::count_if(entries.begin(), entries.end(), [](const Entry& e) { return e.gap.has_value(); });
}

namespace {

// `p` checked against the family's fields; a mismatch means the family changed since the sweep.
Params checked(const Params& p, const std::vector<FieldSpec>& specs, const std::string& what) {
  try {
    validate(p, specs, what);
  } catch (const Error& e) {
    throw Error(fmt::format("{} (the family's fields changed since the sweep: re-run `ktune sweep`)", e.what()));
  }
  return p;
}

// One measured outcome of a key: a run's winner or a gap that run measured.
struct Outcome {
  const db::Run* run = nullptr;
  const db::Winner* winner = nullptr;
  const db::Gap* gap = nullptr;
};

struct KeyOutcomes {
  std::vector<Outcome> measured;
  std::vector<const db::Gap*> declared;
};

// Rule 1 of table.hpp: fresh before stale, then newest run, then a winner before a gap.
Outcome choose_measured(const std::vector<Outcome>& outcomes, const std::string& current_hash) {
  auto rank = [&](const Outcome& o) {
    return std::make_tuple(o.run->template_hash == current_hash, o.run->started_at, o.run->id, o.winner != nullptr);
  };
  return *std::max_element(outcomes.begin(), outcomes.end(),
                           [&](const Outcome& a, const Outcome& b) { return rank(a) < rank(b); });
}

// Rule 2 of table.hpp: a declaration with a fallback first, then the smallest source.
const db::Gap* choose_declared(const std::vector<const db::Gap*>& declared) {
  if (declared.empty()) return nullptr;
  return *std::min_element(declared.begin(), declared.end(), [](const db::Gap* a, const db::Gap* b) {
    return std::make_tuple(a->fallback == "none", a->source) < std::make_tuple(b->fallback == "none", b->source);
  });
}

KernelInfo kernel_info(const db::Winner& w, const Family& family, const std::string& arch) {
  auto what = fmt::format("measurement {} of run {}", w.m.id, w.run.id);
  // ktune records no ok row without a time (the schema's CHECK passes a NULL one, and the
  // winners view ranks NULL first): a row written by other hands must not win its key.
  if (!(w.m.median_us > 0))
    throw Error(fmt::format("{} on {} is ok but has no positive median time ({}): it would win its key; the "
                            "database was written by something other than ktune (delete that row)",
                            what, arch, w.m.median_us));
  KernelInfo k;
  k.config = checked(w.m.config, family.config_fields(), "config of " + what);
  std::optional<std::string> violated;
  try {
    k.name_expressions = family.name_expressions(w.m.key, k.config);
    k.launch = family.launch_info(w.m.key, k.config);
    violated = family.precondition_violated(w.m.key, k.config);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {} rejects its key/config: {}", what, family.name(), e.what()));
  }
  if (violated)
    throw Error(fmt::format("precondition validator: the winner of key {{{}}} on {} ({}) is config {{{}}}, whose "
                            "precondition the key breaks: {} (re-run `ktune sweep`: it never measures such a config)",
                            w.m.key.pretty(family.key_fields()), arch, what, k.config.pretty(family.config_fields()),
                            *violated));
  k.median_us = w.m.median_us;
  k.run_id = w.run.id;
  k.measurement_id = w.m.id;
  k.shape = w.m.shape;
  return k;
}

// The key a gap falls back to, nullopt for none. Throws Error naming the gap.
std::optional<Params> fallback_of(const db::Gap& g) {
  if (g.fallback.empty() || g.fallback == "none") return std::nullopt;
  try {
    return Params::parse_canonical(g.fallback);
  } catch (const Error& e) {
    throw Error(fmt::format("fallback of gap {} ({}): {}", g.id, g.source, e.what()));
  }
}

GapInfo gap_info(const db::Gap& g, const Family& family) {
  GapInfo info{g.reason, g.detail, g.source, g.run_id, std::nullopt, g.fallback_note};
  if (const auto fallback = fallback_of(g))
    info.fallback = checked(*fallback, family.key_fields(), fmt::format("fallback of gap {} ({})", g.id, g.source));
  return info;
}

std::optional<ArchTable> build_arch(db::Database& db, const Family& family, const Request& req,
                                    const std::string& arch) {
  db::Filter filter;
  filter.family = std::string(family.name());
  filter.arch = arch;
  const auto winners = db.winners(filter);
  const auto gaps = db.gaps(filter);

  std::map<int64_t, db::Run> runs;
  for (const auto& w : winners) runs.emplace(w.run.id, w.run);
  for (const auto& g : gaps)
    if (g.run_id && !runs.count(*g.run_id)) runs.emplace(*g.run_id, db.run(*g.run_id));

  const auto accepted = accepted_runs(runs, req, family.name(), arch);
  if (accepted.empty() && (req.device || req.compiler)) return std::nullopt;  // none of the chosen ones

  std::map<Params, KeyOutcomes> keys;
  for (const auto& w : winners)
    if (accepted.count(w.run.id)) keys[w.m.key].measured.push_back({&runs.at(w.run.id), &w, nullptr});
  for (const auto& g : gaps) {
    if (!g.run_id)
      keys[g.key].declared.push_back(&g);
    else if (accepted.count(*g.run_id))
      keys[g.key].measured.push_back({&runs.at(*g.run_id), nullptr, &g});
  }
  if (keys.empty()) return std::nullopt;

  // Choose first, so that staleness is reported before anything else about stale rows.
  std::vector<std::pair<const Params*, Outcome>> chosen;
  std::vector<StaleKey> stale;
  ArchTable table;
  table.arch = arch;
  for (const auto& [key, o] : keys) {
    Outcome pick;
    if (!o.measured.empty()) pick = choose_measured(o.measured, req.template_hash);
    const db::Gap* declared = choose_declared(o.declared);
    if (pick.winner) {
      for (const auto* d : o.declared) table.ignored_declarations.push_back({key, d->source, pick.run->id});
    } else if (declared) {
      pick = Outcome{nullptr, nullptr, declared};
    }
    if (pick.run && pick.run->template_hash != req.template_hash) stale.push_back({&key, pick.run});
    chosen.emplace_back(&key, pick);
  }
  if (!stale.empty() && !req.allow_stale) throw stale_error(stale, family.name(), arch, req, db.path());

  std::set<int64_t> used_runs;
  for (const auto& [key, pick] : chosen) {
    Entry e;
    e.key = checked(*key, family.key_fields(), fmt::format("key {{{}}} on {}", key->canonical(), arch));
    if (pick.winner)
      e.kernel = kernel_info(*pick.winner, family, arch);
    else
      e.gap = gap_info(*pick.gap, family);
    if (pick.run) used_runs.insert(pick.run->id);
    table.entries.push_back(std::move(e));
  }
  for (auto id : used_runs) table.runs.push_back(runs.at(id));
  return table;
}

std::vector<std::string> arches_of(db::Database& db, const Family& family, const Request& req) {
  if (req.arch) return {*req.arch};
  return db.arches(std::string(family.name()));
}

}  // namespace

Table build_table(db::Database& db, const Family& family, const Request& request) {
  Table t;
  t.family = std::string(family.name());
  t.key_fields = family.key_fields();
  t.config_fields = family.config_fields();
  for (const auto& f : t.key_fields)
    if (family.covers_larger(f.name)) t.covering_fields.push_back(f.name);
  t.bucket_field = std::string(family.bucket_field());
  t.request = request;
  const auto rules = SelectRules::of(family);
  for (const auto& arch : arches_of(db, family, request)) {
    try {
      // Rows of an arch ktune cannot compile for have no kernels to ship, and a name it did not
      // write may not survive a header's string literal (a NUL cut "sm_90a\0evil" to sm_90a).
      if (!is_known_target(arch))
        throw Error(fmt::format("arch {} is not a target ktune knows ({}){}", string_literal(arch),
                                known_target_names(),
                                request.arch ? "" : ": the database was written by another tool or another version"));
      if (auto a = build_arch(db, family, request, arch)) {
        if (auto cycle = fallback_cycle(rules, select_rows(rules, *a)); !cycle.empty())
          throw fallback_cycle_error(t, *a, cycle);
        t.arches.push_back(std::move(*a));
      }
    } catch (const Error& e) {
      if (!request.drop_refused_arches) throw;
      t.refused.push_back({arch, e.what()});
    }
  }
  if (t.arches.empty() && !t.refused.empty()) {
    std::vector<std::string> whys;
    for (const auto& r : t.refused) whys.push_back(r.why);
    throw Error(fmt::format("{}", fmt::join(whys, "; ")));
  }
  if (t.arches.empty()) throw nothing_to_generate(db, family.name(), request);
  return t;
}

std::vector<Params> declared_fallback_loop(const Family& family, const std::vector<db::Winner>& winners,
                                           const std::vector<db::Gap>& gaps, const db::Gap& added) {
  auto fits = [&](const Params& key) {  // rows of an older key layout are build_table's to refuse
    try {
      validate(key, family.key_fields(), "key");
      return true;
    } catch (const Error&) {
      return false;
    }
  };
  std::set<Params> with_kernel, measured;
  for (const auto& w : winners)
    if (w.run.arch == added.arch && fits(w.m.key)) with_kernel.insert(w.m.key);
  std::map<Params, std::vector<const db::Gap*>> declared;
  for (const auto& g : gaps) {
    if (g.arch != added.arch || !fits(g.key) || with_kernel.count(g.key)) continue;
    if (g.run_id)
      measured.insert(g.key);
    else if (!(g.key == added.key && g.source == added.source))  // `added` replaces it
      declared[g.key].push_back(&g);
  }
  declared[added.key].push_back(&added);

  const auto rules = SelectRules::of(family);
  std::vector<SelectRow> rows;
  std::vector<const Params*> keys;
  for (const auto& k : with_kernel) {
    rows.emplace_back(rules, values_of(k), true);
    keys.push_back(&k);
  }
  for (const auto& [k, ds] : declared) {
    const db::Gap& d = *choose_declared(ds);
    std::optional<std::vector<int64_t>> fallback;
    if (const auto f = fallback_of(d); f && fits(*f)) fallback = values_of(*f);
    rows.emplace_back(rules, values_of(k), false, std::move(fallback));
    keys.push_back(&k);
  }
  for (const auto& k : measured)
    if (!declared.count(k)) {
      rows.emplace_back(rules, values_of(k), false);
      keys.push_back(&k);
    }
  std::vector<Params> loop;
  for (size_t i : fallback_cycle(rules, rows)) loop.push_back(*keys[i]);
  return loop;
}

}  // namespace ktune::dispatch
