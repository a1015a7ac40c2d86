#pragma once
// The qk_rope_cache family's fields (problem key, tuning config, timing shape), their typed forms
// and the name expressions of its kernels.
#include <string>
#include <vector>

#include "common/params.hpp"
#include "verify/numeric.hpp"

namespace ktune::rope {

const std::vector<FieldSpec>& key_fields();
const std::vector<FieldSpec>& config_fields();
const std::vector<FieldSpec>& shape_fields();

enum class RopeMode : int { full = 0, identity = 1 };
enum class Layout : int { token = 0, token_head = 1 };

// What dispatch switches on (arch aside). q_dtype shares kv_dtype's codes (bf16, fp8_e4m3fn,
// fp8_e4m3fnuz).
struct Key {
  int heads = 0;
  num::KvDtype kv_dtype = num::KvDtype::bf16;
  num::KvDtype q_dtype = num::KvDtype::bf16;
  RopeMode rope = RopeMode::full;
  bool is_neox = false;
  int tokens = 0;  // tokens bucket (T); timing shapes use it as T
};

// Tuning knobs. fused = 0 is the unfused baseline (separate rope, cache-write, concat and
// quantise kernels), which takes vec, threads and clamp and no layout or tokens_per_cta.
struct Config {
  Layout layout = Layout::token;
  int vec = 0;             // elements per vector access: 2, 4 or 8
  int tokens_per_cta = 0;  // 1, 2 or 4
  int threads = 0;         // threads per CTA
  bool clamp = false;      // clamps positions into the cos / sin table
  bool fused = false;
};

// A run-time shape beyond the key.
struct Shape {
  int tokens = 0;        // T; 0: the key's tokens bucket
  int page_size = 0;     // KV cache page size in tokens
  int table_rows = 0;    // rows of the cos / sin tables of a full rope (identity: always 1)
  int padded_every = 0;  // every n-th token is padded (slot -1); 0: none
};

// Each validates against its field list (names, order, ranges); throws Error otherwise.
Key key_of(const Params& p);
Config config_of(const Params& p);
Shape shape_of(const Params& p);

Params to_params(const Key& k);
Params to_params(const Config& c);
Params to_params(const Shape& s);

// Name expressions of the kernels a config launches, in launch order: the fused kernel, or the
// unfused sequence (rope, cache, concat, and quantise for an fp8 q_out).
std::vector<std::string> kernel_names(const Config& c, num::KvDtype kv_dtype, num::KvDtype q_dtype);

// The fused kernel's CTA: work items (VEC-element chunks) one CTA covers for `heads`.
int items_per_cta(const Config& c, int heads) noexcept;

}  // namespace ktune::rope
