#include "dispatch/lookup_source.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace ktune::dispatch {

std::string_view lookup_helpers() noexcept {
  return R"src(namespace detail {

// Three-way comparison of lookup fields [first, last).
constexpr int compare(const Key& a, const Key& b, std::size_t first, std::size_t last) noexcept {
  for (std::size_t i = first; i < last; ++i) {
    const std::int64_t x = field(a, i);
    const std::int64_t y = field(b, i);
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

// Index of the first row of `t` whose first `n` lookup fields are not less than `key`'s.
constexpr std::size_t lower_bound(const ArchTable& t, const Key& key, std::size_t n) noexcept {
  std::size_t lo = 0;
  std::size_t hi = t.size;
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (compare(t.rows[mid].key, key, 0, n) < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// Lookups return indices, kArchCount or the table size meaning "none": GCC does not accept
// comparing an element's address with nullptr in a constant expression under -fsanitize.

// string_view comparison reads exactly arch.size() bytes: no terminator is needed.
constexpr std::size_t find_arch(std::string_view arch) noexcept {
  for (std::size_t i = 0; i < kArchCount; ++i) {
    if (kArches[i].arch == arch) return i;
  }
  return kArchCount;
}

// Checks the fields in declaration order, so that the first offending field of Key is reported.
constexpr bool in_range(const Key& key, std::size_t& bad_field) noexcept {
  for (std::size_t declared = 0; declared < kFields; ++declared) {
    const std::size_t i = kLookupIndex[declared];
    const std::int64_t v = field(key, i);
    if (v < kMin[i] || v > kMax[i]) {
      bad_field = i;
      return false;
    }
  }
  return true;
}

constexpr Selection answer(const Row& row, const char* how) noexcept {
  if (row.kind == Selection::Kind::kernel) {
    return Selection{Selection::Kind::kernel, row.kernel, row.key, false, how};
  }
  return Selection{Selection::Kind::gap, nullptr, row.has_fallback_key ? row.fallback_key : row.key,
                   row.has_fallback_key, row.reason};
}

// Batch rule: the smallest tuned batch >= the key's, else the largest.
constexpr bool closer_batch(std::int64_t x, std::int64_t y, std::int64_t wanted) noexcept {
  const bool x_covers = x >= wanted;
  const bool y_covers = y >= wanted;
  if (x_covers != y_covers) return x_covers;
  return x_covers ? x < y : x > y;
}

// The row with all lookup fields but the batch equal to `key`'s, chosen by the batch rule.
constexpr std::size_t batch_bucket(const ArchTable& t, const Key& key) noexcept {
  if (kCovering == kFields) return t.size;  // the family has no batch field
  const std::size_t i = lower_bound(t, key, kFields);
  if (i < t.size && compare(t.rows[i].key, key, 0, kCovering) == 0) return i;
  if (i > 0 && compare(t.rows[i - 1].key, key, 0, kCovering) == 0) return i - 1;
  return t.size;
}

// The work a covering row pads to: the product of its covering fields (saturating).
constexpr std::uint64_t padded_work(const Key& k) noexcept {
  std::uint64_t work = 1;
  // `!=` rather than `<`: with kFixed == kCovering == 0, clang's -Wtype-limits calls `i < 0` tautological.
  for (std::size_t i = kFixed; i != kCovering; ++i) {
    const std::uint64_t v = static_cast<std::uint64_t>(field(k, i));
    constexpr std::uint64_t kMax64 = std::numeric_limits<std::uint64_t>::max();
    work = (v != 0 && work > kMax64 / v) ? kMax64 : work * v;
  }
  return work;
}

constexpr bool better_cover(const Key& a, const Key& b, const Key& key) noexcept {
  const std::uint64_t work_a = padded_work(a);
  const std::uint64_t work_b = padded_work(b);
  if (work_a != work_b) return work_a < work_b;
  const int c = compare(a, b, kFixed, kCovering);
  if (c != 0) return c < 0;
  if (kCovering == kFields) return false;  // no batch field
  return closer_batch(field(a, kCovering), field(b, kCovering), field(key, kCovering));
}

// Covering rule: among the kernel rows with the key's fixed fields and every covering field >=
// the key's, the least padded work, then the smallest covering fields, then the batch rule.
constexpr std::size_t cover(const ArchTable& t, const Key& key) noexcept {
  std::size_t best = t.size;
  if (kFixed == kCovering) return best;  // no field may be covered
  for (std::size_t i = lower_bound(t, key, kFixed); i < t.size; ++i) {
    const Row& row = t.rows[i];
    if (compare(row.key, key, 0, kFixed) != 0) break;  // past the rows with the key's fixed fields
    if (row.kind != Selection::Kind::kernel) continue;
    bool covers = true;
    for (std::size_t f = kFixed; f != kCovering; ++f) {
      covers = covers && field(row.key, f) >= field(key, f);
    }
    if (covers && (best == t.size || better_cover(row.key, t.rows[best].key, key))) best = i;
  }
  return best;
}

// What the binary search relies on, checked by the compiler (the static_asserts after this, one
// per arch and 1024 rows: clang stops a constant evaluation after a million steps): rows
// [begin, end) of arch `a` strictly sorted in lookup order, after the row before them, keys in
// range.
constexpr bool well_formed(std::size_t a, std::size_t begin, std::size_t end) noexcept {
  const ArchTable& t = kArches[a];
  if (t.size == 0 || t.arch.empty() || end > t.size) return false;
  for (std::size_t i = begin; i < end; ++i) {
    std::size_t bad = 0;
    if (!in_range(t.rows[i].key, bad)) return false;
    if (i > 0 && compare(t.rows[i - 1].key, t.rows[i].key, 0, kFields) >= 0) return false;
  }
  return true;
}

}  // namespace detail
)src";
}

std::string well_formed_checks(const std::vector<size_t>& rows_per_arch) {
  constexpr size_t kChunk = 1024;
  std::string out;
  for (size_t a = 0; a < rows_per_arch.size(); ++a)
    for (size_t begin = 0; begin < std::max<size_t>(rows_per_arch[a], 1); begin += kChunk)
      out += fmt::format(
          "static_assert(detail::well_formed({}, {}, {}), \"ktune dispatch table is malformed: regenerate it with "
          "ktune codegen\");\n",
          a, begin, std::min(begin + kChunk, std::max<size_t>(rows_per_arch[a], 1)));
  return out;
}

std::string_view select_definition() noexcept {
  return R"src(constexpr Selection select(std::string_view arch, const Key& key) noexcept {
  const std::size_t a = detail::find_arch(arch);
  if (a == kArchCount) {
    return Selection{Selection::Kind::unsupported, nullptr, key, false,
                     "unknown arch: this header has no table for it"};
  }
  std::size_t bad_field = 0;
  if (!detail::in_range(key, bad_field)) {
    return Selection{Selection::Kind::unsupported, nullptr, key, false, detail::kOutOfRange[bad_field]};
  }
  const detail::ArchTable& t = detail::kArches[a];
  const std::size_t exact = detail::lower_bound(t, key, detail::kFields);
  if (exact < t.size && detail::compare(t.rows[exact].key, key, 0, detail::kFields) == 0) {
    return detail::answer(t.rows[exact], "exact match");
  }
  const std::size_t bucket = detail::batch_bucket(t, key);
  if (bucket < t.size) return detail::answer(t.rows[bucket], "nearest tuned batch bucket");
  const std::size_t covering = detail::cover(t, key);
  if (covering < t.size) {
    const detail::Row& row = t.rows[covering];
    return Selection{Selection::Kind::fallback, row.kernel, row.key, true, detail::kCoverReason};
  }
  return Selection{Selection::Kind::unsupported, nullptr, key, false,
                   "not tuned: no exact, batch-bucket or covering row for this key on this arch"};
}
)src";
}

}  // namespace ktune::dispatch
