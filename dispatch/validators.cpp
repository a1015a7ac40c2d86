#include "dispatch/validators.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>

#include "common/shell_word.hpp"

namespace ktune::dispatch {
namespace {

// "'NVIDIA H200' (runs 1, 2), 'NVIDIA H100' (run 3)"
template <class Field>
std::string runs_by_value(const std::map<int64_t, db::Run>& runs, Field field) {
  std::map<std::string, std::vector<int64_t>> by;
  for (const auto& [id, r] : runs) by[field(r)].push_back(id);
  std::vector<std::string> parts;
  for (const auto& [value, ids] : by)
    parts.push_back(fmt::format("'{}' ({} {})", value, ids.size() == 1 ? "run" : "runs", fmt::join(ids, ", ")));
  return fmt::format("{}", fmt::join(parts, ", "));
}

template <class Field>
size_t distinct(const std::map<int64_t, db::Run>& runs, Field field) {
  std::set<std::string> values;
  for (const auto& [id, r] : runs) values.insert(field(r));
  return values.size();
}

// Keeps the runs whose `field` equals `chosen`, or checks that all runs agree on it.
template <class Field>
std::map<int64_t, db::Run> one_value(const std::map<int64_t, db::Run>& runs, const std::optional<std::string>& chosen,
                                     Field field, std::string_view validator, std::string_view what,
                                     std::string_view option, std::string_view family, std::string_view arch) {
  if (chosen) {
    std::map<int64_t, db::Run> kept;
    for (const auto& [id, r] : runs)
      if (field(r) == *chosen) kept.emplace(id, r);
    return kept;
  }
  if (distinct(runs, field) > 1)
    throw Error(fmt::format("{} validator: the results of {} on {} come from several {}: {}; a dispatch header "
                            "must not mix them: pass {} to choose one",
                            validator, family, arch, what, runs_by_value(runs, field), option));
  return runs;
}

}  // namespace

std::set<int64_t> accepted_runs(const std::map<int64_t, db::Run>& runs, const Request& req, std::string_view family,
                                std::string_view arch) {
  auto of_device = one_value(
      runs, req.device, [](const db::Run& r) { return r.device_name; }, "device", "devices", "--device NAME", family,
      arch);
  auto of_compiler = one_value(
      of_device, req.compiler, [](const db::Run& r) { return r.compiler_version; }, "compiler",
      "compiler versions (results of different compilers are not comparable)",
      "--compiler VERSION (or re-run the sweep with one compiler)", family, arch);
  std::set<int64_t> ids;
  for (const auto& [id, r] : of_compiler) ids.insert(id);
  return ids;
}

Error stale_error(const std::vector<StaleKey>& stale, std::string_view family, std::string_view arch,
                  const Request& req, std::string_view db_path) {
  std::map<int64_t, db::Run> runs;
  std::vector<std::string> keys;
  for (const auto& s : stale) {
    runs.emplace(s.run->id, *s.run);
    keys.push_back(fmt::format("{{{}}}", s.key->canonical()));
  }
  // The runs `ktune migrate` would make current, by the older hash they carry.
  std::vector<std::string> adoptable;
  size_t adoptable_runs = 0;
  for (const auto& h : req.adoptable) {
    std::vector<int64_t> ids;
    for (const auto& [id, r] : runs)
      if (r.template_hash == h.from) ids.push_back(id);
    if (ids.empty()) continue;
    adoptable_runs += ids.size();
    adoptable.push_back(
        fmt::format("{} {} measured {}", ids.size() == 1 ? "run" : "runs", fmt::join(ids, ", "), describe(h)));
  }
  std::string migrate;
  if (adoptable_runs > 0)
    migrate = fmt::format("; {}: `ktune migrate --db {}` gives {} today's hash", fmt::join(adoptable, "; "),
                          shell_word(db_path), adoptable_runs == 1 ? "it" : "them");
  constexpr size_t shown = 5;
  auto listed = fmt::format("{}", fmt::join(keys.begin(), keys.begin() + std::min(shown, keys.size()), " "));
  if (keys.size() > shown) listed += fmt::format(" and {} more", keys.size() - shown);
  return Error(fmt::format(
      "template hash validator: {} key(s) of {} on {} would come from runs made with other templates (current "
      "template hash {}; template hashes of those runs: {}): {}{}; re-run `ktune sweep` so that the current "
      "templates are measured, or pass --allow-stale to use the old results anyway",
      keys.size(), family, arch, req.template_hash,
      runs_by_value(runs, [](const db::Run& r) { return r.template_hash; }), listed, migrate));
}

Error fallback_cycle_error(const Table& table, const ArchTable& arch, const std::vector<size_t>& cycle) {
  std::vector<std::string> steps;
  for (size_t i : cycle) {
    const Entry& e = arch.entries[i];
    steps.push_back(fmt::format("{{{}}} ({})", e.key.pretty(table.key_fields), e.gap->source));
  }
  steps.push_back(fmt::format("{{{}}}", arch.entries[cycle.front()].key.pretty(table.key_fields)));
  return Error(fmt::format(
      "fallback validator: the gaps of {} on {} fall back to one another in a loop: {}; a caller that follows "
      "fallbacks would never stop. Point one of them at a key with a kernel (`ktune gap add` with the same source "
      "and another --fallback) or withdraw it (`ktune gap rm`)",
      table.family, arch.arch, fmt::join(steps, " -> ")));
}

Error nothing_to_generate(db::Database& db, std::string_view family, const Request& req) {
  db::Filter filter;
  filter.family = std::string(family);
  std::map<int64_t, db::Run> runs;
  for (auto& r : db.runs(filter)) runs.emplace(r.id, std::move(r));
  std::string asked = std::string(family);
  if (req.arch) asked += " on " + *req.arch;
  if (req.device) asked += fmt::format(" of device '{}'", *req.device);
  if (req.compiler) asked += fmt::format(" with compiler '{}'", *req.compiler);
  if (runs.empty() && db.gaps(filter).empty())
    return Error(fmt::format("the database has no results of {}: run `ktune sweep --kernel {}` first", family, family));
  return Error(fmt::format("the database has no results of {}; it has runs of {}: {}", asked, family,
                           runs_by_value(runs, [](const db::Run& r) {
                             return fmt::format("{} / {} / {}", r.arch, r.device_name, r.compiler_version);
                           })));
}

}  // namespace ktune::dispatch
