#include "kernels/mla_decode/problem.hpp"

#include <fmt/format.h>

#include "kernels/mla_decode/geometry.hpp"

namespace ktune::mla {

const std::vector<FieldSpec>& key_fields() {
  static const std::vector<FieldSpec> fields = {
      {"heads", "query heads per request (H)", 1, 128},
      {"block_len", "query tokens per request (L): 1 decode, 2..16 draft / verify blocks", 1, 16},
      {"causal", "1: row l sees keys j < kv_len - L + l + 1; 0: every row sees all kv_len keys", 0, 1},
      {"kv_dtype", "KV cache element type", 0, 2, {"bf16", "fp8_e4m3fn", "fp8_e4m3fnuz"}},
      {"batch", "batch bucket (requests per launch)", 1, 4096},
  };
  return fields;
}

const std::vector<FieldSpec>& config_fields() {
  static const std::vector<FieldSpec> fields = {
      {"rows", "query rows (head x token) per CTA: 16, 32, 64 or 128", 16, 128},
      {"keys", "keys per KV tile: 16, 32 or 64; mma and mfma_native also 128 (wgmma, wgmma_ss: 32 or 64; wgmma_t: 64)",
       16, 128},
      {"threads", "threads per CTA: 64, 128, 256 or 512", 64, 512},
      {"stages",
       fmt::format(
           "simt: 1 load a KV tile, then compute, 2 prefetch the next one; mma, wgmma(_ss): slots of the ring of "
           "KV tiles (up to {}; a slot holds a tile, or {} keys of a longer mma tile; two tiles' worth at "
           "least; wgmma_t: 2 or more whole tiles per warpgroup)",
           mla_tile::kMaxRingSlots, mla_tile::kRingSlotKeys),
       1, mla_tile::kMaxRingSlots},
      {"split", "split-KV: 0 never; n: split keys into as many chunks as keep n CTAs per compute unit or fewer", 0, 8},
      {"math",
       "math path: simt (scalar FMA), mma (matrix cores: mma.sync on NVIDIA, MFMA on AMD), wgmma (Q K^T and P V "
       "on Hopper's warpgroup products, sm_90a, P V as O^T = V^T P^T with V^T converted to fp16 in registers) or "
       "wgmma_ss (the same with P V's operands both from shared memory, P as two bf16 terms) or wgmma_t (fp8 "
       "caches, sm_90a: S^T = K Q^T and O^T = V^T P^T with the keys and value dims as the products' rows and K, "
       "V decoded in registers; 16 rows, 64 keys) or mfma_native (mma with the MFMA forms that take the cache's "
       "format: fp8 codes undecoded into Q K^T on gfx942 (fp8_e4m3fnuz) and gfx950 (fp8_e4m3fn), the queries as two "
       "fp8 terms; bf16 at 32 dims a product on gfx950; compiled only, no AMD GPU has run it)",
       0,
       5,
       {"simt", "mma", "wgmma", "wgmma_ss", "wgmma_t", "mfma_native"}},
  };
  return fields;
}

const std::vector<FieldSpec>& shape_fields() {
  static const std::vector<FieldSpec> fields = {
      {"ctx", "kv_len of the longest request (of every request unless ragged); >= block_len", 1, 1 << 20},
      {"page_size", "KV cache page size in tokens", 1, 1 << 16},
      {"batch", "requests; 0: the key's batch bucket", 0, 4096},
      {"ragged", "1: mixed lengths (one of ctx, one of block_len, the rest in between)", 0, 1},
  };
  return fields;
}

Key key_of(const Params& p) {
  validate(p, key_fields(), "mla_decode key");
  return Key{static_cast<int>(p.at("heads")), static_cast<int>(p.at("block_len")), p.at("causal") != 0,
             static_cast<num::KvDtype>(p.at("kv_dtype")), static_cast<int>(p.at("batch"))};
}

Config config_of(const Params& p) {
  validate(p, config_fields(), "mla_decode config");
  return Config{static_cast<int>(p.at("rows")),   static_cast<int>(p.at("keys")),  static_cast<int>(p.at("threads")),
                static_cast<int>(p.at("stages")), static_cast<int>(p.at("split")), static_cast<int>(p.at("math"))};
}

Shape shape_of(const Params& p) {
  validate(p, shape_fields(), "mla_decode shape");
  return Shape{static_cast<int>(p.at("ctx")), static_cast<int>(p.at("page_size")), static_cast<int>(p.at("batch")),
               p.at("ragged") != 0};
}

std::optional<std::string> shape_unfit(const Key& key, const Shape& shape) {
  if (shape.ctx < key.block_len)
    return fmt::format("ctx {} is shorter than block_len {} (the context includes the block)", shape.ctx,
                       key.block_len);
  return std::nullopt;
}

Params to_params(const Key& k) {
  return Params{{"heads", k.heads},
                {"block_len", k.block_len},
                {"causal", k.causal ? 1 : 0},
                {"kv_dtype", static_cast<int64_t>(k.kv_dtype)},
                {"batch", k.batch}};
}

Params to_params(const Config& c) {
  return Params{{"rows", c.rows},     {"keys", c.keys},   {"threads", c.threads},
                {"stages", c.stages}, {"split", c.split}, {"math", c.math}};
}

Params to_params(const Shape& s) {
  return Params{{"ctx", s.ctx}, {"page_size", s.page_size}, {"batch", s.batch}, {"ragged", s.ragged ? 1 : 0}};
}

std::string main_kernel_name(const Config& c, num::KvDtype kv_dtype, bool causal, int mask_shift) {
  // Template parameters (every kernel): ROWS, KEYS, THREADS, STAGES, MATH, KV_DTYPE, CAUSAL, MASK_SHIFT.
  const char* const kernel = c.math == kMathSimt     ? "mla_decode"
                             : c.math == kMathWgmmaT ? "mla_decode_transposed"
                                                     : "mla_decode_mma";
  return fmt::format("ktune::{}<{}, {}, {}, {}, {}, {}, {}, {}>", kernel, c.rows, c.keys, c.threads, c.stages, c.math,
                     static_cast<int>(kv_dtype), causal ? 1 : 0, mask_shift);
}

std::string combine_kernel_name() { return fmt::format("ktune::mla_combine<{}>", kCombineThreads); }

}  // namespace ktune::mla
