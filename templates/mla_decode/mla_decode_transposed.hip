// Paged MLA decode attention with an fp8 cache on Hopper's warpgroup products, both transposed
// (math = "wgmma_t", sm_90a): same contract, grid, split-KV workspace and template parameters as
// the other mla_decode kernels; geometry: mla_tile::TransposedGeometry. The keys and the value
// dims are the products' 64 rows and the CTA's 16 or 32 query rows their N (S^T = K Q^T,
// O^T = V^T P^T), so that a decode step's few query rows still fill whole products and each fp8
// code is decoded once per product straight into the A registers. Each warpgroup streams every
// warpgroups()-th tile through its own ring with its own online softmax, merged at the end; at
// 384 threads a producer warpgroup fills both rings. Why and how in full:
// docs/kernels/mla_decode.md.
//
// Operand orders. The reduction index of a product may run in any order, as long as A and B agree;
// both products use that freedom so that a thread's share of A is whole 16-byte rows of codes:
//   Q K^T: the k of step 4 j + t, lane 4 g + c holds dims 64 j + 16 c + 4 t + {0, 1} (k 2c, 2c + 1)
//     and + {2, 3} (k 2c + 8, + 9): one 16-byte load per key row and block j feeds 4 steps. The
//     query tile is stored in that order (transposed_q_position).
//   P V: the k of step t (keys 16 t ..), lane 4 g + c holds keys 16 t + 4 c + {0, 1} (k 2c, 2c + 1)
//     and + {2, 3} (k 2c + 8, + 9) (transposed_key): S^T's rows follow the same order, so the
//     thread writes its scores into P^T unpermuted.
//   V^T's 64 rows of product b = 2 p + h: lane 4 g + c of warp w holds dims 16 (8 w + g) + 4 p +
//     2 h + {0 (row g), 1 (row g + 8)}: one 16-byte load per key covers its 16 dims of all 8
//     products.
// The ring's code rows are 576 bytes, chunk u < 32 (value dims) of key k stored at chunk
// u ^ 2 ((k / 4) % 4) (TransposedChunks), so that both patterns, 2 keys x 4 chunks (Q K^T) and
// 4 keys x 2 chunks (P V) per 8 lanes, fall on distinct banks.
// Number formats as the matrix-core kernel's fp8 path: fp16 queries (|q| < 65504), codes decoded
// exactly (Fp8ToF16, its scale undone in the fp32 scales), P in fp16, fp32 accumulation.
#include "common/async_copy.hpp"
#include "common/prelude.hpp"
#include "common/producer.hpp"
#include "common/wgmma.hpp"
#include "mla_decode/geometry.hpp"
#include "mla_decode/kernel_common.hpp"

