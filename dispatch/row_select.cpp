#include "dispatch/row_select.hpp"

#include <algorithm>

namespace ktune::dispatch {
namespace {

// Batch rule: the smallest tuned value >= wanted, else the largest.
bool closer(int64_t x, int64_t y, int64_t wanted) noexcept {
  const bool x_covers = x >= wanted, y_covers = y >= wanted;
  if (x_covers != y_covers) return x_covers;
  return x_covers ? x < y : x > y;
}

}  // namespace

SelectRules SelectRules::of(const Family& family) {
  SelectRules rules;
  const auto& fields = family.key_fields();
  for (size_t i = 0; i < fields.size(); ++i) {
    const bool bucket = fields[i].name == family.bucket_field();
    rules.covering.push_back(!bucket && family.covers_larger(fields[i].name));
    if (bucket) rules.bucket = static_cast<int>(i);
  }
  return rules;
}

SelectRow::SelectRow(const SelectRules& rules, std::vector<int64_t> key_values, bool is_kernel,
                     std::optional<std::vector<int64_t>> fallback_key)
    : key(std::move(key_values)), kernel(is_kernel), fallback(std::move(fallback_key)) {
  for (size_t i = 0; i < key.size() && i < rules.covering.size(); ++i)
    if (rules.covering[i]) padded_work *= static_cast<uint64_t>(key[i]);
}

RowMatch select_row(const SelectRules& rules, std::span<const SelectRow> rows, std::span<const int64_t> q) noexcept {
  const size_t n = q.size();
  const int bucket = rules.bucket;
  auto same_except = [&](const std::vector<int64_t>& k, auto skip) {
    for (size_t i = 0; i < n; ++i)
      if (!skip(i) && k[i] != q[i]) return false;
    return true;
  };
  auto is_bucket = [bucket](size_t i) { return static_cast<int>(i) == bucket; };
  for (size_t i = 0; i < rows.size(); ++i)
    if (std::equal(rows[i].key.begin(), rows[i].key.end(), q.begin(), q.end())) return {Match::exact, i};
  if (bucket >= 0) {
    const SelectRow* best = nullptr;
    for (const auto& r : rows)
      if (same_except(r.key, is_bucket) && (!best || closer(r.key[bucket], best->key[bucket], q[bucket]))) best = &r;
    if (best) return {Match::bucket, static_cast<size_t>(best - rows.data())};
  }
  // Covering: least padded work, then the smallest covering values in key order, then the batch rule.
  auto better = [&](const SelectRow& x, const SelectRow& y) {
    if (x.padded_work != y.padded_work) return x.padded_work < y.padded_work;
    for (size_t i = 0; i < n; ++i)
      if (rules.covering[i] && x.key[i] != y.key[i]) return x.key[i] < y.key[i];
    return bucket >= 0 && closer(x.key[bucket], y.key[bucket], q[bucket]);
  };
  const SelectRow* best = nullptr;
  for (const auto& r : rows) {
    if (!r.kernel || !same_except(r.key, [&](size_t i) { return rules.covering[i] || is_bucket(i); })) continue;
    bool covers = true;
    for (size_t i = 0; i < n; ++i) covers = covers && (!rules.covering[i] || r.key[i] >= q[i]);
    if (covers && (!best || better(r, *best))) best = &r;
  }
  if (best) return {Match::cover, static_cast<size_t>(best - rows.data())};
  return {};
}

std::vector<size_t> fallback_cycle(const SelectRules& rules, std::span<const SelectRow> rows) {
  for (size_t start = 0; start < rows.size(); ++start) {
    std::vector<size_t> path;
    size_t at = start;
    while (!rows[at].kernel && rows[at].fallback) {
      if (std::find(path.begin(), path.end(), at) != path.end()) {
        path.erase(path.begin(), std::find(path.begin(), path.end(), at));  // the loop itself
        return path;
      }
      path.push_back(at);
      const RowMatch next = select_row(rules, rows, *rows[at].fallback);
      if (next.how == Match::none) break;
      at = next.row;
    }
  }
  return {};
}

std::vector<SelectRow> select_rows(const SelectRules& rules, const ArchTable& arch) {
  std::vector<SelectRow> rows;
  for (const auto& e : arch.entries) {
    std::optional<std::vector<int64_t>> fallback;
    if (e.gap && e.gap->fallback) fallback = values_of(*e.gap->fallback);
    rows.emplace_back(rules, values_of(e.key), e.kernel.has_value(), std::move(fallback));
  }
  return rows;
}

std::vector<int64_t> values_of(const Params& p) {
  std::vector<int64_t> v;
  for (const auto& [name, value] : p.items()) v.push_back(value);
  return v;
}

}  // namespace ktune::dispatch
