#pragma once
// CPU reference of MLA decode attention (double accumulation), per the contract in docs/kernels/mla_decode.md.
#include <cstdint>
#include <vector>

#include "common/uninit_vector.hpp"
#include "verify/numeric.hpp"

namespace ktune::mla {

inline constexpr int kHeadDim = 576;   // 512 latent ("nope") + 64 rope
inline constexpr int kValueDim = 512;  // V is the first 512 dims of the cached K row

// Host copies of one problem's inputs, in the device layouts.
struct HostProblem {
  int batch = 0, block_len = 0, heads = 0, page_size = 0, max_pages = 0;
  bool causal = false;
  num::KvDtype kv_dtype = num::KvDtype::bf16;
  float softmax_scale = 0;
  float kv_scale = 1;                // per-tensor dequant scale (fp8 only; 1 for bf16)
  UninitVector<uint16_t> q;          // [B, L, H, 576] bf16 bits
  UninitVector<uint8_t> kv_cache;    // [pages, page_size, 576] elements of kv_dtype, raw bytes
  std::vector<int32_t> block_table;  // [B, max_pages]
  std::vector<int32_t> kv_lens;      // [B], each >= block_len; includes the block's tokens
};

// Number of keys row (l) of request b sees: kv_len - L + l + 1 when causal, else kv_len.
int visible_keys(const HostProblem& p, int b, int l) noexcept;

// The keys request b sees, in logical order ([kv_len, 576]), gathered through its block table and
// decoded to float (before kv_scale; every cache element is exact in float). p must be one that
// reference() accepts; this does not check it.
std::vector<float> request_keys(const HostProblem& p, int b);

struct Reference {
  std::vector<double> o;    // [B, L, H, 512]
  std::vector<double> lse;  // [B, L, H], natural log of sum exp(scale * q.k)
};

// Throws Error on inconsistent inputs (sizes, kv_len < L, page index out of range, a kv_scale
// other than 1 with a bf16 cache). Only the block-table entries that cover kv_len are read.
// Runs on all cores; the result does not depend on their number or on the paging.
Reference reference(const HostProblem& p);

}  // namespace ktune::mla
