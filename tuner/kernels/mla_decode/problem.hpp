#pragma once
// The mla_decode family's fields (problem key, tuning config, timing shape) and their typed
// forms, so that the rest of the family reads `key.heads` instead of looking names up.
#include <optional>
#include <string>
#include <vector>

#include "common/params.hpp"
#include "verify/numeric.hpp"

namespace ktune::mla {

const std::vector<FieldSpec>& key_fields();
const std::vector<FieldSpec>& config_fields();
const std::vector<FieldSpec>& shape_fields();

// What dispatch switches on (arch aside).
struct Key {
  int heads = 0;
  int block_len = 0;
  bool causal = false;
  num::KvDtype kv_dtype = num::KvDtype::bf16;
  int batch = 0;  // batch bucket; timing shapes use it as B
};

// Tuning knobs. rows/keys/threads/stages/math select the kernel instance; split is a host-side
// policy knob (tuner/kernels/mla_decode/split_policy.hpp) and needs no code of its own.
struct Config {
  int rows = 0;     // query rows (h, l pairs) per CTA
  int keys = 0;     // keys per KV tile
  int threads = 0;  // threads per CTA (a vendor-neutral knob: the warp size differs)
  int stages = 0;   // simt: 1 load then compute, 2 prefetch the next tile; mma, wgmma(_ss): ring
                    // slots (MmaGeometry::ring_keys)
  int split = 0;    // 0: never split the keys; n: aim for n CTAs per compute unit
  int math = 0;     // kMathSimt, kMathMma, kMathWgmma, kMathWgmmaSs, kMathWgmmaT or kMathMfmaNative
};

// Values of the math field: the kernel template each selects (mla_decode / mla_decode_mma /
// mla_decode_transposed); wgmma and wgmma_ss are mla_decode_mma with Q K^T and P V on Hopper's
// warpgroup products (sm_90a only), P V as O^T = V^T P^T with V^T from registers (wgmma) or
// O = P V from shared memory (wgmma_ss), wgmma also on the fp8 caches, which its producer
// warpgroup decodes; wgmma_t (sm_90a, fp8 caches) is mla_decode_transposed: S^T = K Q^T and
// O^T = V^T P^T, keys and value dims as the products' 64 rows, 16 or 32 query rows; mfma_native
// (gfx942: fp8_e4m3fnuz caches; gfx950: fp8_e4m3fn and bf16) is mla_decode_mma with the MFMA forms
// that take the cache's own format (templates/mla_decode/mma/mfma_native.hpp).
inline constexpr int kMathSimt = 0;
inline constexpr int kMathMma = 1;
inline constexpr int kMathWgmma = 2;
inline constexpr int kMathWgmmaSs = 3;
inline constexpr int kMathWgmmaT = 4;
inline constexpr int kMathMfmaNative = 5;
constexpr bool is_wgmma(int math) noexcept { return math == kMathWgmma || math == kMathWgmmaSs; }

// A run-time shape beyond the key.
struct Shape {
  int ctx = 0;  // kv_len of the longest request (of every request unless ragged)
  int page_size = 0;
  int batch = 0;        // 0: the key's batch bucket
  bool ragged = false;  // mixed lengths: one request of ctx, one of block_len, the rest in between
};

// Each validates against its field list (names, order, ranges); throws Error otherwise.
Key key_of(const Params& p);
Config config_of(const Params& p);
Shape shape_of(const Params& p);
// Why `shape` cannot be drawn for `key` (a context shorter than the block it includes), or nullopt.
std::optional<std::string> shape_unfit(const Key& key, const Shape& shape);

Params to_params(const Key& k);
Params to_params(const Config& c);
Params to_params(const Shape& s);

// Name expressions of the kernels a config needs for a kv dtype and masking mode; the main kernel's
// template follows c.math. mask_shift plants an off-by-one in the causal/length mask: tests only
// (0 in production).
std::string main_kernel_name(const Config& c, num::KvDtype kv_dtype, bool causal, int mask_shift = 0);
std::string combine_kernel_name();
inline constexpr int kCombineThreads = 256;  // the combine kernel's block size (in its name)

}  // namespace ktune::mla
