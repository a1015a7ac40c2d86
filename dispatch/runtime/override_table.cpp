#include "dispatch/runtime/override_table.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "common/error.hpp"
#include "db/database.hpp"
#include "jit/templates.hpp"
#include "kernels/family.hpp"
#include "kernels/template_lineage.hpp"

namespace ktune::runtime {
namespace {

Values padded(std::span<const int64_t> v) {
  Values out{};
  std::copy(v.begin(), v.end(), out.begin());
  return out;
}

// The runtime's field list must be the family's, in order: the C structs are read by position.
void check_fields(std::string_view what, const std::vector<FieldSpec>& family_fields,
                  std::span<const std::string_view> runtime_fields, std::string_view family) {
  std::vector<std::string_view> names;
  for (const auto& f : family_fields) names.push_back(f.name);
  if (!std::equal(names.begin(), names.end(), runtime_fields.begin(), runtime_fields.end()) ||
      names.size() > kMaxFields)
    throw Error(fmt::format("{}'s {} fields are {}, the runtime's are {}", family, what, fmt::join(names, ", "),
                            fmt::join(runtime_fields, ", ")));
}

}  // namespace

std::unique_ptr<OverrideTable> OverrideTable::read(const std::string& db_path, const RuntimeFamily& runtime_family,
                                                   std::string_view template_hash,
                                                   std::span<const CompiledTable* const> tables) {
  const Family& family = ktune::family(runtime_family.name);
  check_fields("key", family.key_fields(), runtime_family.key_fields, family.name());
  check_fields("config", family.config_fields(), runtime_family.config_fields, family.name());
  auto db = db::Database::open(db_path, /*create=*/false, /*read_only=*/true);
  if (db->arches(std::string(family.name())).empty()) return nullptr;

  std::unique_ptr<OverrideTable> t(new OverrideTable());
  dispatch::Request req;
  req.template_hash = std::string(template_hash);
  // Where the package's templates are this library's own, a stale run of their kernels recorded
  // under an older hash is named with the `ktune migrate` that makes it current.
  if (jit::template_hash(family.template_file()) == template_hash) req.adoptable = adoptable_template_hashes(family);
  req.drop_refused_arches = true;
  t->table_ = dispatch::build_table(*db, family, req);
  const auto& table = t->table_;

  t->rules_ = dispatch::SelectRules::of(family);
  for (const auto& f : table.key_fields)
    t->out_of_range_.push_back(
        t->texts_
            .emplace_back(fmt::format("key field {} is out of range (KTUNE_DB: the family accepts [{}, {}])", f.name,
                                      f.min, f.max))
            .c_str());
  t->cover_reason_ =
      t->texts_
          .emplace_back(fmt::format(
              "not tuned: served by the kernel of the smallest larger tuned {} in KTUNE_DB (the kernel masks the padding)",
              fmt::join(table.covering_fields, " / ")))
          .c_str();

  std::vector<std::string> parts;
  for (const auto& a : table.arches) {
    Arch arch{a.arch, dispatch::select_rows(t->rules_, a), {}};
    for (const auto& e : a.entries) {
      Choice& exact = arch.answers.emplace_back();
      if (e.kernel) {
        auto& names = t->names_.emplace_back();
        for (const auto& n : e.kernel->name_expressions) names.push_back(n.c_str());
        KernelChoice& k = t->kernels_.emplace_back();
        k.object = find_code_object(tables, runtime_family, a.arch, names.data(), names.size());
        k.threads = e.kernel->launch.threads_per_block;
        k.shared_bytes = e.kernel->launch.shared_bytes;
        k.config = padded(dispatch::values_of(e.kernel->config));
        k.name_expressions = names.data();
        k.name_expression_count = names.size();
        if (k.object == nullptr)
          k.unpackaged =
              t->texts_
                  .emplace_back(fmt::format(
                      "the KTUNE_DB winner of {} on {} (config {}) is in no package of this library and compiling it at run "
                      "time is off (KTUNE_JIT=0): package the database with `ktune package --db {} --kernel {} --arch {}` "
                      "and rebuild, or point KTUNE_PACKAGE_DIR at such a package",
                      e.key.canonical(), a.arch, e.kernel->config.canonical(), db_path, family.name(), a.arch))
                  .c_str();
        exact.status = KTUNE_OK;
        exact.reason = "exact match (KTUNE_DB)";
        exact.kernel = &k;
      } else {
        const auto& g = *e.gap;
        exact.status = KTUNE_GAP;
        std::string text =
            fmt::format("{} ({}){}", db::to_string(g.reason), g.source, g.detail.empty() ? "" : ": " + g.detail);
        if (g.fallback) {
          exact.has_fallback_key = true;
          exact.fallback_key = padded(dispatch::values_of(*g.fallback));
          text += "; fallback " + g.fallback->canonical() + (g.fallback_note.empty() ? "" : ": " + g.fallback_note);
        }
        exact.reason = t->texts_.emplace_back(std::move(text)).c_str();
      }
      if (!exact.has_fallback_key) exact.fallback_key = padded(arch.rows[arch.answers.size() - 1].key);
    }
    parts.push_back(fmt::format("{} ({} keys)", a.arch, a.entries.size()));
    t->arches_.push_back(std::move(arch));
  }
  t->summary_ = fmt::format("{}: {} {}", db_path, family.name(), fmt::join(parts, ", "));
  std::vector<std::string> refused;
  for (const auto& r : table.refused) refused.push_back(fmt::format("on {}: {}", r.arch, r.why));
  if (!refused.empty())
    t->refused_ = fmt::format("KTUNE_DB={} refused for {} {}; the compiled-in table serves there instead", db_path,
                              family.name(), fmt::join(refused, "; "));
  return t;
}

std::optional<Choice> OverrideTable::select(std::string_view arch, const Values& key) const noexcept {
  for (const auto& a : arches_)
    if (a.name == arch) return resolve(a, std::span<const int64_t>(key.data(), table_.key_fields.size()));
  return std::nullopt;
}

Choice OverrideTable::resolve(const Arch& a, std::span<const int64_t> q) const noexcept {
  for (size_t i = 0; i < q.size(); ++i)
    if (q[i] < table_.key_fields[i].min || q[i] > table_.key_fields[i].max)
      return {KTUNE_UNSUPPORTED, nullptr, false, padded(q), out_of_range_[i]};
  const auto found = dispatch::select_row(rules_, a.rows, q);
  if (found.how == dispatch::Match::none)
    return {KTUNE_UNSUPPORTED, nullptr, false, padded(q),
            "not tuned: no exact, batch-bucket or covering row for this key on this arch (KTUNE_DB)"};
  Choice c = a.answers[found.row];
  if (found.how == dispatch::Match::bucket && c.status == KTUNE_OK) c.reason = "nearest tuned batch bucket (KTUNE_DB)";
  if (found.how == dispatch::Match::cover) {
    c.status = KTUNE_OK_FALLBACK;
    c.has_fallback_key = true;
    c.fallback_key = padded(a.rows[found.row].key);
    c.reason = cover_reason_;
  }
  return c;
}

}  // namespace ktune::runtime
