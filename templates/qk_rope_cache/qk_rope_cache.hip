// Fused decode preparation of MLA: rotary embedding of q_pe and k_pe, the paged KV-cache write of
// [kv_c | rope(k_pe)] and the decode query [q_nope | rope(q_pe)], in one launch; the unfused
// baseline (rope, cache write, concat, quantise as separate kernels) is at the end of this file.
// Every output row (H query rows and one cache row per token) is cut into chunks of VEC elements,
// each loaded, rotated where it lies in the rope part, converted and stored with one vector access
// per operand; LAYOUT 0 ("token"): a CTA takes TPC tokens and all H + 1 rows of each; LAYOUT 1
// ("token_head"): one row of TPC tokens. The tensors, the rope pairs (GPT-J, NeoX), CLAMP and the
// fp8 scales: docs/kernels/qk_rope_cache.md.
#include "common/prelude.hpp"

namespace ktune {
namespace rope_detail {

constexpr int kNope = 512;  // latent ("nope") part of a row
constexpr int kRope = 64;   // rotary part
constexpr int kRow = kNope + kRope;
constexpr int kHalf = kRope / 2;  // cos / sin entries per table row

// Codes of the kv_dtype / q_dtype key fields and template parameters.
constexpr int kBf16 = 0;
constexpr int kFp8E4m3fn = 1;
constexpr int kFp8E4m3fnuz = 2;
__host__ __device__ constexpr int bytes_of(int dtype) { return dtype == kBf16 ? 2 : 1; }

// WORDS 32-bit words accessed as one vector (16, 8 or 4 bytes).
template <int WORDS>
struct alignas(4 * WORDS) Words {
  u32 w[WORDS];
};

template <int N>
__device__ __forceinline__ void load_bf16(const u16* p, float (&f)[N]) {
  static_assert(N == 2 || N == 4 || N == 8, "N: 2, 4 or 8 elements");
  const Words<N / 2> v = *reinterpret_cast<const Words<N / 2>*>(p);
#pragma unroll
  for (int i = 0; i < N / 2; ++i) {
    f[2 * i] = bf16_lo(v.w[i]);
    f[2 * i + 1] = bf16_hi(v.w[i]);
  }
}

template <int N>
__device__ __forceinline__ void copy_bf16(const u16* src, u16* dst) {
  *reinterpret_cast<Words<N / 2>*>(dst) = *reinterpret_cast<const Words<N / 2>*>(src);
}

template <int OUT>
__device__ __forceinline__ u32 encode_fp8x2(float lo, float hi) {
  if (OUT == kFp8E4m3fn) return float2_to_fp8x2_e4m3fn(lo, hi);
  return float_to_fp8_e4m3fnuz(lo) | (float_to_fp8_e4m3fnuz(hi) << 8);
}

// Stores N values as elements [e0, e0 + N) of a row of OUT elements; fp8 multiplies by inv_scale
// (1 / scale) first.
template <int OUT, int N>
__device__ __forceinline__ void store(u8* row, int e0, const float (&f)[N], float inv_scale) {
  if (OUT == kBf16) {
    Words<N / 2> v;
#pragma unroll
    for (int i = 0; i < N / 2; ++i) v.w[i] = pack_bf16x2(f[2 * i], f[2 * i + 1]);
    *reinterpret_cast<Words<N / 2>*>(row + 2 * e0) = v;
  } else if (N == 2) {
    *reinterpret_cast<u16*>(row + e0) = static_cast<u16>(encode_fp8x2<OUT>(f[0] * inv_scale, f[1] * inv_scale));
  } else {
    // Taken only for N >= 4, but instantiated for N == 2 as well (no `if constexpr` in the C++14
    // that hipRTC 5.2 compiles): WORDS must stay >= 1 there, as NVRTC rejects a zero-size array.
    constexpr int WORDS = N >= 4 ? N / 4 : 1;
    Words<WORDS> v;
#pragma unroll
    for (int i = 0; i < N / 4; ++i)
      v.w[i] = encode_fp8x2<OUT>(f[4 * i] * inv_scale, f[4 * i + 1] * inv_scale) |
               (encode_fp8x2<OUT>(f[4 * i + 2] * inv_scale, f[4 * i + 3] * inv_scale) << 16);
    *reinterpret_cast<Words<WORDS>*>(row + e0) = v;
  }
}

// The table row of `position`: clamped into [0, table_rows) with CLAMP, as given without.
template <int CLAMP>
__device__ __forceinline__ i64 table_row(i64 position, i64 table_rows) {
  if (!CLAMP) return position;
  return position < 0 ? 0 : (position >= table_rows ? table_rows - 1 : position);
}

// Rotated elements [j0, j0 + N) of a 64-element rope vector `pe`, with the table row's cos / sin.
template <int N>
__device__ __forceinline__ void rope_chunk(const u16* pe, int j0, const float* cos_row, const float* sin_row,
                                           int is_neox, float (&out)[N]) {
  float x[N];
  load_bf16<N>(pe + j0, x);
  if (is_neox) {
    // Element j pairs with j + 32 (first half) or j - 32 (second half), angle j % 32.
    const bool first = j0 < kHalf;
    float partner[N];
    load_bf16<N>(pe + (first ? j0 + kHalf : j0 - kHalf), partner);
    const int a0 = first ? j0 : j0 - kHalf;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const float c = cos_row[a0 + i], s = sin_row[a0 + i];
      out[i] = first ? x[i] * c - partner[i] * s : x[i] * c + partner[i] * s;
    }
  } else {
    // Pairs (2i, 2i + 1) rotate by angle i.
#pragma unroll
    for (int p = 0; p < N / 2; ++p) {
      const int a = j0 / 2 + p;
      const float c = cos_row[a], s = sin_row[a];
      out[2 * p] = x[2 * p] * c - x[2 * p + 1] * s;
      out[2 * p + 1] = x[2 * p + 1] * c + x[2 * p] * s;
    }
  }
}

// Chunk `chunk` (elements [chunk * N, chunk * N + N)) of one output row: copied / converted from
// `nope` in the first 512 elements, rotated from `pe` in the last 64.
template <int N, int OUT>
__device__ __forceinline__ void row_chunk(const u16* nope, const u16* pe, const float* cos_row, const float* sin_row,
                                          int is_neox, int chunk, u8* row, float inv_scale) {
  const int e0 = chunk * N;
  float f[N];
  if (e0 < kNope) {
    if (OUT == kBf16) {  // bf16 to bf16: the bits, unchanged
      copy_bf16<N>(nope + e0, reinterpret_cast<u16*>(row) + e0);
      return;
    }
    load_bf16<N>(nope + e0, f);
  } else {
    rope_chunk<N>(pe, e0 - kNope, cos_row, sin_row, is_neox, f);
  }
  store<OUT, N>(row, e0, f, inv_scale);
}

}  // namespace rope_detail

