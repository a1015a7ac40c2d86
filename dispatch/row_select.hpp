#pragma once
// The generated select()'s rules (dispatch/lookup_source.cpp: exact key, nearest batch bucket,
// covering fields) over rows held in memory, for the tables that are not compiled: KTUNE_DB's
// at run time (runtime/override_table.cpp) and the fallback-chain validator of build_table. The
// generated header keeps its own constexpr copy: it is compiled by users without ktune's sources.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "dispatch/table.hpp"

namespace ktune::dispatch {

struct SelectRules {
  std::vector<bool> covering;  // per key field: may be served by a row with a larger value
  int bucket = -1;             // index of the bucket field (batch); -1: the family has none
  static SelectRules of(const Family& family);
};

struct SelectRow {
  std::vector<int64_t> key;                      // the key fields' values, in order
  bool kernel = false;                           // a kernel row (covering serves only these); else a gap
  std::optional<std::vector<int64_t>> fallback;  // a gap's declared fallback key
  uint64_t padded_work = 1;                      // product of the covering fields: the covering rule's first rank
  SelectRow(const SelectRules& rules, std::vector<int64_t> key, bool kernel,
            std::optional<std::vector<int64_t>> fallback = std::nullopt);
};

enum class Match { exact, bucket, cover, none };
struct RowMatch {
  Match how = Match::none;
  size_t row = 0;  // index into the rows; none: unset
};

// The row that answers `query` (in range: the caller checks the fields' bounds first). Allocates
// nothing: it runs on the launch path of KTUNE_DB's table.
RowMatch select_row(const SelectRules& rules, std::span<const SelectRow> rows, std::span<const int64_t> query) noexcept;

// The rows a caller goes round when it follows the gaps' fallbacks, each fallback selected as
// the caller's next call would be, starting at the first gap row that never gets to a kernel, a
// gap without a fallback or an unsupported key; empty when there is no such gap.
std::vector<size_t> fallback_cycle(const SelectRules& rules, std::span<const SelectRow> rows);

// The rows of `arch` of `table`, in its entries' order.
std::vector<SelectRow> select_rows(const SelectRules& rules, const ArchTable& arch);

// Key values in the order of the family's fields.
std::vector<int64_t> values_of(const Params& p);

}  // namespace ktune::dispatch
