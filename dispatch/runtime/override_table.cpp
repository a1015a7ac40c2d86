#include "dispatch/runtime/override_table.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "common/error.hpp"
#include "db/database.hpp"
#include "dispatch/runtime/compiled_table.hpp"
#include "kernels/family.hpp"
#include "kernels/mla_decode/problem.hpp"

namespace ktune::runtime {
namespace {

// The C key's fields by name; the family's key fields must be exactly these.
constexpr std::string_view kKeyFields[] = {"heads", "block_len", "causal", "kv_dtype", "batch"};

std::vector<int64_t> values_of(const ktune_mla_decode_key& k) { return {k.heads, k.block_len, k.causal, k.kv_dtype, k.batch}; }

ktune_mla_decode_key key_of(const std::vector<int64_t>& v) { return {v[0], v[1], v[2], v[3], v[4]}; }

std::vector<int64_t> values_of(const Params& p) {
  std::vector<int64_t> v;
  for (const auto& [name, value] : p.items()) v.push_back(value);
  return v;
}

// Batch rule of the generated select(): the smallest tuned value >= wanted, else the largest.
bool closer(int64_t x, int64_t y, int64_t wanted) {
  const bool x_covers = x >= wanted, y_covers = y >= wanted;
  if (x_covers != y_covers) return x_covers;
  return x_covers ? x < y : x > y;
}

}  // namespace

OverrideTable::OverrideTable(const std::string& db_path, std::string_view template_hash) {
  const Family& family = ktune::family("mla_decode");
  std::vector<std::string_view> names;
  for (const auto& f : family.key_fields()) names.push_back(f.name);
  if (!std::equal(names.begin(), names.end(), std::begin(kKeyFields), std::end(kKeyFields)))
    throw Error(fmt::format("mla_decode's key fields are {}, the runtime's C key has {}", fmt::join(names, ", "),
                            fmt::join(kKeyFields, ", ")));
  dispatch::Request req;
  req.template_hash = std::string(template_hash);
  auto db = db::Database::open(db_path, /*create=*/false, /*read_only=*/true);
  table_ = dispatch::build_table(*db, family, req);

  for (size_t i = 0; i < table_.key_fields.size(); ++i) {
    const auto& f = table_.key_fields[i];
    covering_.push_back(f.name != table_.bucket_field &&
                        std::count(table_.covering_fields.begin(), table_.covering_fields.end(), f.name) > 0);
    if (f.name == table_.bucket_field) bucket_ = static_cast<int>(i);
    out_of_range_.push_back(texts_.emplace_back(
        fmt::format("key field {} is out of range (KTUNE_DB: the family accepts [{}, {}])", f.name, f.min, f.max)));
  }
  cover_reason_ = texts_.emplace_back(fmt::format(
      "not tuned: served by the kernel of the smallest larger tuned {} in KTUNE_DB (the kernel masks the padding)",
      fmt::join(table_.covering_fields, " / ")));

  std::vector<std::string> parts;
  for (const auto& a : table_.arches) {
    Arch arch{a.arch, {}};
    for (const auto& e : a.entries) {
      Row row{values_of(e.key), {}};
      if (e.kernel) {
        const auto object = find_code_object(e.kernel->name_expressions);
        if (object == code_object_count()) {
          row.exact.status = KTUNE_NO_CODE_OBJECT;
          row.exact.reason = texts_.emplace_back(fmt::format(
              "the KTUNE_DB winner of {} on {} (config {}) is not in this package: package the database with "
              "`ktune package --db {} --arch {}` and rebuild, or point KTUNE_PACKAGE_DIR at such a package",
              e.key.canonical(), a.arch, e.kernel->config.canonical(), db_path, a.arch));
        } else {
          const auto c = mla::config_of(e.kernel->config);
          row.exact.status = KTUNE_OK;
          row.exact.reason = "exact match (KTUNE_DB)";
          row.exact.kernel = KernelChoice{c.rows, c.keys, c.split, e.kernel->launch.threads_per_block,
                                          e.kernel->launch.shared_bytes, object};
        }
      } else {
        const auto& g = *e.gap;
        row.exact.status = KTUNE_GAP;
        std::string text = fmt::format("{} ({}){}", db::to_string(g.reason), g.source,
                                       g.detail.empty() ? "" : ": " + g.detail);
        if (g.fallback) {
          row.exact.has_fallback_key = true;
          row.exact.fallback_key = key_of(values_of(*g.fallback));
          text += "; fallback " + g.fallback->canonical() + (g.fallback_note.empty() ? "" : ": " + g.fallback_note);
        }
        row.exact.reason = texts_.emplace_back(std::move(text));
      }
      if (!row.exact.has_fallback_key) row.exact.fallback_key = key_of(row.key);
      for (size_t i = 0; i < row.key.size(); ++i)
        if (covering_[i]) row.padded_work *= static_cast<uint64_t>(row.key[i]);
      arch.rows.push_back(std::move(row));
    }
    parts.push_back(fmt::format("{} ({} keys)", a.arch, a.entries.size()));
    arches_.push_back(std::move(arch));
  }
  summary_ = fmt::format("{}: {}", db_path, fmt::join(parts, ", "));
}

std::optional<Choice> OverrideTable::select(std::string_view arch, const ktune_mla_decode_key& key) const {
  for (const auto& a : arches_)
    if (a.name == arch) return resolve(a, values_of(key));
  return std::nullopt;
}

Choice OverrideTable::resolve(const Arch& a, const std::vector<int64_t>& q) const {
  const size_t n = q.size();
  for (size_t i = 0; i < n; ++i)
    if (q[i] < table_.key_fields[i].min || q[i] > table_.key_fields[i].max)
      return {KTUNE_UNSUPPORTED, std::nullopt, false, key_of(q), out_of_range_[i]};
  auto same_except = [&](const std::vector<int64_t>& k, auto skip) {
    for (size_t i = 0; i < n; ++i)
      if (!skip(i) && k[i] != q[i]) return false;
    return true;
  };
  const int bucket = bucket_;
  auto is_bucket = [bucket](size_t i) { return static_cast<int>(i) == bucket; };
  for (const auto& r : a.rows)
    if (r.key == q) return r.exact;
  if (bucket >= 0) {
    const Row* best = nullptr;
    for (const auto& r : a.rows)
      if (same_except(r.key, is_bucket) && (!best || closer(r.key[bucket], best->key[bucket], q[bucket]))) best = &r;
    if (best) {
      Choice c = best->exact;
      if (c.status == KTUNE_OK) c.reason = "nearest tuned batch bucket (KTUNE_DB)";
      return c;
    }
  }
  // Covering: least padded work, then the smallest covering values in key order, then the batch rule.
  auto better = [&](const Row& x, const Row& y) {
    if (x.padded_work != y.padded_work) return x.padded_work < y.padded_work;
    for (size_t i = 0; i < n; ++i)
      if (covering_[i] && x.key[i] != y.key[i]) return x.key[i] < y.key[i];
    return bucket >= 0 && closer(x.key[bucket], y.key[bucket], q[bucket]);
  };
  const Row* best = nullptr;
  for (const auto& r : a.rows) {
    if (r.exact.status != KTUNE_OK || !same_except(r.key, [&](size_t i) { return covering_[i] || is_bucket(i); }))
      continue;
    bool covers = true;
    for (size_t i = 0; i < n; ++i) covers = covers && (!covering_[i] || r.key[i] >= q[i]);
    if (covers && (!best || better(r, *best))) best = &r;
  }
  if (best) {
    Choice c = best->exact;
    c.status = KTUNE_OK_FALLBACK;
    c.has_fallback_key = true;
    c.fallback_key = key_of(best->key);
    c.reason = cover_reason_;
    return c;
  }
  return {KTUNE_UNSUPPORTED, std::nullopt, false, key_of(q),
          "not tuned: no exact, batch-bucket or covering row for this key on this arch (KTUNE_DB)"};
}

}  // namespace ktune::runtime