// LAYOUT (0 token, 1 token_head), VEC elements per access (2, 4, 8), TPC tokens per CTA,
// THREADS per CTA, CLAMP (1: clamp positions into the table), KV_DTYPE and Q_DTYPE (0 bf16,
// 1 fp8_e4m3fn, 2 fp8_e4m3fnuz). Grid: (ceil(T / TPC)) for LAYOUT 0, (ceil(T / TPC), H + 1) for
// LAYOUT 1. k_inv_scale / q_inv_scale are 1 / k_scale and 1 / q_scale (unused for bf16).
template <int LAYOUT, int VEC, int TPC, int THREADS, int CLAMP, int KV_DTYPE, int Q_DTYPE>
__global__ void __launch_bounds__(THREADS)
    qk_rope_cache(const u16* __restrict__ q_nope, const u16* __restrict__ q_pe, const u16* __restrict__ kv_c,
                  const u16* __restrict__ k_pe, const i64* __restrict__ positions,
                  const i64* __restrict__ slot_mapping, const float* __restrict__ cos_table,
                  const float* __restrict__ sin_table, u8* __restrict__ kv_cache, u8* __restrict__ q_out,
                  float k_inv_scale, float q_inv_scale, int tokens, int heads, i64 table_rows, int is_neox) {
  using namespace rope_detail;
  static_assert(LAYOUT == 0 || LAYOUT == 1, "LAYOUT: 0 token, 1 token_head");
  static_assert(VEC == 2 || VEC == 4 || VEC == 8, "VEC: 2, 4 or 8");
  static_assert(TPC >= 1, "TPC >= 1");
  static_assert(THREADS % kWarp == 0, "THREADS must be a multiple of the warp size");
  static_assert(KV_DTYPE >= kBf16 && KV_DTYPE <= kFp8E4m3fnuz && Q_DTYPE >= kBf16 && Q_DTYPE <= kFp8E4m3fnuz,
                "KV_DTYPE / Q_DTYPE: 0 bf16, 1 fp8_e4m3fn, 2 fp8_e4m3fnuz");
  constexpr int CHUNKS = kRow / VEC;
  const int rows_per_token = heads + 1;  // H query rows, then the cache row
  const int t0 = static_cast<int>(blockIdx.x) * TPC;
  const int items = LAYOUT == 0 ? TPC * rows_per_token * CHUNKS : TPC * CHUNKS;

  for (int i = static_cast<int>(threadIdx.x); i < items; i += THREADS) {
    const int chunk = i % CHUNKS;
    const int r = i / CHUNKS;
    const int row = LAYOUT == 0 ? r % rows_per_token : static_cast<int>(blockIdx.y);
    const int t = t0 + (LAYOUT == 0 ? r / rows_per_token : r);
    if (t >= tokens) break;  // items are ordered by token
    const i64 trow = table_row<CLAMP>(positions[t], table_rows);
    const float* const cos_row = cos_table + trow * kHalf;
    const float* const sin_row = sin_table + trow * kHalf;
    if (row == heads) {
      const i64 slot = slot_mapping[t];
      if (slot < 0) continue;  // padded token: nothing written to the cache
      row_chunk<VEC, KV_DTYPE>(kv_c + static_cast<i64>(t) * kNope, k_pe + static_cast<i64>(t) * kRope, cos_row,
                               sin_row, is_neox, chunk, kv_cache + slot * (kRow * bytes_of(KV_DTYPE)), k_inv_scale);
    } else {
      const i64 qrow = static_cast<i64>(t) * heads + row;
      row_chunk<VEC, Q_DTYPE>(q_nope + qrow * kNope, q_pe + qrow * kRope, cos_row, sin_row, is_neox, chunk,
                              q_out + qrow * (kRow * bytes_of(Q_DTYPE)), q_inv_scale);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The unfused baseline: the sequence a serving engine runs without the fused kernel, one
// elementwise kernel per step, each over a flat index space with grid ceil(items / THREADS):
//   1. unfused_rope:     q_pe_rot [T, H, 64], k_pe_rot [T, 64] (bf16) = rope(q_pe), rope(k_pe)
//   2. unfused_cache:    kv_cache[slot] = [kv_c | k_pe_rot] in KV_DTYPE (skips padded tokens)
//   3. unfused_concat:   q_cat [T, H, 576] bf16 = [q_nope | q_pe_rot] (q_out itself for bf16)
//   4. unfused_quantise: q_out = q_cat / q_scale in Q_DTYPE (fp8 q_out only)
// The rotated copies are rounded to bf16 between steps, as in the unfused engines.

// items = (T * (H + 1)) rope vectors x 64 / VEC chunks; vector v < T * H is q_pe's, the rest k_pe's.
template <int VEC, int THREADS, int CLAMP>
__global__ void __launch_bounds__(THREADS)
    unfused_rope(const u16* __restrict__ q_pe, const u16* __restrict__ k_pe, const i64* __restrict__ positions,
                 const float* __restrict__ cos_table, const float* __restrict__ sin_table,
                 u16* __restrict__ q_pe_rot, u16* __restrict__ k_pe_rot, int tokens, int heads, i64 table_rows,
                 int is_neox) {
  using namespace rope_detail;
  constexpr int CHUNKS = kRope / VEC;
  const i64 q_vectors = static_cast<i64>(tokens) * heads;
  const i64 i = static_cast<i64>(blockIdx.x) * THREADS + threadIdx.x;
  if (i >= (q_vectors + tokens) * CHUNKS) return;
  const i64 v = i / CHUNKS;
  const int j0 = static_cast<int>(i % CHUNKS) * VEC;
  const bool is_q = v < q_vectors;
  const i64 t = is_q ? v / heads : v - q_vectors;
  const i64 trow = table_row<CLAMP>(positions[t], table_rows);
  const u16* const src = is_q ? q_pe + v * kRope : k_pe + t * kRope;
  u16* const dst = is_q ? q_pe_rot + v * kRope : k_pe_rot + t * kRope;
  float f[VEC];
  rope_chunk<VEC>(src, j0, cos_table + trow * kHalf, sin_table + trow * kHalf, is_neox, f);
  store<kBf16, VEC>(reinterpret_cast<u8*>(dst), j0, f, 1.f);
}

// items = T x 576 / VEC chunks.
template <int VEC, int THREADS, int KV_DTYPE>
__global__ void __launch_bounds__(THREADS)
    unfused_cache(const u16* __restrict__ kv_c, const u16* __restrict__ k_pe_rot,
                  const i64* __restrict__ slot_mapping, u8* __restrict__ kv_cache, float k_inv_scale, int tokens) {
  using namespace rope_detail;
  constexpr int CHUNKS = kRow / VEC;
  const i64 i = static_cast<i64>(blockIdx.x) * THREADS + threadIdx.x;
  if (i >= static_cast<i64>(tokens) * CHUNKS) return;
  const i64 t = i / CHUNKS;
  const int e0 = static_cast<int>(i % CHUNKS) * VEC;
  const i64 slot = slot_mapping[t];
  if (slot < 0) return;
  u8* const row = kv_cache + slot * (kRow * bytes_of(KV_DTYPE));
  const u16* const src = e0 < kNope ? kv_c + t * kNope + e0 : k_pe_rot + t * kRope + (e0 - kNope);
  if (KV_DTYPE == kBf16) {
    copy_bf16<VEC>(src, reinterpret_cast<u16*>(row) + e0);
  } else {
    float f[VEC];
    load_bf16<VEC>(src, f);
    store<KV_DTYPE, VEC>(row, e0, f, k_inv_scale);
  }
}

// items = T x H x 576 / VEC chunks.
template <int VEC, int THREADS>
__global__ void __launch_bounds__(THREADS)
    unfused_concat(const u16* __restrict__ q_nope, const u16* __restrict__ q_pe_rot, u16* __restrict__ q_cat,
                   int tokens, int heads) {
  using namespace rope_detail;
  constexpr int CHUNKS = kRow / VEC;
  const i64 i = static_cast<i64>(blockIdx.x) * THREADS + threadIdx.x;
  if (i >= static_cast<i64>(tokens) * heads * CHUNKS) return;
  const i64 qrow = i / CHUNKS;
  const int e0 = static_cast<int>(i % CHUNKS) * VEC;
  const u16* const src = e0 < kNope ? q_nope + qrow * kNope + e0 : q_pe_rot + qrow * kRope + (e0 - kNope);
  copy_bf16<VEC>(src, q_cat + qrow * kRow + e0);
}

// items = elements / VEC.
template <int VEC, int THREADS, int Q_DTYPE>
__global__ void __launch_bounds__(THREADS)
    unfused_quantise(const u16* __restrict__ q_cat, u8* __restrict__ q_out, float q_inv_scale, i64 elements) {
  using namespace rope_detail;
  const i64 i = static_cast<i64>(blockIdx.x) * THREADS + threadIdx.x;
  if (i * VEC >= elements) return;
  float f[VEC];
  load_bf16<VEC>(q_cat + i * VEC, f);
  store<Q_DTYPE, VEC>(q_out + i * VEC * bytes_of(Q_DTYPE), 0, f, q_inv_scale);
}

}  // namespace ktune