namespace ktune {
namespace mla_detail {

// Where the 16-byte chunks 4 m + q (m = 0..8) of tile key `key` lie in a ring slot: chunk u < 32
// at u ^ x with x = 2 ((key / 4) % 4), the rope chunks (m = 8) unswizzled. The XOR takes bit 1 of q
// and bit 0 of m, so chunk 4 m + q sits at at(m) = a base for even m, one for odd m and one for
// the rope chunks, plus 64 m bytes: immediates once m is a constant (the loads and copies below
// are unrolled), where computing u ^ x per chunk took more instructions than the decode.
struct TransposedChunks {
  u32 even, odd, rope;
  TransposedChunks() = default;
  __device__ __forceinline__ TransposedChunks(int key, int q) {
    const int x = ((key >> 2) & 3) << 1;
    const u32 row = static_cast<u32>(key * kHeadDim + 16 * (q ^ (x & 2)));
    even = row + 64 * (x >> 2);
    odd = row - 64 * (x >> 2);
    rope = static_cast<u32>(key * kHeadDim + 16 * q);
  }
  __device__ __forceinline__ u32 at(int m) const { return (m == 8 ? rope : m % 2 ? odd : even) + 64 * m; }
};

// N words of a key row's codes, loaded in one instruction (P V's A operands: mla_decode_transposed).
template <int N>
struct CodeWords;
template <>
struct CodeWords<4> {
  u32 w[4];
  __device__ __forceinline__ void load(const u8* p) {
    const u32x4 v = load16(p);
    w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
  }
};
template <>
struct CodeWords<1> {
  u32 w[1];
  __device__ __forceinline__ void load(const u8* p) { w[0] = *reinterpret_cast<const u32*>(p); }
};

// The tile key of P V's k index r (and of S^T's row r): r = 16 t + 8 h + 2 c + e holds key
// 16 t + 4 c + 2 h + e.
__device__ __forceinline__ int transposed_key(int r) { return (r & ~15) | ((r & 6) << 1) | ((r & 8) >> 2) | (r & 1); }

// The position of query dim d in the k order of Q K^T: d = 64 j + 16 c + 4 t + 2 h + e sits at
// 16 (4 j + t) + 8 h + 2 c + e.
__device__ __forceinline__ int transposed_q_position(int d) {
  const int j = d / 64, c = d % 64 / 16, t = d % 16 / 4, h = d % 4 / 2, e = d % 2;
  return 16 * (4 * j + t) + 8 * h + 2 * c + e;
}

}  // namespace mla_detail

// Parameters as mla_decode's; MATH is 4. Dynamic shared memory: TransposedGeometry::shared_bytes().
template <int ROWS, int KEYS, int THREADS, int STAGES, int MATH, int KV_DTYPE, int CAUSAL, int MASK_SHIFT>
__global__ void __launch_bounds__(THREADS, 1)
    mla_decode_transposed(const u16* __restrict__ q, const u8* __restrict__ kv_cache,
                          const i32* __restrict__ block_table, const i32* __restrict__ kv_lens, u16* __restrict__ o,
                          float* __restrict__ lse, float* __restrict__ part_o, float* __restrict__ part_lse,
                          float softmax_scale, float kv_scale, int heads, int block_len, int max_pages, int page_size,
                          int num_splits) {
  using namespace mla_tile;
  using namespace mla_detail;
  static_assert(MATH == 4, "mla_decode_transposed is math = wgmma_t (MATH = 4)");
  constexpr TransposedGeometry G{ROWS, KEYS, THREADS, STAGES, KV_DTYPE};
  static_assert(G.valid(), "ROWS / KEYS / THREADS / STAGES / KV_DTYPE do not fit (see TransposedGeometry::valid)");
  constexpr int WGS = G.warpgroups();
  constexpr int WG_THREADS = kWarpgroupThreads;
  constexpr int BLOCKS = kValueDim / 64;  // O^T products of 64 dims
  // A product's N = ROWS query rows are NB accumulator blocks of 16 (mc::Acc16, block j: rows
  // 16 j ..): S^T is s[NB], O^T block blk is acc[blk * NB ..]; a thread holds RPT of the rows.
  constexpr int NB = ROWS / 16;
  constexpr int RPT = ROWS / 4;
  // Both products' steps (a block of 64 dims of Q K^T, 16 keys of P V) are issued in commit
  // groups, the A registers double-buffered per group, and P V's codes loaded a group ahead: at
  // 32 rows the O^T accumulators take 128 registers, which leaves room for two groups of a
  // quarter of a P V step and of half a Q K^T block (CUDA 13.0's ptxas spills with whole P V
  // steps, tests/compile/mla_decode_compile_test.cpp, and with whole Q K^T blocks: 24 to 32 bytes).
  constexpr int QK_PARTS = NB;
  constexpr int QK_PART = 4 / QK_PARTS;     // Q K^T products per group
  constexpr int PV_PARTS = NB == 1 ? 1 : 4;
  constexpr int PV_WORDS = 4 / PV_PARTS;    // P V: words of a key row's 16 codes per group
  constexpr int PV_PART = 2 * PV_WORDS;     // P V products per group (two per word)
  typedef wg::PanelRows<ROWS> QTile;
  typedef wg::KMajorRows<KEYS * 2> PRows;
  typedef wg::RegisterProducts<ROWS> Wg;
  typedef Fp8ToF16<KV_DTYPE> Decode;
  // With a producer warpgroup (TransposedGeometry::producer) the math warpgroups issue no copies:
  // each waits for its ring's slots on their full mbarriers and releases them on their empty ones,
  // and the merge's barriers are named barrier WGS + 1 over the math threads.
  constexpr bool WS = G.producer();
  constexpr int MATH_THREADS = WGS * WG_THREADS;
  auto math_sync = [] {
    if constexpr (WS) wg::sync<MATH_THREADS>(WGS + 1); else __syncthreads();
  };

  extern __shared__ u32x4 smem[];
  u8* const smem_bytes = reinterpret_cast<u8*>(smem);
  wg::require_swizzle_alignment(smem_bytes);
  const int tid = static_cast<int>(threadIdx.x);
  const int group = wg::warpgroup_index<WG_THREADS>();
  const int gtid = tid % WG_THREADS;
  const int warp = gtid / kWarp;                // within the warpgroup
  const int lane = tid % kWarp;
  const int g = lane / 4, c = lane % 4;
  u64* const full = reinterpret_cast<u64*>(smem_bytes + G.barrier_offset());  // [WGS][STAGES] (WS)
  u64* const empty = full + WGS * STAGES;                                       // [WGS][STAGES] (WS)
  if constexpr (WS) {
    if (tid == 0)
      for (int u = 0; u < WGS * STAGES; ++u) ws::init(full + u, WG_THREADS), ws::init(empty + u, WG_THREADS);
    __syncthreads();  // the barriers, for all (the last barrier of the whole block)
  }
  u8* const sQ = smem_bytes;
  u8* const sRing = smem_bytes + G.ring_offset(group);
  u8* const sP = smem_bytes + G.p_offset(group);
  float* const sMax = reinterpret_cast<float*>(smem_bytes + G.max_offset(group));  // [warp][ROWS]
  float* const sSum = reinterpret_cast<float*>(smem_bytes + G.sum_offset());        // [group][warp][ROWS]
  float* const sMergeMax = reinterpret_cast<float*>(smem_bytes + G.merge_max_offset());  // [group][ROWS]

  const int b = static_cast<int>(blockIdx.z);
  const int split = static_cast<int>(blockIdx.y);
  const int row0 = static_cast<int>(blockIdx.x) * ROWS;
  const int rows_per_request = heads * block_len;
  const int kv_len = kv_lens[b];
  const int split_len = ceil_div(ceil_div(kv_len, num_splits), KEYS) * KEYS;
  const int k_begin = split * split_len;
  const int last_row = min_of(row0 + ROWS, rows_per_request) - 1;
  const int k_end =
      min_of(min_of(kv_len, k_begin + split_len), visible_keys<CAUSAL, MASK_SHIFT>(last_row, kv_len, heads, block_len));
  const int num_tiles = k_end > k_begin ? ceil_div(k_end - k_begin, KEYS) : 0;
  // Group wg's tiles: every WGS-th of the CTA's, from its wg-th.
  auto tiles_of = [&](int wg) { return num_tiles > wg ? ceil_div(num_tiles - wg, WGS) : 0; };
  auto start_of = [&](int wg, int n) { return k_begin + (wg + n * WGS) * KEYS; };
  const int my_tiles = tiles_of(group);

  // Copies of group wg's tile n into slot n % STAGES of its ring: 4 threads a key row (chunks
  // c4 + 4 m), 32 keys a pass; keys at or past k_end become zeros. Page lookups are made a tile
  // ahead (CacheKey). By the group itself, or by the producer for both.
  const i32* const pages = block_table + static_cast<i64>(b) * max_pages;
  constexpr int COPY_PASSES = KEYS / (WG_THREADS / 4);
  struct TileRows {
    CacheKey key[COPY_PASSES];
  };
  auto look_up_for = [&](int wg, int n) {
    TileRows r;
#pragma unroll
    for (int pass = 0; pass < COPY_PASSES; ++pass) {
      const int j = start_of(wg, n) + pass * (WG_THREADS / 4) + gtid / 4;
      r.key[pass] = look_up_key(pages, j, page_size, n < tiles_of(wg) && j < k_end);
    }
    return r;
  };
  auto look_up = [&](int n) { return look_up_for(group, n); };
  TransposedChunks copy_chunks[COPY_PASSES];  // this thread's: chunks gtid % 4 + 4 m of its keys
#pragma unroll
  for (int pass = 0; pass < COPY_PASSES; ++pass)
    copy_chunks[pass] = TransposedChunks(pass * (WG_THREADS / 4) + gtid / 4, gtid % 4);
  auto issue_into = [&](u8* ring, int n, const TileRows& rows) {
    u8* const slot = ring + (n % STAGES) * G.stage_bytes();
#pragma unroll
    for (int pass = 0; pass < COPY_PASSES; ++pass) {
      const TransposedChunks& at = copy_chunks[pass];
      const bool valid = rows.key[pass].valid();
      const u8* const src = kv_cache + rows.key[pass].row(page_size) * kHeadDim + 16 * (gtid % 4);
      copy_row<0, 4, 128, 128>(slot + at.at(0), src, valid);         // m = 0, 2, 4, 6
      copy_row<0, 4, 128, 128>(slot + at.at(1), src + 64, valid);    // m = 1, 3, 5, 7
      async_copy::copy16<0>(slot + at.at(8), src + 512, valid);      // m = 8
    }
  };
  auto issue = [&](int n, const TileRows& rows) { issue_into(sRing, n, rows); };

  // The producer: the CTA's tiles in order, each into its group's ring once the group released
  // the slot's previous tile (its look-ups a tile ahead).
  if constexpr (WS) {
    if (group == WGS) {  // warpgroup-uniform
      ws::shrink_registers<kProducerRegisters>();
      TileRows next = look_up_for(0, 0);
      for (int i = 0; i < num_tiles; ++i) {
        const int wg = i % WGS, n = i / WGS;
        const TileRows rows = next;
        next = look_up_for((i + 1) % WGS, (i + 1) / WGS);
        const int u = wg * STAGES + n % STAGES;
        if (n >= STAGES) ws::wait(empty + u, (n / STAGES - 1) & 1);
        issue_into(smem_bytes + G.ring_offset(wg), n, rows);
        ws::arrive_on_copies(full + u);
      }
      return;  // the math groups wait for every tile's copies: none lands after the block leaves
    }
    ws::grow_registers<kMathRegisters>();
  }

  // Prologue: the ring's first STAGES - 1 tiles, one group each; meanwhile the query tile, in fp16
  // and in Q K^T's k order (zeros for padding rows).
  if constexpr (!WS)
#pragma unroll
    for (int n = 0; n < STAGES - 1; ++n) {
      if (n < my_tiles) issue(n, look_up(n));
      async_copy::commit();
    }
  const u16* const q_request = q + static_cast<i64>(b) * rows_per_request * kHeadDim;
  for (int i = tid; i < ROWS * (kHeadDim / 8); i += MATH_THREADS) {
    const int r = i / (kHeadDim / 8), d0 = i % (kHeadDim / 8) * 8;
    const u32x4 v = row0 + r < rows_per_request ? load16(q_request + static_cast<i64>(row0 + r) * kHeadDim + d0)
                                                : zero_u32x4();
    const u32 pairs[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int m = 0; m < 4; ++m)
      *reinterpret_cast<u32*>(sQ + QTile::offset(r, 2 * transposed_q_position(d0 + 2 * m))) =
          bf16x2_to_f16x2(pairs[m]);
  }
  wg::proxy_fence();
  math_sync();

  // Scores to the exp2 domain in one multiply (kv_scale and the decode's scale included; the
  // output gets them back). This thread's RPT query rows: q_row(i) = 2 c + (i & 1) + 8 (i >> 1),
  // element e of accumulator block j's is i = 4 j + (e & 1) + 2 (e >> 2) (row_of); its rows (keys)
  // 16 warp + g + 8 ((e >> 1) & 1).
  constexpr float kv_unit = Decode::kScale;
  const float score_scale = softmax_scale * kv_scale * kv_unit * kLog2e;
  auto q_row = [&](int i) { return 2 * c + (i & 1) + 8 * (i >> 1); };
  auto row_of = [](int j, int e) { return 4 * j + (e & 1) + 2 * (e >> 2); };
  int limit[RPT];
#pragma unroll
  for (int i = 0; i < RPT; ++i) {
    const int row = row0 + q_row(i);
    limit[i] = row < rows_per_request ? min_of(visible_keys<CAUSAL, MASK_SHIFT>(row, kv_len, heads, block_len), k_end)
                                      : 0;
  }
  const int s_key[2] = {transposed_key(16 * warp + g), transposed_key(16 * warp + g + 8)};
  // Q K^T reads chunks 4 j + c of its two key rows; P V reads chunk 8 warp + g (its 16 dims) of
  // keys 16 t + 4 c + k, at pv_row[k] + 16 t rows (the chunk's XOR, 2 c, does not depend on t or k).
  const TransposedChunks qk_chunks[2] = {TransposedChunks(s_key[0], c), TransposedChunks(s_key[1], c)};
  u32 pv_row[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) pv_row[k] = static_cast<u32>((4 * c + k) * kHeadDim + 16 * ((8 * warp + g) ^ (2 * c)));
  float row_max[RPT], row_sum[RPT];
#pragma unroll
  for (int i = 0; i < RPT; ++i) row_max[i] = neg_inf(), row_sum[i] = 0.f;
  mc::Acc16 acc[BLOCKS * NB];
#pragma unroll
  for (int blk = 0; blk < BLOCKS * NB; ++blk) mc::zero(acc[blk]);

  TileRows ahead;
  if constexpr (!WS) ahead = look_up(STAGES - 1);
  for (int n = 0; n < my_tiles; ++n) {
    // Tile n landed for this thread's copies (with a producer: its slot is full); the barrier
    // makes it everyone's, and frees the slot of tile n - 1 for tile n + STAGES - 1.
    if constexpr (WS)
      ws::wait(full + group * STAGES + n % STAGES, (n / STAGES) & 1);
    else
      async_copy::wait<STAGES - 2>();
    wg::sync<WG_THREADS>(1 + group);
    if constexpr (!WS) {
      if (n + STAGES - 1 < my_tiles) issue(n + STAGES - 1, ahead);
      async_copy::commit();
      ahead = look_up(n + STAGES);
    }
    const u8* const slot = sRing + (n % STAGES) * G.stage_bytes();

    // S^T = K Q^T: 9 blocks of 64 dims, each one 16-byte load per key row and 4 products in
    // QK_PARTS groups; a group's A registers are reused two groups later, once its products are
    // done. Each block's codes are loaded before the previous block's products are issued (the
    // products' asm statements order the loads), so that the loads' latency overlaps the decode.
    mc::Acc16 s[NB];
#pragma unroll
    for (int j = 0; j < NB; ++j) mc::zero(s[j]);
    {
      constexpr int QK_BLOCKS = kHeadDim / 64;
      u32 a[2][QK_PART][4];
      u32x4 next_lo = load16(slot + qk_chunks[0].at(0)), next_hi = load16(slot + qk_chunks[1].at(0));
      u32 lo_w[4], hi_w[4];
#pragma unroll
      for (int j = 0; j < QK_BLOCKS; ++j)
#pragma unroll
        for (int h = 0; h < QK_PARTS; ++h) {
          const int group_index = j * QK_PARTS + h;
          u32(&set)[QK_PART][4] = a[group_index % 2];
          if (group_index >= 2) {
            Wg::template wait<1>();
            Wg::settle(set);
          }
          if (h == 0) {
            const u32x4 lo = next_lo, hi = next_hi;
            if (j + 1 < QK_BLOCKS) {
              next_lo = load16(slot + qk_chunks[0].at(j + 1));
              next_hi = load16(slot + qk_chunks[1].at(j + 1));
            }
            lo_w[0] = lo.x, lo_w[1] = lo.y, lo_w[2] = lo.z, lo_w[3] = lo.w;
            hi_w[0] = hi.x, hi_w[1] = hi.y, hi_w[2] = hi.z, hi_w[3] = hi.w;
          }
#pragma unroll
          for (int u = 0; u < QK_PART; ++u) {
            const int t = h * QK_PART + u;
            const u32x2 l = Decode::quad(lo_w[t]), hh = Decode::quad(hi_w[t]);
            set[u][0] = l.x, set[u][1] = hh.x, set[u][2] = l.y, set[u][3] = hh.y;
          }
          Wg::fence();
#pragma unroll
          for (int u = 0; u < QK_PART; ++u)
            Wg::accumulate(s, set[u], sQ, j * QTile::kPanelBytes + (h * QK_PART + u) * 32);
          Wg::commit();
        }
      Wg::template wait<0>();
      Wg::settle(s);
      Wg::settle(a[0]);
      Wg::settle(a[1]);
    }

    // Mask and scale; this thread's maxima over its keys of the tile.
    const int start = start_of(group, n);
    float tile_max[RPT];
#pragma unroll
    for (int i = 0; i < RPT; ++i) tile_max[i] = neg_inf();
#pragma unroll
    for (int j = 0; j < NB; ++j)
#pragma unroll
      for (int e = 0; e < mc::kLaneAcc; ++e) {
        const int i = row_of(j, e);
        const float x = start + s_key[(e >> 1) & 1] < limit[i] ? s[j].v[e] * score_scale : neg_inf();
        s[j].v[e] = x;
        tile_max[i] = fmaxf(tile_max[i], x);
      }
    // P = 2^(S - base) into P^T (fp16), and this thread's share of the row sums.
    auto write_p = [&](const float(&base)[RPT], float(&sum)[RPT]) {
#pragma unroll
      for (int j = 0; j < NB; ++j)
#pragma unroll
        for (int e = 0; e < mc::kLaneAcc; ++e) {
          const int i = row_of(j, e);
          const float p = fast_exp2(s[j].v[e] - base[i]);
          sum[i] += p;
          *reinterpret_cast<u16*>(sP + PRows::offset(q_row(i), 2 * (16 * warp + g + 8 * ((e >> 1) & 1)))) =
              static_cast<u16>(float_to_f16(p));
        }
    };
    // P against the rows' running maxima as they are: the softmax allows any base common to a
    // row, and the one that needs no exchange between warps is right while no score passes it by
    // more than kSlack (P <= 2^kSlack, exact in fp16 as any P is; the sums and O^T in fp32). One
    // barrier publishes P^T and tells whether a thread saw a score past that; then, and only then
    // (the first tile of a row, a rare later one), the group takes the tile's maxima over its 4
    // warps, rescales O^T and the sums, and writes P again.
    constexpr float kSlack = 8.f;
    float base[RPT], tile_sum[RPT];
    bool past = false;
#pragma unroll
    for (int i = 0; i < RPT; ++i) {
      tile_sum[i] = 0.f;
      base[i] = row_max[i] == neg_inf() ? 0.f : row_max[i];
      past |= tile_max[i] > row_max[i] + kSlack;
    }
    write_p(base, tile_sum);
    wg::proxy_fence();  // P^T, for the tensor cores' reads
    if (wg::sync_any<WG_THREADS>(1 + group, past)) {
#pragma unroll
      for (int i = 0; i < RPT; ++i) {
        float m = tile_max[i];
        m = fmaxf(m, shfl_xor(m, 4));
        m = fmaxf(m, shfl_xor(m, 8));
        m = fmaxf(m, shfl_xor(m, 16));
        if (g == 0) sMax[warp * ROWS + q_row(i)] = m;
      }
      wg::sync<WG_THREADS>(1 + group);
      float alpha[RPT];
#pragma unroll
      for (int i = 0; i < RPT; ++i) {
        float m = row_max[i];
#pragma unroll
        for (int w = 0; w < 4; ++w) m = fmaxf(m, sMax[w * ROWS + q_row(i)]);
        // A row that has seen no key yet keeps max -inf; subtracting 0 keeps its P at 0.
        base[i] = m == neg_inf() ? 0.f : m;
        alpha[i] = fast_exp2(row_max[i] - base[i]);
        row_max[i] = m;
        row_sum[i] *= alpha[i];
      }
      write_p(base, row_sum);
#pragma unroll
      for (int blk = 0; blk < BLOCKS * NB; ++blk)
#pragma unroll
        for (int e = 0; e < mc::kLaneAcc; ++e) acc[blk].v[e] *= alpha[row_of(blk % NB, e)];
      wg::proxy_fence();
      wg::sync<WG_THREADS>(1 + group);
    } else {
#pragma unroll
      for (int i = 0; i < RPT; ++i) row_sum[i] += tile_sum[i];
    }

    // O^T += V^T P^T: per 16 keys, 4 key rows of 16 codes (this thread's 16 dims), byte-permuted
    // into key pairs and decoded: the A registers of all 8 products, in PV_PARTS groups. A group's
    // registers are reused two groups later, once its products are done; its codes are loaded a
    // group ahead.
    {
      u32 a[2][PV_PART][4];
      // Group (t, h) reads words PV_WORDS h .. of its 4 key rows (16 t + 4 c + k), one load a row.
      CodeWords<PV_WORDS> next_v[4];
#pragma unroll
      for (int k = 0; k < 4; ++k) next_v[k].load(slot + pv_row[k]);
#pragma unroll
      for (int t = 0; t < KEYS / 16; ++t)
#pragma unroll
        for (int h = 0; h < PV_PARTS; ++h) {
          const int group_index = t * PV_PARTS + h;
          u32(&set)[PV_PART][4] = a[group_index % 2];
          if (group_index >= 2) {
            Wg::template wait<1>();
            Wg::settle(set);
          }
          const int next_t = h + 1 < PV_PARTS ? t : t + 1, next_h = h + 1 < PV_PARTS ? h + 1 : 0;
          CodeWords<PV_WORDS> w[4];
#pragma unroll
          for (int k = 0; k < 4; ++k) {
            w[k] = next_v[k];
            if (next_t < KEYS / 16) next_v[k].load(slot + pv_row[k] + 16 * next_t * kHeadDim + 4 * PV_WORDS * next_h);
          }
#pragma unroll
          for (int u = 0; u < PV_WORDS; ++u) {
            // Word p = PV_WORDS h + u of the key rows: low, dims 4 p, 4 p + 1 of keys (0, 1) or
            // (2, 3), for product 2 p; high, dims 4 p + 2, + 3, for product 2 p + 1.
            const u32x2 lo01 = Decode::quad(__byte_perm(w[0].w[u], w[1].w[u], 0x5140));
            const u32x2 hi01 = Decode::quad(__byte_perm(w[0].w[u], w[1].w[u], 0x7362));
            const u32x2 lo23 = Decode::quad(__byte_perm(w[2].w[u], w[3].w[u], 0x5140));
            const u32x2 hi23 = Decode::quad(__byte_perm(w[2].w[u], w[3].w[u], 0x7362));
            set[2 * u][0] = lo01.x, set[2 * u][1] = lo01.y, set[2 * u][2] = lo23.x, set[2 * u][3] = lo23.y;
            set[2 * u + 1][0] = hi01.x, set[2 * u + 1][1] = hi01.y, set[2 * u + 1][2] = hi23.x,
                       set[2 * u + 1][3] = hi23.y;
          }
          Wg::fence();  // the A registers, and acc (rescaled above) before the first step
#pragma unroll
          for (int blk = 0; blk < PV_PART; ++blk)
            Wg::accumulate(acc + (h * PV_PART + blk) * NB, set[blk], sP, t * 32);
          Wg::commit();
        }
      Wg::template wait<0>();
      Wg::settle(acc);
      Wg::settle(a[0]);
      Wg::settle(a[1]);
    }
    if constexpr (WS) ws::arrive(empty + group * STAGES + n % STAGES);  // read to the end: free
  }
  async_copy::wait<0>();  // no copy may land after the block has left

  // Row sums over the group's lanes and warps; the other groups hand their maxima and O^T (staged
  // in their rings, element-major so that a store is one row of 128 threads) to the first.
#pragma unroll
  for (int i = 0; i < RPT; ++i) {
    float l = row_sum[i];
    l += shfl_xor(l, 4);
    l += shfl_xor(l, 8);
    l += shfl_xor(l, 16);
    if (g == 0) sSum[(group * 4 + warp) * ROWS + q_row(i)] = l;
    if (g == 0 && warp == 0) sMergeMax[group * ROWS + q_row(i)] = row_max[i];
  }
  math_sync();  // every group's last tile is done: the rings are free
  if (group > 0) {
    float* const stage = reinterpret_cast<float*>(sRing);
#pragma unroll
    for (int blk = 0; blk < BLOCKS * NB; ++blk)
#pragma unroll
      for (int e = 0; e < mc::kLaneAcc; ++e) stage[(blk * mc::kLaneAcc + e) * WG_THREADS + gtid] = acc[blk].v[e];
  }
  math_sync();
  if (group > 0) return;

  // Merge and normalise; a row that saw no key (possible within a split) gets o = 0, lse = -inf.
  float scale[WGS][RPT], row_lse[RPT];
#pragma unroll
  for (int i = 0; i < RPT; ++i) {
    float m = neg_inf();
#pragma unroll
    for (int k = 0; k < WGS; ++k) m = fmaxf(m, sMergeMax[k * ROWS + q_row(i)]);
    const float m_base = m == neg_inf() ? 0.f : m;
    float sum = 0.f;
#pragma unroll
    for (int k = 0; k < WGS; ++k) {
      float l = 0.f;
#pragma unroll
      for (int w = 0; w < 4; ++w) l += sSum[(k * 4 + w) * ROWS + q_row(i)];
      scale[k][i] = fast_exp2(sMergeMax[k * ROWS + q_row(i)] - m_base);
      sum += l * scale[k][i];
    }
    const float inv = sum > 0.f ? kv_scale * kv_unit / sum : 0.f;
#pragma unroll
    for (int k = 0; k < WGS; ++k) scale[k][i] *= inv;
    row_lse[i] = sum > 0.f ? (m + log2f(sum)) * kLn2 : neg_inf();
  }
  const int batch = static_cast<int>(gridDim.z);
  const int dim0 = 16 * (8 * warp + g);  // this thread's 16 dims
#pragma unroll
  for (int i = 0; i < RPT; ++i) {
    const int row = row0 + q_row(i);
    if (row >= rows_per_request) continue;
    // Dim dim0 + 4 p + 2 h + r of row i = 4 j + l: product 2 p + h, its accumulator block j,
    // element (l & 1) + 4 (l >> 1) + 2 r.
    float x[16];
#pragma unroll
    for (int p = 0; p < 4; ++p)
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          const int blk = (2 * p + h) * NB + i / 4, e = (i & 1) + 4 * (i % 4 >> 1) + 2 * r;
          float v = acc[blk].v[e] * scale[0][i];
#pragma unroll
          for (int k = 1; k < WGS; ++k)
            v += reinterpret_cast<const float*>(smem_bytes + G.ring_offset(k))[(blk * mc::kLaneAcc + e) * WG_THREADS +
                                                                                gtid] *
                 scale[k][i];
          x[4 * p + 2 * h + r] = v;
        }
    const i64 out_row = static_cast<i64>(b) * rows_per_request + row;
    if (num_splits == 1) {
#pragma unroll
      for (int half = 0; half < 2; ++half)
        store16(o + out_row * kValueDim + dim0 + 8 * half, pack_bf16x8(x + 8 * half));
      if (lse != nullptr && warp == 0 && g == 0) lse[out_row] = row_lse[i];
    } else {
      float* const dst = part_o + (static_cast<i64>(split) * batch * rows_per_request + out_row) * kValueDim + dim0;
#pragma unroll
      for (int v = 0; v < 4; ++v)
        store16(dst + 4 * v, u32x4{__float_as_uint(x[4 * v]), __float_as_uint(x[4 * v + 1]),
                                   __float_as_uint(x[4 * v + 2]), __float_as_uint(x[4 * v + 3])});
      if (warp == 0 && g == 0) part_lse[static_cast<i64>(split) * batch * rows_per_request + out_row] = row_lse[i];
    }
  }
}

}  // namespace ktune
