#pragma once
// Two databases' outcomes of one kernel family compared key by key (`ktune diff`, and the ratio
// heatmap of `ktune report`): whether the winning config changed, B's time over A's, whether that
// difference lies outside both rows' p10-p90 band, gaps opened and closed, keys of one side only.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/params.hpp"
#include "db/outcomes.hpp"

namespace ktune::db {

enum class Verdict {
  faster,      // both have a winner; B's median is below A's, outside both rows' p10-p90 bands
  slower,      // the same, B's median above A's
  same,        // both have a winner, within noise (one median inside the other row's band)
  gap_opened,  // A has a winner, B a gap
  gap_closed,  // A has a gap, B a winner
  gap_both,    // a gap on both sides
  only_a,      // the key is in A only
  only_b,      // the key is in B only
};
std::string_view to_string(Verdict v) noexcept;
inline constexpr int kVerdicts = 8;

// Comparing two values of one key field of one database (`--pair kv_dtype=bf16,fp8_e4m3fn`):
// A's keys are those with the field at `a`, B's those at `b`, matched on the other fields.
struct Pair {
  std::string field;
  int64_t a = 0, b = 0;
};

struct KeyDiff {
  Params key;                     // A's key; with a pair, the key without the pair's field
  const KeyOutcome* a = nullptr;  // null where the key is in B only
  const KeyOutcome* b = nullptr;  // null where the key is in A only
  Verdict verdict = Verdict::same;
  std::optional<double> ratio;  // B's winner median over A's, where both have a winner
  bool config_changed = false;  // both have a winner, of different configs
  // B's fastest ok median of A's winning config over B's winner median: what running A's choice
  // on B costs. Unset where B did not time A's config ok (a sweep's dump may leave out the
  // candidates screening set aside) or a side has no winner.
  std::optional<double> a_winner_on_b;
};

struct DiffSummary {
  int keys_a = 0, keys_b = 0;
  int both_timed = 0;  // keys with a winner on both sides
  int counts[kVerdicts] = {};
  int configs_changed = 0;
  double geomean_ratio = 0;  // over both_timed keys; 0 when there are none
  double min_ratio = 0, max_ratio = 0;
  int a_winner_on_b_keys = 0;  // keys where a_winner_on_b is known
  double a_winner_on_b_geomean = 0, a_winner_on_b_max = 0;
};

struct Diff {
  std::optional<Pair> pair;
  std::vector<KeyDiff> keys;  // ordered by key
  DiffSummary summary;
};

// `a` and `b` must be of one family (throws Error otherwise); with `pair`, both are usually the
// same database's outcomes. The result points into `a` and `b`.
Diff diff(const Outcomes& a, const Outcomes& b, const std::optional<Pair>& pair = std::nullopt);

// The keys with the largest ratios, largest first (at most `n`).
std::vector<const KeyDiff*> worst_keys(const Diff& d, size_t n);

// Keys that regress beyond `threshold`: verdict slower with a ratio above it, or a gap opened.
std::vector<const KeyDiff*> regressions(const Diff& d, double threshold);

}  // namespace ktune::db
