#pragma once
// Named integer parameters: the common currency of problem keys, tuning configs and shapes.
// Enumerations (kv_dtype, rope mode, ...) are integers with labels declared by a FieldSpec,
// so that the database, the sweep and the generated dispatcher stay family-agnostic.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ktune {

// One field of a key, config or shape. `labels` is empty for plain integers; otherwise the
// value is an index into it (kv_dtype: 0 = "bf16", 1 = "fp8_e4m3fn", ...).
struct FieldSpec {
  std::string name;
  std::string help;
  int64_t min = 0;
  int64_t max = 0;
  std::vector<std::string> labels = {};

  bool is_enum() const noexcept { return !labels.empty(); }
  // "fp8_e4m3fn" for enums, "16" for integers. Throws Error for out-of-range values.
  std::string format(int64_t v) const;
  // Accepts a label or an integer. Throws Error naming the field and the accepted values.
  int64_t parse(std::string_view text) const;
};

// Ordered (name, value) pairs. Order is the declaration order of the owning FieldSpec list,
// which makes the canonical text form (and therefore hashes and DB keys) deterministic.
class Params {
 public:
  Params() = default;
  Params(std::initializer_list<std::pair<std::string, int64_t>> init) : items_(init) {}

  void set(std::string_view name, int64_t value);
  std::optional<int64_t> find(std::string_view name) const noexcept;
  int64_t at(std::string_view name) const;  // throws Error if missing
  const std::vector<std::pair<std::string, int64_t>>& items() const noexcept { return items_; }
  bool empty() const noexcept { return items_.empty(); }

  // Canonical text: "heads=16,block_len=2,causal=0,kv_dtype=1" (raw integers, declaration order).
  std::string canonical() const;
  // Inverse of canonical(). Throws Error on malformed text, and on text that parses but is not
  // what canonical() writes ("heads=016").
  static Params parse_canonical(std::string_view text);
  // Human form with labels: "heads=16 block_len=2 causal=0 kv_dtype=fp8_e4m3fn".
  std::string pretty(const std::vector<FieldSpec>& specs) const;

  friend bool operator==(const Params&, const Params&) = default;
  friend auto operator<=>(const Params&, const Params&) = default;

 private:
  std::vector<std::pair<std::string, int64_t>> items_;
};

// Checks that `p` has exactly the fields of `specs`, in order, each within [min, max].
// Throws Error naming the first offending field.
void validate(const Params& p, const std::vector<FieldSpec>& specs, std::string_view what);

}  // namespace ktune
