#pragma once
// CPU reference of the fused QK-RoPE + KV-cache write + query quantisation
// (docs/kernels/qk_rope_cache.md), in double, and the check of a kernel's outputs against it: q_out and every
// written cache row within the dtype's tolerance, every other cache slot bit-identical to what it
// held before (the canary).
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/family.hpp"
#include "verify/numeric.hpp"

namespace ktune::rope {

inline constexpr int kNopeDim = 512;  // kv_lora_rank: the latent part of a row
inline constexpr int kRopeDim = 64;   // the rotary part
inline constexpr int kRowDim = kNopeDim + kRopeDim;
inline constexpr int kTableDim = kRopeDim / 2;  // cos / sin entries per table row

// The element type of the cos / sin tables a caller hands over. Only fp32 is served: a bf16 table
// (8 significant bits) turns large-position angles into noise, so it is rejected, never converted.
enum class TableDtype : int { fp32 = 0, bf16 = 1 };

// Host copies of one problem's inputs, in the device layouts.
struct HostProblem {
  int tokens = 0, heads = 0, page_size = 0;
  int64_t num_slots = 0;  // cache rows: pages * page_size
  bool identity = false;  // rope mode: the contract is an identity rotation (NoPE)
  bool is_neox = false;
  num::KvDtype kv_dtype = num::KvDtype::bf16;
  num::KvDtype q_dtype = num::KvDtype::bf16;
  float k_scale = 1, q_scale = 1;  // fp8 only; 1 for bf16
  TableDtype table_dtype = TableDtype::fp32;
  int64_t table_rows = 0;
  std::vector<uint16_t> q_nope, q_pe, kv_c, k_pe;  // bf16 bits: [T, H, 512], [T, H, 64], [T, 512], [T, 64]
  std::vector<int64_t> positions, slot_mapping;    // [T]; slot < 0: padded token
  std::vector<float> cos, sin;                     // [table_rows, 32]
  std::vector<uint8_t> kv_cache;                   // [num_slots, 576] of kv_dtype: the contents before the launch
};

struct Reference {
  std::vector<double> q_out;    // [T, H, 576], values (before q_scale quantisation)
  std::vector<double> kv_rows;  // [T, 576], the row each token writes (padded tokens' rows unused)
};

// Throws Error on inconsistent inputs: sizes, a bf16 table, slots outside the cache or written
// twice, a full-rope position outside the table, a scale other than 1 for bf16, non-finite scales.
void validate(const HostProblem& p);

// validate(p), then the reference outputs. An identity rope is rotation-free by contract: its table is validated (at
// least one row) but not read, so that a table that is not the identity makes a kernel that reads it disagree.
Reference reference(const HostProblem& p);

// The bytes a kernel should leave: q_out [T, H, 576] in q_dtype and the cache with the written
// rows encoded (fp8: round(x / scale) with num's encoders) and every other byte as it was.
struct Outputs {
  std::vector<uint8_t> q_out;
  std::vector<uint8_t> kv_cache;
};
Outputs encode(const HostProblem& p, const Reference& ref);

// Checks a kernel's outputs (raw bytes, device layouts) against the reference: q_out and the
// written cache rows within the tolerance of their dtype, every other cache byte equal to
// p.kv_cache. The detail names the first offender.
Verdict check(const HostProblem& p, const Reference& ref, std::span<const uint8_t> q_out,
              std::span<const uint8_t> kv_cache);

}  // namespace ktune::rope
