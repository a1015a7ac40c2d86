// Paged MLA decode attention (DeepSeek-V3 / Kimi style) for a block of L query tokens per
// request, SIMT math path, and the split-KV combine that all mla_decode kernels share. A CTA takes
// ROWS consecutive (token, head) rows of one request (the fold: they share one latent KV head) and
// streams that request's keys, or its split's chunk of them, through shared memory once for all;
// grid (ceil(H * L / ROWS), num_splits, B). The tensors, the causal mask, the fold and the split-KV
// workspace: docs/kernels/mla_decode.md.
#include "common/launch_order.hpp"
#include "common/prelude.hpp"
#include "mla_decode/geometry.hpp"
#include "mla_decode/kernel_common.hpp"

namespace ktune {
namespace mla_detail {

using namespace mla_tile;

// Moves one KV tile (KEYS consecutive keys of one request) from the paged cache into shared
// memory as bf16, in two steps so that the second pipeline stage can overlap them with compute:
// fetch() issues the global loads into registers, commit() decodes and stores them.
// Keys at or past `end` are not read (their pages may not exist) and become zeros.
template <int KEYS, int THREADS, int KV_DTYPE>
struct KvTile {
  static constexpr int kVecsPerRow = kHeadDim * kv_bytes(KV_DTYPE) / 16;
  static constexpr int kVecs = ceil_div(KEYS * kVecsPerRow, THREADS);

  const u8* kv_cache;
  const i32* pages;  // this request's row of the block table
  int page_size;

  __device__ __forceinline__ void fetch(u32x4 (&regs)[kVecs], int tile_start, int end) const {
#pragma unroll
    for (int v = 0; v < kVecs; ++v) {
      const int idx = static_cast<int>(threadIdx.x) + v * THREADS;
      const int key = idx / kVecsPerRow;
      const int j = tile_start + key;
      regs[v] = zero_u32x4();
      if (idx < KEYS * kVecsPerRow && j < end) {
        const i64 slot = look_up_key(pages, j, page_size, true).row(page_size);
        regs[v] = load16(kv_cache + slot * (kHeadDim * kv_bytes(KV_DTYPE)) + (idx % kVecsPerRow) * 16);
      }
    }
  }

  __device__ __forceinline__ void commit(const u32x4 (&regs)[kVecs], u16* tile) const {
#pragma unroll
    for (int v = 0; v < kVecs; ++v) {
      const int idx = static_cast<int>(threadIdx.x) + v * THREADS;
      if (idx >= KEYS * kVecsPerRow) continue;
      u16* row = tile + (idx / kVecsPerRow) * kSmemStride;
      const int vec = idx % kVecsPerRow;
      if (KV_DTYPE == kKvBf16) {
        store16(row + vec * kVec, regs[v]);
      } else {  // 16 fp8 codes -> 16 bf16 = two vectors
        const u32x4& c = regs[v];
        u32x4 lo, hi;
        lo.x = fp8x2_to_bf16x2<KV_DTYPE>(c.x), lo.y = fp8x2_to_bf16x2<KV_DTYPE>(c.x >> 16);
        lo.z = fp8x2_to_bf16x2<KV_DTYPE>(c.y), lo.w = fp8x2_to_bf16x2<KV_DTYPE>(c.y >> 16);
        hi.x = fp8x2_to_bf16x2<KV_DTYPE>(c.z), hi.y = fp8x2_to_bf16x2<KV_DTYPE>(c.z >> 16);
        hi.z = fp8x2_to_bf16x2<KV_DTYPE>(c.w), hi.w = fp8x2_to_bf16x2<KV_DTYPE>(c.w >> 16);
        store16(row + vec * 2 * kVec, lo);
        store16(row + vec * 2 * kVec + kVec, hi);
      }
    }
  }
};

}  // namespace mla_detail

// ROWS query rows x KEYS keys per tile, THREADS threads, STAGES pipeline stages (1 or 2),
// MATH math path (0 = SIMT), KV_DTYPE (0 bf16, 1 fp8_e4m3fn, 2 fp8_e4m3fnuz), CAUSAL (0/1).
// MASK_SHIFT is a test-only fault injection (see visible_keys): production instances pass 0.
// It has no default because hipRTC 5.2 resolves name expressions only with every argument given.
// Dynamic shared memory: mla_tile::Geometry::shared_bytes().
template <int ROWS, int KEYS, int THREADS, int STAGES, int MATH, int KV_DTYPE, int CAUSAL, int MASK_SHIFT>
__global__ void __launch_bounds__(THREADS)
    mla_decode(const u16* __restrict__ q, const u8* __restrict__ kv_cache, const i32* __restrict__ block_table,
               const i32* __restrict__ kv_lens, u16* __restrict__ o, float* __restrict__ lse,
               float* __restrict__ part_o, float* __restrict__ part_lse, float softmax_scale, float kv_scale,
               int heads, int block_len, int max_pages, int page_size, int num_splits) {
  using namespace mla_tile;
  using namespace mla_detail;
  static_assert(MATH == 0, "only the SIMT math path (MATH = 0) exists");
  static_assert(THREADS % kWarp == 0, "THREADS must be a multiple of the warp size");
  constexpr Geometry G{ROWS, KEYS, THREADS, STAGES, KV_DTYPE};
  static_assert(G.valid(), "ROWS / KEYS / THREADS / STAGES do not tile (see Geometry::valid)");
  constexpr int PS = G.p_stride();

  extern __shared__ u32x4 smem[];
  unsigned char* const smem_bytes = reinterpret_cast<unsigned char*>(smem);
  u16* const sQ = reinterpret_cast<u16*>(smem_bytes);
  u16* const sK = reinterpret_cast<u16*>(smem_bytes + G.k_offset());
  float* const sP = reinterpret_cast<float*>(smem_bytes + G.p_offset());
  float* const sMax = reinterpret_cast<float*>(smem_bytes + G.stats_offset());  // running max (log2 domain)
  float* const sSum = sMax + ROWS;                                              // running sum
  float* const sAlpha = sSum + ROWS;                                            // this tile's rescale

  const int tid = static_cast<int>(threadIdx.x);
  const int b = static_cast<int>(blockIdx.z);
  const int split = static_cast<int>(blockIdx.y);
  const int row0 = static_cast<int>(blockIdx.x) * ROWS;
  const int rows_per_request = heads * block_len;
  const int kv_len = kv_lens[b];

  // This CTA's keys: its split's chunk, cut where its last row stops seeing keys.
  const int split_len = ceil_div(ceil_div(kv_len, num_splits), KEYS) * KEYS;
  const int k_begin = split * split_len;
  const int last_row = min_of(row0 + ROWS, rows_per_request) - 1;
  const int k_end = min_of(min_of(kv_len, k_begin + split_len),
                           visible_keys<CAUSAL, MASK_SHIFT>(last_row, kv_len, heads, block_len));
  const int num_tiles = k_end > k_begin ? ceil_div(k_end - k_begin, KEYS) : 0;

  const KvTile<KEYS, THREADS, KV_DTYPE> kv_tile{kv_cache, block_table + static_cast<i64>(b) * max_pages, page_size};
  u32x4 staged[KvTile<KEYS, THREADS, KV_DTYPE>::kVecs];

  // Prologue: running statistics, the q tile (zeros for padding rows), the first KV tile.
  for (int r = tid; r < ROWS; r += THREADS) {
    sMax[r] = neg_inf();
    sSum[r] = 0.f;
  }
  const u16* const q_request = q + static_cast<i64>(b) * rows_per_request * kHeadDim;
#pragma unroll
  for (int v = 0; v < G.q_vecs_per_thread(); ++v) {
    const int idx = tid + v * THREADS;
    if (idx >= ROWS * G.q_vecs_per_row()) break;
    const int r = idx / G.q_vecs_per_row();
    const int vec = idx % G.q_vecs_per_row();
    const u32x4 x = row0 + r < rows_per_request
                        ? load16(q_request + static_cast<i64>(row0 + r) * kHeadDim + vec * kVec)
                        : zero_u32x4();
    store16(sQ + r * kSmemStride + vec * kVec, x);
  }
  if (num_tiles > 0) {
    kv_tile.fetch(staged, k_begin, k_end);
    kv_tile.commit(staged, sK);
  }
  __syncthreads();

  // Score micro-tile of this thread, and the key limit of each of its rows (0 for padding rows).
  constexpr int MR = G.score_rows_per_thread();
  constexpr int MK = G.score_keys_per_thread();
  constexpr int TR = G.score_row_threads();
  constexpr int TK = G.score_key_threads();
  const int tk = tid % TK;
  const int tr = tid / TK;
  int row_limit[MR];
#pragma unroll
  for (int i = 0; i < MR; ++i) {
    const int row = row0 + tr + i * TR;
    row_limit[i] = row < rows_per_request
                       ? min_of(visible_keys<CAUSAL, MASK_SHIFT>(row, kv_len, heads, block_len), k_end)
                       : 0;
  }
  // Scores go to the exp2 domain in one multiply; kv_scale is applied here and to the output
  // rather than to every decoded element.
  const float score_scale = softmax_scale * kv_scale * kLog2e;

  // Output micro-tile of this thread: rows vr + i * VT, dims vc .. vc + 7.
  constexpr int VR = G.value_rows_per_thread();
  constexpr int VT = G.value_row_threads();
  const int vc = (tid % kValueVecs) * kVec;
  const int vr = tid / kValueVecs;
  float acc[VR][kVec];
#pragma unroll
  for (int i = 0; i < VR; ++i)
#pragma unroll
    for (int e = 0; e < kVec; ++e) acc[i][e] = 0.f;

  for (int t = 0; t < num_tiles; ++t) {
    const int tile_start = k_begin + t * KEYS;
    const u16* const tile = sK + (STAGES == 2 ? (t & 1) : 0) * KEYS * kSmemStride;
    const bool more = t + 1 < num_tiles;
    if (STAGES == 2 && more) kv_tile.fetch(staged, tile_start + KEYS, k_end);  // lands during compute

    // S = scale * Q K^T for this thread's micro-tile; masked keys get -inf.
    {
      float s[MR][MK];
#pragma unroll
      for (int i = 0; i < MR; ++i)
#pragma unroll
        for (int j = 0; j < MK; ++j) s[i][j] = 0.f;
#pragma unroll 2
      for (int d = 0; d < kHeadDim; d += kVec) {
        float qf[MR][kVec], kf[MK][kVec];
#pragma unroll
        for (int i = 0; i < MR; ++i) bf16x8_to_float(load16(sQ + (tr + i * TR) * kSmemStride + d), qf[i]);
#pragma unroll
        for (int j = 0; j < MK; ++j) bf16x8_to_float(load16(tile + (tk + j * TK) * kSmemStride + d), kf[j]);
#pragma unroll
        for (int i = 0; i < MR; ++i)
#pragma unroll
          for (int j = 0; j < MK; ++j)
#pragma unroll
            for (int e = 0; e < kVec; ++e) s[i][j] = fmaf(qf[i][e], kf[j][e], s[i][j]);
      }
#pragma unroll
      for (int i = 0; i < MR; ++i)
#pragma unroll
        for (int j = 0; j < MK; ++j) {
          const int key = tk + j * TK;
          sP[(tr + i * TR) * PS + key] = tile_start + key < row_limit[i] ? s[i][j] * score_scale : neg_inf();
        }
    }
    __syncthreads();

    // Online softmax per row: new running max, P = 2^(S - max), rescale factor of the old sum.
    {
      constexpr int GROUP = G.softmax_group();
      const int g = tid % GROUP;
#pragma unroll
      for (int pass = 0; pass < G.softmax_passes(); ++pass) {
        const int r = tid / GROUP + pass * G.softmax_rows_per_pass();
        const bool active = r < ROWS;  // every lane still takes part in the shuffles
        float* const p = sP + (active ? r : 0) * PS;
        float tile_max = neg_inf();
        if (active)
          for (int k = g; k < KEYS; k += GROUP) tile_max = fmaxf(tile_max, p[k]);
        tile_max = group_max<GROUP>(tile_max);
        const float old_max = active ? sMax[r] : neg_inf();
        const float new_max = fmaxf(old_max, tile_max);
        // A row that has seen no key yet keeps max -inf; subtracting 0 keeps its P at 0.
        const float base = new_max == neg_inf() ? 0.f : new_max;
        float sum = 0.f;
        if (active)
          for (int k = g; k < KEYS; k += GROUP) {
            const float e = fast_exp2(p[k] - base);
            p[k] = e;
            sum += e;
          }
        sum = group_sum<GROUP>(sum);
        if (active && g == 0) {
          const float alpha = fast_exp2(old_max - base);
          sMax[r] = new_max;
          sSum[r] = sSum[r] * alpha + sum;
          sAlpha[r] = alpha;
        }
      }
    }
    __syncthreads();

    // O = alpha O + P V, V = the first 512 dims of the tile's rows.
    {
#pragma unroll
      for (int i = 0; i < VR; ++i) {
        const float alpha = sAlpha[vr + i * VT];
#pragma unroll
        for (int e = 0; e < kVec; ++e) acc[i][e] *= alpha;
      }
#pragma unroll 4
      for (int k = 0; k < KEYS; ++k) {
        float vf[kVec];
        bf16x8_to_float(load16(tile + k * kSmemStride + vc), vf);
#pragma unroll
        for (int i = 0; i < VR; ++i) {
          const float p = sP[(vr + i * VT) * PS + k];
#pragma unroll
          for (int e = 0; e < kVec; ++e) acc[i][e] = fmaf(p, vf[e], acc[i][e]);
        }
      }
    }
    if (STAGES == 2 && more) kv_tile.commit(staged, sK + ((t + 1) & 1) * KEYS * kSmemStride);
    __syncthreads();
    if (STAGES == 1 && more) {
      kv_tile.fetch(staged, tile_start + KEYS, k_end);
      kv_tile.commit(staged, sK);
      __syncthreads();
    }
  }

  // Epilogue: normalise; a row that saw no key (possible within a split) gets o = 0, lse = -inf.
  const int batch = static_cast<int>(gridDim.z);
#pragma unroll
  for (int i = 0; i < VR; ++i) {
    const int r = vr + i * VT;
    const int row = row0 + r;
    if (row >= rows_per_request) continue;
    const float sum = sSum[r];
    const float inv = sum > 0.f ? kv_scale / sum : 0.f;
    const float row_lse = sum > 0.f ? (sMax[r] + log2f(sum)) * kLn2 : neg_inf();
    const i64 out_row = static_cast<i64>(b) * rows_per_request + row;
    if (num_splits == 1) {
      store16(o + out_row * kValueDim + vc, pack_bf16x8(acc[i], inv));
      if (lse != nullptr && vc == 0) lse[out_row] = row_lse;
    } else {
      const i64 part_row = static_cast<i64>(split) * batch * rows_per_request + out_row;
      u32x4 lo, hi;
      lo.x = __float_as_uint(acc[i][0] * inv), lo.y = __float_as_uint(acc[i][1] * inv);
      lo.z = __float_as_uint(acc[i][2] * inv), lo.w = __float_as_uint(acc[i][3] * inv);
      hi.x = __float_as_uint(acc[i][4] * inv), hi.y = __float_as_uint(acc[i][5] * inv);
      hi.z = __float_as_uint(acc[i][6] * inv), hi.w = __float_as_uint(acc[i][7] * inv);
      store16(part_o + part_row * kValueDim + vc, lo);
      store16(part_o + part_row * kValueDim + vc + 4, hi);
      if (vc == 0) part_lse[part_row] = row_lse;
    }
  }
}

// Merges the num_splits partial results of each row (log-sum-exp weights) into o (bf16) and lse.
// One CTA per row of all requests (total_rows = B * L * H): 64 threads of 8 dims cover the row,
// and THREADS / 64 such groups take every GROUPS-th split each, kSplitsAtOnce of them per step
// with all their loads issued together, merged online against the group's running maximum; the
// groups then meet once in shared memory. So with up to GROUPS * kSplitsAtOnce splits a row costs
// one L2 round trip and one barrier, where a first pass for the largest lse costs a round trip and
// a reduction more (experiments/2026-12-04-mla-decode-combine-one-pass).
// Partial row p of split s is at s * total_rows + p (the main kernel's layout). Launched to overlap
// the main kernel's tail (common/launch_order.hpp), it waits for the main kernel before its first
// read (experiments/2026-12-04-mla-decode-pdl-combine).
template <int THREADS>
__global__ void __launch_bounds__(THREADS)
    mla_combine(const float* __restrict__ part_o, const float* __restrict__ part_lse, u16* __restrict__ o,
                float* __restrict__ lse, int total_rows, int num_splits) {
  using namespace mla_tile;
  using namespace mla_detail;
  constexpr int LANES = kValueDim / kVec;  // threads per group, 8 dims each
  constexpr int GROUPS = THREADS / LANES;
  constexpr int kSplitsAtOnce = 4;
  static_assert(THREADS % LANES == 0, "whole groups of 64 threads");
  __shared__ float s_acc[GROUPS][kValueDim];
  __shared__ float s_max[GROUPS], s_weight[GROUPS];
  const int tid = static_cast<int>(threadIdx.x);
  const int group = tid / LANES;
  const int d0 = (tid % LANES) * kVec;
  const i64 row = blockIdx.x;

  // This group's splits: weights 2^(lse - m) against its running maximum m (in the exp2 domain),
  // their sum, and the weighted rows (an empty split has lse -inf, weight 0 and a zero row).
  float m = neg_inf(), weight_sum = 0.f, acc[kVec];
#pragma unroll
  for (int e = 0; e < kVec; ++e) acc[e] = 0.f;
  wait_for_previous_kernel();
  for (int s0 = group; s0 < num_splits; s0 += GROUPS * kSplitsAtOnce) {
    float l[kSplitsAtOnce];
    u32x4 lo[kSplitsAtOnce], hi[kSplitsAtOnce];
#pragma unroll
    for (int u = 0; u < kSplitsAtOnce; ++u) {
      const int s = s0 + u * GROUPS;
      const i64 part_row = s * static_cast<i64>(total_rows) + row;
      l[u] = neg_inf(), lo[u] = zero_u32x4(), hi[u] = zero_u32x4();
      if (s < num_splits) {
        l[u] = part_lse[part_row] * kLog2e;
        lo[u] = load16(part_o + part_row * kValueDim + d0);
        hi[u] = load16(part_o + part_row * kValueDim + d0 + 4);
      }
    }
    float step_max = m;
#pragma unroll
    for (int u = 0; u < kSplitsAtOnce; ++u) step_max = fmaxf(step_max, l[u]);
    if (step_max == neg_inf()) continue;  // (no split so far saw a key)
    const float rescale = fast_exp2(m - step_max);  // 0 while m is -inf
    weight_sum *= rescale;
#pragma unroll
    for (int e = 0; e < kVec; ++e) acc[e] *= rescale;
#pragma unroll
    for (int u = 0; u < kSplitsAtOnce; ++u) {
      const float w = fast_exp2(l[u] - step_max);
      const float x[kVec] = {__uint_as_float(lo[u].x), __uint_as_float(lo[u].y), __uint_as_float(lo[u].z),
                             __uint_as_float(lo[u].w), __uint_as_float(hi[u].x), __uint_as_float(hi[u].y),
                             __uint_as_float(hi[u].z), __uint_as_float(hi[u].w)};
      weight_sum += w;
#pragma unroll
      for (int e = 0; e < kVec; ++e) acc[e] = fmaf(w, x[e], acc[e]);
    }
    m = step_max;
  }
  // The groups' sums, brought to the largest of their maxima by group 0.
  if constexpr (GROUPS > 1) {
#pragma unroll
    for (int e = 0; e < kVec; ++e) s_acc[group][d0 + e] = acc[e];
    if (tid % LANES == 0) s_max[group] = m, s_weight[group] = weight_sum;
    __syncthreads();
    if (group != 0) return;
#pragma unroll
    for (int g = 1; g < GROUPS; ++g) m = fmaxf(m, s_max[g]);
    weight_sum = 0.f;
#pragma unroll
    for (int e = 0; e < kVec; ++e) acc[e] = 0.f;
    if (m != neg_inf()) {
#pragma unroll
      for (int g = 0; g < GROUPS; ++g) {
        const float w = fast_exp2(s_max[g] - m);
        weight_sum += w * s_weight[g];
#pragma unroll
        for (int e = 0; e < kVec; ++e) acc[e] = fmaf(w, s_acc[g][d0 + e], acc[e]);
      }
    }
  }
  const float inv = weight_sum > 0.f ? 1.f / weight_sum : 0.f;
  store16(o + row * kValueDim + d0, pack_bf16x8(acc, inv));
  if (lse != nullptr && tid == 0) lse[row] = weight_sum > 0.f ? (m + log2f(weight_sum)) * kLn2 : neg_inf();
}

}  // namespace ktune

// The matrix-core paths (math = "mma", "wgmma", "wgmma_ss"; "wgmma_t") live beside it, in the same
// rendered source.
#include "mla_decode/mla_decode_mma.hip"
#include "mla_decode/mla_decode_transposed.hip"
