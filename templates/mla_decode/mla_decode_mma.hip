// Paged MLA decode attention on the matrix cores (math = "mma", "wgmma", "wgmma_ss"): same
// contract, grid, split-KV workspace and template parameters as the SIMT kernel (mla_decode.hip),
// FlashAttention-2 style inside a CTA. KV tiles stream through a ring of shared-memory slots with
// asynchronous copies; S = Q K^T on mma.sync / MFMA (common/matrix_core.hpp) or wgmma
// (common/wgmma.hpp), an online softmax in registers, P through shared memory, O = P V with the
// warps (warpgroups) splitting the value dims. MmaGeometry::variant (from MATH, THREADS and
// KV_DTYPE) names what an instance runs: kMma, kWgmma, kWgmmaProducer (a producer warpgroup does
// the copies), kWgmmaSoftmax (a softmax warpgroup runs a tile ahead of two P V warpgroups) or
// kWgmmaSs. The data flow of each variant, the number formats at the matrix cores (P as two bf16
// terms or one fp16 term, V converted or decoded to fp16, fp16 queries against fp8 caches) and
// why: docs/kernels/mla_decode.md.
#include "common/async_copy.hpp"
#include "common/matrix_core.hpp"
#include "common/prelude.hpp"
#include "common/producer.hpp"
#include "common/wgmma.hpp"
#include "mla_decode/geometry.hpp"
#include "mla_decode/kernel_common.hpp"
#include "mla_decode/mma/mfma_native.hpp"

namespace ktune {
namespace mla_detail {

// Copies chunks C .. N - 1 of a row whose chunks are SRC_STRIDE bytes apart in the cache and
// DST_STRIDE apart in shared memory, each with its offsets as immediates (a recursion, because an
// unrolled loop's index is not a template argument).
template <int C, int N, int SRC_STRIDE, int DST_STRIDE>
struct RowCopy {
  __device__ __forceinline__ static void run(u8* dst, const u8* src, bool valid) {
    async_copy::copy16<C * DST_STRIDE, C * SRC_STRIDE>(dst, src, valid);
    RowCopy<C + 1, N, SRC_STRIDE, DST_STRIDE>::run(dst, src, valid);
  }
};
template <int N, int SRC_STRIDE, int DST_STRIDE>
struct RowCopy<N, N, SRC_STRIDE, DST_STRIDE> {
  __device__ __forceinline__ static void run(u8*, const u8*, bool) {}
};

template <int C, int N, int SRC_STRIDE, int DST_STRIDE = SRC_STRIDE>
__device__ __forceinline__ void copy_row(u8* dst, const u8* src, bool valid) {
  RowCopy<C, N, SRC_STRIDE, DST_STRIDE>::run(dst, src, valid);
}

}  // namespace mla_detail

// Parameters as mla_decode's; MATH is 1 (mma.sync / MFMA), 2 or 3 (Q K^T and P V on wgmma, sm_90a,
// P V as O^T = V^T P^T or O = P V; see MmaGeometry::qk_wgmma and pv_ss) or 5 (MATH 1 with the
// MFMA forms that take the cache's format, gfx942 / gfx950: mma/mfma_native.hpp; its hooks below
// are marked "mfma_native"). STAGES: slots in the ring (MmaGeometry::ring_keys).
// Dynamic shared memory: mla_tile::MmaGeometry::shared_bytes(). The launch bounds ask for one CTA
// per compute unit, so that ptxas may give a thread up to 255 registers: at 256 threads it would
// otherwise cap them at 128 and spill (rows=16 keys=64 stages=5: 128 registers and 8 bytes of
// spills, against 172 and none). A second CTA still shares the unit where registers and shared
// memory leave room (128 threads and a shallow ring: resident_blocks in tuner/kernels/targets.cpp).
// (At 384 threads the block starts with 168 registers a thread, which setmaxnreg then moves from
// the producer to the math warpgroups: ptxas 13.0 allocates their code within 232, no spills. At
// 512 it starts with 128, and the softmax warpgroup's code runs within
// MmaGeometry::softmax_registers, the P V warpgroups' within value_registers, no spills either.)
template <int ROWS, int KEYS, int THREADS, int STAGES, int MATH, int KV_DTYPE, int CAUSAL, int MASK_SHIFT>
__global__ void __launch_bounds__(THREADS, 1)
    mla_decode_mma(const u16* __restrict__ q, const u8* __restrict__ kv_cache, const i32* __restrict__ block_table,
                   const i32* __restrict__ kv_lens, u16* __restrict__ o, float* __restrict__ lse,
                   float* __restrict__ part_o, float* __restrict__ part_lse, float softmax_scale, float kv_scale,
                   int heads, int block_len, int max_pages, int page_size, int num_splits) {
  using namespace mla_tile;
  using namespace mla_detail;
  static_assert((MATH >= 1 && MATH <= 3) || MATH == 5, "mla_decode_mma is the matrix-core path (MATH = 1, 2, 3 or 5)");
  constexpr bool WGMMA = MATH == 2 || MATH == 3;
  // mfma_native: MATH 5, the MFMA forms of the cache's own format (Path: gfx942 / gfx950 only).
  constexpr bool NATIVE = MATH == 5;
  typedef mfma_native::Path<KV_DTYPE> Native;
  constexpr MmaGeometry G{ROWS, KEYS, THREADS, STAGES, KV_DTYPE, kWarp, WGMMA, MATH == 3};
  // The variant that MATH, THREADS and KV_DTYPE select (MmaGeometry::variant): the flags below
  // (PV_SS, WS, SOFTMAX_WG, the producer's kind) pick its branches.
  constexpr MmaVariant VARIANT = G.variant();
  constexpr bool PV_SS = VARIANT == MmaVariant::kWgmmaSs;  // wgmma's O = P V, both operands in shared memory
  constexpr bool PV_RS = WGMMA && !PV_SS;                  // wgmma's O^T = V^T P^T, V^T from registers
  static_assert(G.valid(), "ROWS / KEYS / THREADS / STAGES do not tile (see MmaGeometry::valid)");
  constexpr int MT = G.m_tiles();
  constexpr int PMT = G.pv_m_tiles();
  constexpr int QMT = G.qk_m_tiles();
  constexpr int QKB = G.qk_key_blocks();
  constexpr int QKW = G.qk_key_warps();
  constexpr int PVB = G.pv_blocks();
  constexpr int QKC = G.qk_chains();
  constexpr int LR = mc::kLaneRows;
  constexpr int ROW_CHUNKS = kHeadDim * 2 / 16;  // 16-byte chunks of a bf16 row
  // q tile and bf16 KV tiles: wgmma reads its operands in panels of 64 dims.
  typedef conditional_t<WGMMA, wg::PanelRows<ROWS>, mc::SwizzledRows<kHeadDim * 2>> QTile;
  typedef conditional_t<WGMMA, wg::PanelRows<KEYS>, mc::SwizzledRows<kHeadDim * 2>> Tile;
  typedef mc::CodeRows<G.code_row_bytes()> Codes;  // fp8 KV tiles
  typedef conditional_t<WGMMA, wg::KMajorRows<G.p_stride()>, mc::PaddedRows<G.p_stride()>> PRows;  // P
  typedef Fp8ToF16<KV_DTYPE> Decode;
  constexpr bool FP8 = KV_DTYPE != kKvBf16;
  constexpr bool P_TERMS = G.p_terms() == 2;  // P as bf16 hi + lo, V in bf16
  // An fp8 cache on wgmma (MmaGeometry::decoded): the producer decodes each slot's codes, which its
  // copies bring into slots of their own (sCodes), to an fp16 tile in the ring, laid out as a bf16
  // tile is; Q K^T and P V then read fp16 (decode_slot, below).
  constexpr bool DECODED = G.decoded();
  // With a producer warpgroup (MmaGeometry::producer, wgmma only) the math warpgroups neither
  // issue copies nor join the producer's barriers: they meet on named barrier 1, and each ring
  // slot has two mbarriers, full (the producer's copies landed) and empty (all math threads are
  // done reading it). Without one, the whole block computes and copies, and meets on
  // __syncthreads. With a softmax warpgroup besides (below) the math warpgroups meet on named
  // barrier 2, the P V warpgroups alone on 3, the softmax warpgroup alone on 4, and each slot has
  // a third mbarrier, ready (the softmax warpgroup wrote its P and record); only the P V
  // warpgroups arrive on empty.
  constexpr bool WS = G.producer();
  constexpr bool SOFTMAX_WG = VARIANT == MmaVariant::kWgmmaSoftmax;  // (WS too)
  constexpr int MATH_THREADS = G.math_threads();
  constexpr int PV_THREADS = G.pv_warps() * kWarp;  // with WS, the math threads that release a slot
  auto math_sync = [] {
    if constexpr (WS) wg::sync<MATH_THREADS>(1); else __syncthreads();
  };
  auto math_sync_or = [](bool p) -> bool {
    if constexpr (WS) return wg::sync_any<MATH_THREADS>(1, p); else return __syncthreads_or(p) != 0;
  };

  extern __shared__ u32x4 smem[];
  u8* const smem_bytes = reinterpret_cast<u8*>(smem);
  if constexpr (WGMMA) wg::require_swizzle_alignment(smem_bytes);
  u8* const sQ = smem_bytes;
  u8* const sRing = smem_bytes + G.ring_offset();
  u8* const sCodes = smem_bytes + G.code_offset();  // [CODE_SLOTS][SLOT_KEYS][640] (DECODED)
  u8* const sP = smem_bytes + G.p_offset();
  float* const sReduce = reinterpret_cast<float*>(smem_bytes + G.reduce_offset());  // [key warp][ROWS]
  u64* const full = reinterpret_cast<u64*>(smem_bytes + G.barrier_offset());        // [STAGES] (WS)
  u64* const empty = full + STAGES;                                                   // [STAGES] (WS)
  u64* const ready = empty + STAGES;                                                  // [STAGES] (SOFTMAX_WG)
  u8* const sRecord = smem_bytes + G.record_offset();  // [STAGES][G.record_bytes()] (SOFTMAX_WG)

  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid % kWarp;
  const int warp = tid / kWarp;
  const int ctid = WS ? tid - MATH_THREADS : tid;  // this thread's place among the copying threads
  if constexpr (WS) {
    if (tid == 0)
      for (int u = 0; u < STAGES; ++u) {
        ws::init(full + u, G.copy_threads());
        ws::init(empty + u, PV_THREADS);
        if constexpr (SOFTMAX_WG) ws::init(ready + u, kWarpgroupThreads);
      }
    __syncthreads();  // the barriers, for all (the last barrier of the whole block)
  }
  const int b = static_cast<int>(blockIdx.z);
  const int split = static_cast<int>(blockIdx.y);
  const int row0 = static_cast<int>(blockIdx.x) * ROWS;
  const int rows_per_request = heads * block_len;
  const int kv_len = kv_lens[b];
  const int live_m_tiles = ceil_div(min_of(ROWS, rows_per_request - row0), 16);  // m-tiles with a real row

  // This CTA's keys: its split's chunk, cut where its last row stops seeing keys. Its tiles are
  // copied slot by slot: SLOTS ring slots of SLOT_KEYS keys per tile.
  const int split_len = ceil_div(ceil_div(kv_len, num_splits), KEYS) * KEYS;
  const int k_begin = split * split_len;
  const int last_row = min_of(row0 + ROWS, rows_per_request) - 1;
  const int k_end =
      min_of(min_of(kv_len, k_begin + split_len), visible_keys<CAUSAL, MASK_SHIFT>(last_row, kv_len, heads, block_len));
  const int num_tiles = k_end > k_begin ? ceil_div(k_end - k_begin, KEYS) : 0;
  constexpr int SLOT_KEYS = G.ring_keys();
  constexpr int SLOTS = G.tile_slots();
  const int num_slots = num_tiles * SLOTS;

  // Queues the copies of the keys of slot u (the CTA's keys u * SLOT_KEYS ..) into ring slot
  // u % STAGES. A group of threads per key row, so that a thread looks the page up once per key;
  // keys at or past k_end become zeros (their pages may not exist, and P V must not meet stale
  // non-finite values). The page lookups of a slot are made one tile ahead of its copies
  // (SlotRows, CacheKey): a warp issues in order, and a copy waiting on a block-table load would hold the
  // warp's matrix work behind a global-memory round trip.
  const i32* const pages = block_table + static_cast<i64>(b) * max_pages;
  constexpr int STAGE_BYTES = G.stage_bytes();
  constexpr int RAW_ROW_BYTES = G.raw_row_bytes();
  constexpr int TPK = G.copy_threads_per_key();
  constexpr int COPY_PASSES = G.copy_passes();
  constexpr int KEYS_PER_PASS = G.copy_keys_per_pass();
  constexpr int CHUNKS_PER_THREAD = G.chunks_per_row() / TPK;
  struct SlotRows {
    CacheKey key[COPY_PASSES];  // this thread's key in each pass
  };
  auto look_up = [&](int u) {
    SlotRows r;
    const int slot_start = k_begin + u * SLOT_KEYS;
#pragma unroll
    for (int pass = 0; pass < COPY_PASSES; ++pass) {
      const int key = pass * KEYS_PER_PASS + ctid / TPK;
      const int j = slot_start + key;
      const bool valid = u < num_slots && key < SLOT_KEYS && j < k_end;
      r.key[pass] = look_up_key(pages, j, page_size, valid);
    }
    return r;
  };
  constexpr int CODE_SLOTS = DECODED ? G.code_slots() : 1;
  auto issue_slot = [&](int u, const SlotRows& rows) {
    u8* const slot = DECODED ? sCodes + (u % CODE_SLOTS) * G.code_stage_bytes() : sRing + (u % STAGES) * STAGE_BYTES;
#pragma unroll
    for (int pass = 0; pass < COPY_PASSES; ++pass) {
      const int key = pass * KEYS_PER_PASS + ctid / TPK;
      if (key < SLOT_KEYS) {
        const bool valid = rows.key[pass].valid();
        const u8* const row = kv_cache + rows.key[pass].row(page_size) * RAW_ROW_BYTES;
        if constexpr (!FP8) {
          // Chunk tid % TPK + c * TPK sits c * TPK * 16 bytes after chunk tid % TPK in the cache
          // row, and in the slot either as far (a swizzled row: TPK * 16 = 128 bytes is a whole
          // swizzle group, which the XOR of bits 4..6 leaves alone) or c panels further on.
          constexpr int kSlotStride = WGMMA ? KEYS * 128 : TPK * 16;
          copy_row<0, CHUNKS_PER_THREAD, TPK * 16, kSlotStride>(slot + Tile::offset(key, (ctid % TPK) * 16),
                                                                row + (ctid % TPK) * 16, valid);
        } else {
          // 36 chunks, 4 threads: thread c takes chunks c + 8 m (5 of them) and c + 4 + 8 m (4):
          // chunks 8 apart share their XOR (bits 0..2), so each run is one stride in both rows.
          static_assert(TPK == 4 && CHUNKS_PER_THREAD == 9, "an fp8 row is 4 runs of 9 chunks");
          const int c = ctid % TPK;
          const int x = Codes::chunk_xor(key);
          u8* const dst = slot + key * G.code_row_bytes();
          copy_row<0, 5, 128>(dst + ((c ^ x) << 4), row + c * 16, valid);
          copy_row<0, 4, 128>(dst + (((c + 4) ^ x) << 4), row + (c + 4) * 16, valid);
        }
      }
    }
  };

  // DECODED: this thread's chunks of slot u's codes, the ones its own copies brought (so that it
  // waits for no other thread's), to fp16 in ring slot u % STAGES. A chunk is 16 codes, 16 dims of
  // a key: two 16-byte chunks of the tile, in panel rows of 128 bytes whose swizzle puts the 8 key
  // rows x 4 chunks of one store on distinct banks.
  auto decode_slot = [&](int u) {
    if constexpr (DECODED) {
      const u8* const codes = sCodes + (u % CODE_SLOTS) * G.code_stage_bytes();
      u8* const tile = sRing + (u % STAGES) * STAGE_BYTES;
#pragma unroll
      for (int pass = 0; pass < COPY_PASSES; ++pass) {
        const int key = pass * KEYS_PER_PASS + ctid / TPK;
        if (key < SLOT_KEYS) {
          const int x = Codes::chunk_xor(key);
          // Rolled: unrolled, the chunks' loads in flight spilled 4 bytes at the producer's 56
          // registers (ptxas 13.0), 32 to 64 at 40.
#pragma unroll 1
          for (int m = 0; m < CHUNKS_PER_THREAD; ++m) {
            const int chunk = ctid % TPK + (m < 5 ? 8 * m : 4 + 8 * (m - 5));  // issue_slot's order
            const u32x4 w = load16(codes + key * G.code_row_bytes() + ((chunk ^ x) << 4));
            const u32x2 d0 = Decode::quad(w.x), d1 = Decode::quad(w.y), d2 = Decode::quad(w.z),
                        d3 = Decode::quad(w.w);
            store16(tile + Tile::offset(key, chunk * 32), u32x4{d0.x, d0.y, d1.x, d1.y});
            store16(tile + Tile::offset(key, chunk * 32 + 16), u32x4{d2.x, d2.y, d3.x, d3.y});
          }
        }
      }
    }
  };

  // The producer: every slot in turn, once the math threads have released what it held before
  // (its page look-ups a slot ahead, so that a slot's copies wait on no block-table load).
  // DECODED: its copies run CODE_SLOTS slots ahead of the decode, which waits for them.
  if constexpr (WS) {
    if (tid >= MATH_THREADS) {  // warpgroup-uniform
      ws::shrink_registers<G.producer_registers()>();
      if constexpr (G.producer_kind() == MmaProducer::kDecoding) {
        SlotRows next = look_up(0);
#pragma unroll
        for (int u = 0; u < CODE_SLOTS; ++u) {
          if (u < num_slots) issue_slot(u, next);
          async_copy::commit();
          next = look_up(u + 1);
        }
        for (int u = 0; u < num_slots; ++u) {
          async_copy::wait<CODE_SLOTS - 1>();  // this thread's copies of slot u
          if (u >= STAGES) ws::wait(empty + u % STAGES, (u / STAGES - 1) & 1);
          decode_slot(u);
          wg::proxy_fence();  // the tile, for the tensor cores' reads
          ws::arrive(full + u % STAGES);
          if (u + CODE_SLOTS < num_slots) issue_slot(u + CODE_SLOTS, next);
          async_copy::commit();
          next = look_up(u + CODE_SLOTS + 1);
        }
        return;  // the last slots' copies were waited for: none lands after the block leaves
      }
      SlotRows next = look_up(0);
      for (int u = 0; u < num_slots; ++u) {
        const SlotRows rows = next;
        next = look_up(u + 1);
        if (u >= STAGES) ws::wait(empty + u % STAGES, (u / STAGES - 1) & 1);
        issue_slot(u, rows);
        ws::arrive_on_copies(full + u % STAGES);
      }
      return;  // the math threads wait for every slot's copies: none lands after the block leaves
    }
    // (With a softmax warpgroup, each math warpgroup sets its registers where its code parts
    // from the others': ptxas allocates the code that a setmaxnreg dominates within its count.)
    if constexpr (!SOFTMAX_WG) {
      ws::grow_registers<G.value_registers()>();
    }
  }

  // Prologue: the q tile (zeros for padding rows) with slot 0 in the first group, then the other
  // slots that the ring holds ahead, one group each (empty groups keep the count uniform): slots
  // 0 .. STAGES - SLOTS - 1, all but one tile's worth. (With a producer: the q tile alone.)
  const u16* const q_request = q + static_cast<i64>(b) * rows_per_request * kHeadDim;
#pragma unroll
  for (int v = 0; v < G.q_chunks_per_thread(); ++v) {
    const int idx = tid + v * MATH_THREADS;
    if (idx < ROWS * ROW_CHUNKS) {
      const int r = idx / ROW_CHUNKS;
      const int chunk = idx % ROW_CHUNKS;
      const bool valid = row0 + r < rows_per_request;
      const u16* const src = valid ? q_request + static_cast<i64>(row0 + r) * kHeadDim + chunk * kVec : q;
      async_copy::copy16<0>(sQ + QTile::offset(r, chunk * 16), src, valid);
    }
  }
  if constexpr (WS) {
    async_copy::commit();
    async_copy::wait<0>();  // the q tile: the first tile's barrier publishes it
  } else {
    if (num_slots > 0) issue_slot(0, look_up(0));
    async_copy::commit();
#pragma unroll
    for (int u = 1; u < STAGES - SLOTS; ++u) {
      if (u < num_slots) issue_slot(u, look_up(u));
      async_copy::commit();
    }
  }
  // Scores go to the exp2 domain in one multiply; kv_scale is applied here and to the output. The
  // fp8 path computes with fp16 queries, rewritten in place once the q tile landed (the tile
  // loop's first barrier publishes them). fp8 codes reach the matrix cores scaled by 1 / kv_unit
  // (Fp8ToF16).
  constexpr float kv_unit = FP8 ? Decode::kScale : 1.f;
  constexpr float k_unit = NATIVE ? 1.f : kv_unit;  // mfma_native: the fp8 MFMA reads the codes as they are
  const float score_scale = softmax_scale * kv_scale * k_unit * kLog2e;
  if constexpr (DECODED) {
    // As the decoded tile's dims lie: each 16-byte chunk in place (the chunks came from several
    // threads' copies, all waited for above).
    math_sync();
    for (int i = tid; i < ROWS * ROW_CHUNKS; i += MATH_THREADS) {
      u32x4* const chunk = reinterpret_cast<u32x4*>(sQ + QTile::offset(i / ROW_CHUNKS, i % ROW_CHUNKS * 16));
      const u32x4 w = *chunk;
      *chunk = u32x4{bf16x2_to_f16x2(w.x), bf16x2_to_f16x2(w.y), bf16x2_to_f16x2(w.z), bf16x2_to_f16x2(w.w)};
    }
  } else if constexpr (NATIVE && FP8) {
    // mfma_native: the queries as two fp8 terms, each row with its scale (Native::convert_queries),
    // whose largest magnitudes go to sReduce, unused until the tile loop.
    u32* const row_bits = reinterpret_cast<u32*>(sReduce);
    for (int r = tid; r < ROWS; r += MATH_THREADS) row_bits[r] = 0u;
    async_copy::wait<STAGES - SLOTS - 1>();  // the first group
    math_sync();
    Native::template convert_queries<QTile, ROWS, MATH_THREADS>(sQ, row_bits, tid, math_sync);
  } else if constexpr (FP8) {
    // In steps of 32 dims, in the order the decoded keys meet them (mc::store_q16); a step's
    // chunks came from several threads' copies.
    async_copy::wait<STAGES - SLOTS - 1>();  // the first group
    math_sync();
    constexpr int Q_STEPS = kHeadDim / 32;
    for (int i = tid; i < ROWS * Q_STEPS; i += MATH_THREADS) {
      const int r = i / Q_STEPS, d0 = i % Q_STEPS * 32;
      float f[32];
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        float x[8];
        bf16x8_to_float(load16(sQ + QTile::offset(r, (d0 + 8 * c) * 2)), x);
#pragma unroll
        for (int e = 0; e < 8; ++e) f[8 * c + e] = x[e];
      }
      mc::store_q16<QTile>(sQ, r, d0, f);
    }
  }

  // S = Q K^T: this warp's m-tiles and key blocks, and the key limit of each of its lane rows.
  const bool qk_warp = warp < G.qk_warps();  // warp-uniform
  const int qk_key_warp = G.qk_key_warp_of(warp);
  const int qk_m0 = G.qk_m_tile_of(warp);  // first m-tile
  const int qk_key0 = qk_key_warp * QKB * 16;
  int row_limit[QMT][LR];
  float qk_scale[QMT][LR];  // mfma_native, fp8: score_scale over the row's query scale
#pragma unroll
  for (int qm = 0; qm < QMT; ++qm)
#pragma unroll
    for (int i = 0; i < LR; ++i) {
      const int row = row0 + (qk_m0 + qm) * 16 + mc::lane_row(i);
      row_limit[qm][i] =
          row < rows_per_request ? min_of(visible_keys<CAUSAL, MASK_SHIFT>(row, kv_len, heads, block_len), k_end) : 0;
      if constexpr (NATIVE && FP8)
        qk_scale[qm][i] = score_scale * Native::row_unscale(reinterpret_cast<const u32*>(sReduce), row - row0);
    }
  // The O accumulators acc[mt][pb] and the rows they hold. mma.sync / MFMA: O = P V, each warp
  // all m-tiles mt and PVB blocks of 16 dims from pv_dim0; the thread's O rows are its lane rows
  // of each m-tile, slot mt * LR + i. wgmma_ss: the same with one m-tile, warp % 4. wgmma:
  // O^T = V^T P^T (accumulate_transposed), each warpgroup 256 dims from pv_dim0 in 4 products of
  // 64 dims x 64 rows, block pb holding dims 64 (pb / 4) + 16 (warp % 4) + acc_row(e) and rows
  // 16 (pb % 4) + acc_col(e): 16 rows a thread, slot 4 (pb % 4) + 2 (e / 4) + e % 2.
  constexpr int O_SLOTS = PV_RS ? 16 : PMT * LR;
  auto o_slot = [&](int mt, int pb, int e) {
    return PV_RS ? 4 * (pb % 4) + 2 * (e >> 2) + (e & 1) : mt * LR + mc::row_slot(e);
  };
  auto o_row = [&](int slot) {  // the slot's row within the CTA
    return PV_RS ? 16 * (slot / 4) + 8 * (slot / 2 % 2) + 2 * (lane % 4) + slot % 2
                 : (PV_SS ? warp % 4 : slot / LR) * 16 + mc::lane_row(slot % LR);
  };
  const int pv_dim0 = (WGMMA ? warp / 4 - (SOFTMAX_WG ? 1 : 0) : warp) * PVB * 16;
  // Running row maxima, kept by every thread for the rows it touches: its S rows (qk) and its O
  // rows. Both come from the same shared reductions, so they agree.
  float max_qk[QMT][LR], sum_qk[QMT][LR], max_o[O_SLOTS];
#pragma unroll
  for (int i = 0; i < LR; ++i)
#pragma unroll
    for (int qm = 0; qm < QMT; ++qm) max_qk[qm][i] = neg_inf(), sum_qk[qm][i] = 0.f;
#pragma unroll
  for (int slot = 0; slot < O_SLOTS; ++slot) max_o[slot] = neg_inf();
  mc::Acc16 acc[PMT][PVB];
#pragma unroll
  for (int mt = 0; mt < PMT; ++mt)
#pragma unroll
    for (int pb = 0; pb < PVB; ++pb) mc::zero(acc[mt][pb]);

  // wgmma (PV_RS): the rows go out through shared memory (q and the ring, free by then),
  // [row][kStageStride] fp32, then in 16-byte vectors, a loop that is not unrolled: written element
  // by element, the 128 accumulators' stores with their row checks and two destinations were most
  // of the kernel's code, fetched cold by every SM at the end of every CTA. (A stride of 516 words
  // puts the lanes of one store, 8 dims x rows 0, 2, 4, 6, on distinct banks.) stage_rows: this
  // thread's O rows, times inv; then, once all that hold O have staged theirs, store_rows by
  // `threads` of them, this one the `first`.
  constexpr int kStageStride = kValueDim + 4;
  static_assert(!PV_RS || ROWS * kStageStride * 4 <= G.p_offset(), "the staged rows fit in q and the ring");
  float* const sO = reinterpret_cast<float*>(smem_bytes);
  auto stage_rows = [&](const mc::Acc16* blocks, const float* inv) {
#pragma unroll
    for (int pb = 0; pb < PVB; ++pb)
#pragma unroll
      for (int e = 0; e < mc::kLaneAcc; ++e) {
        const int slot = o_slot(0, pb, e);
        const int dim = pv_dim0 + 64 * (pb / 4) + 16 * (warp % 4) + mc::acc_row(e);
        sO[o_row(slot) * kStageStride + dim] = blocks[pb].v[e] * inv[slot];
      }
  };
  auto store_rows = [&](int first, int threads) {
    const int batch = static_cast<int>(gridDim.z);
    constexpr int kVecs = kValueDim / 8;  // 8 dims a vector
    const int live_rows = min_of(ROWS, rows_per_request - row0);
#pragma unroll 1
    for (int i = first; i < live_rows * kVecs; i += threads) {
      const int r = i / kVecs, d = i % kVecs * 8;
      const u32x4 lo = load16(sO + r * kStageStride + d), hi = load16(sO + r * kStageStride + d + 4);
      const i64 out_row = static_cast<i64>(b) * rows_per_request + row0 + r;
      if (num_splits == 1) {
        const float x[8] = {__uint_as_float(lo.x), __uint_as_float(lo.y), __uint_as_float(lo.z), __uint_as_float(lo.w),
                            __uint_as_float(hi.x), __uint_as_float(hi.y), __uint_as_float(hi.z), __uint_as_float(hi.w)};
        store16(o + out_row * kValueDim + d, pack_bf16x8(x));
      } else {
        float* const dst = part_o + (static_cast<i64>(split) * batch * rows_per_request + out_row) * kValueDim + d;
        store16(dst, lo);
        store16(dst + 4, hi);
      }
    }
  };

  // P against the rows' running maxima unless a score passes them by more than kSlack (below).
  constexpr float kSlack = 8.f;

  // The softmax warpgroup (SOFTMAX_WG, warps 0 to 3) computes S = Q K^T and P of each tile as soon
  // as its slot is full, up to the whole ring ahead of the P V warpgroups (warps 4 to 11, value
  // dims 0 .. 255 and 256 .. 511), and hands the tile over in its own slot: P (fp16, as sP's
  // KMajorRows) in the rope panel, which only Q K^T reads, and the rows' rescale factors in the
  // slot's record, both published by the slot's mbarrier `ready`. Only the P V warpgroups release a
  // slot (empty), so its P and record are written again only after both have read them. The
  // running maxima and sums are the softmax warpgroup's alone, and all of a row's scores lie in
  // the 4 lanes of one warp: a row's maximum moves on its own, after a quad's shuffles, where the
  // other paths exchange the maxima between warps and move all rows at once.
  if constexpr (SOFTMAX_WG) {
    static_assert(ROWS * G.p_stride() == Tile::kPanelBytes, "P fills the tile's rope panel");
    constexpr int kFlagsByte = kWgmmaRows * 4;  // the record's per-warp flags, after the factors
    auto rope_panel = [&](int t) -> u8* {
      return sRing + t % STAGES * STAGE_BYTES + Tile::offset(0, kValueDim * 2);
    };
    wg::proxy_fence();          // this thread's part of the q tile, for the tensor cores' reads
    wg::sync<MATH_THREADS>(2);  // ... and everyone's
    if (warp < 4) {  // the softmax warpgroup (warpgroup-uniform)
      ws::shrink_registers<G.softmax_registers()>();
      for (int t = 0; t < num_tiles; ++t) {
        ws::wait(full + t % STAGES, (t / STAGES) & 1);
        wg::proxy_fence();  // the slot's rows, for the tensor cores' reads
        mc::Acc16 s[QKB];
        wg::start_product<KEYS, kHeadDim, ROWS, KEYS, DECODED>(s, sQ, sRing + t % STAGES * STAGE_BYTES);
        wg::finish_product(s);
        // Every warp's share of the product done before any overwrites the rope panel with P: a
        // warp's wait covers its own rows, and PTX does not say that all warps' reads of the
        // shared K operand are over by then.
        wg::sync<kWarpgroupThreads>(4);
        // Mask and scale; per row the tile's maximum (a quad's), and where it passes the running
        // maximum by more than kSlack, the row moves to it: its sum and (through the record) O
        // are rescaled by alpha, 0 for a row that had seen no key (its sum and O are 0).
        const int tile_start = k_begin + t * KEYS;
        float* const alpha_out = reinterpret_cast<float*>(sRecord + t % STAGES * G.record_bytes());
        float tile_max[LR];
#pragma unroll
        for (int i = 0; i < LR; ++i) tile_max[i] = neg_inf();
#pragma unroll
        for (int kb = 0; kb < QKB; ++kb)
#pragma unroll
          for (int e = 0; e < mc::kLaneAcc; ++e) {
            const int slot = mc::row_slot(e);
            const int key = tile_start + kb * 16 + mc::acc_col(e);
            const float x = key < row_limit[0][slot] ? s[kb].v[e] * score_scale : neg_inf();
            s[kb].v[e] = x;
            tile_max[slot] = fmaxf(tile_max[slot], x);
          }
        bool moved = false;
        float base[LR];
#pragma unroll
        for (int i = 0; i < LR; ++i) {
          const float m = group_max<mc::kRowLanes>(tile_max[i]);
          const bool move = m > max_qk[0][i] + kSlack;
          const float alpha = move ? fast_exp2(max_qk[0][i] - m) : 1.f;
          if (move) max_qk[0][i] = m, sum_qk[0][i] *= alpha;
          moved |= move;
          if (lane % mc::kRowLanes == 0) alpha_out[warp * 16 + mc::lane_row(i)] = alpha;
          // A row that has seen no key yet keeps max -inf; subtracting 0 keeps its P at 0.
          base[i] = max_qk[0][i] == neg_inf() ? 0.f : max_qk[0][i];
        }
        // Elements e and e + 1 of a block are adjacent keys of one row: one 4-byte store (the
        // swizzle moves 16-byte chunks).
        u8* const p = rope_panel(t);
#pragma unroll
        for (int kb = 0; kb < QKB; ++kb)
#pragma unroll
          for (int e = 0; e < mc::kLaneAcc; e += 2) {
            const int slot = mc::row_slot(e);
            const float x0 = fast_exp2(s[kb].v[e] - base[slot]), x1 = fast_exp2(s[kb].v[e + 1] - base[slot]);
            sum_qk[0][slot] += x0 + x1;
            const u32 at = PRows::offset(warp * 16 + mc::acc_row(e), (kb * 16 + mc::acc_col(e)) * 2);
            *reinterpret_cast<u32*>(p + at) = float_to_f16(x0) | float_to_f16(x1) << 16;
          }
        const bool warp_moved = wg::warp_any(moved);
        if (lane == 0) sRecord[t % STAGES * G.record_bytes() + kFlagsByte + warp] = warp_moved;
        wg::proxy_fence();  // P, for the tensor cores' reads
        ws::arrive(ready + t % STAGES);
      }
      // Epilogue: the rows' sums (a quad's), for the P V warpgroups' normalisation, and lse (a
      // row that saw no key: -inf).
      const int batch = static_cast<int>(gridDim.z);
#pragma unroll
      for (int i = 0; i < LR; ++i) {
        const float sum = group_sum<mc::kRowLanes>(sum_qk[0][i]);
        const int r = warp * 16 + mc::lane_row(i);
        if (lane % mc::kRowLanes == 0) {
          sReduce[r] = sum;
          if (row0 + r < rows_per_request) {
            const float row_lse = sum > 0.f ? (max_qk[0][i] + log2f(sum)) * kLn2 : neg_inf();
            const i64 out_row = static_cast<i64>(b) * rows_per_request + row0 + r;
            if (num_splits == 1) {
              if (lse != nullptr) lse[out_row] = row_lse;
            } else {
              part_lse[static_cast<i64>(split) * batch * rows_per_request + out_row] = row_lse;
            }
          }
        }
      }
      wg::sync<MATH_THREADS>(2);  // the sums, for the P V warpgroups
    } else {  // a P V warpgroup
      ws::grow_registers<G.value_registers()>();
      mc::Acc16 pv_acc[PVB];  // O^T over this warpgroup's dims, as acc[0] of the other paths
#pragma unroll
      for (int pb = 0; pb < PVB; ++pb) mc::zero(pv_acc[pb]);
      for (int t = 0; t < num_tiles; ++t) {
        // The tile landed (the softmax warpgroup waited for it), and its P and record are written.
        ws::wait(ready + t % STAGES, (t / STAGES) & 1);
        const u8* const v = sRing + t % STAGES * STAGE_BYTES;
        const u8* const record = sRecord + t % STAGES * G.record_bytes();
        // Rows that moved their maximum: O's rescale factors (1 for the other rows). The same word
        // for all threads: a uniform branch.
        if (*reinterpret_cast<const u32*>(record + kFlagsByte) != 0) {
          const float* const alpha = reinterpret_cast<const float*>(record);
#pragma unroll
          for (int pb = 0; pb < PVB; ++pb)
#pragma unroll
            for (int e = 0; e < mc::kLaneAcc; ++e) pv_acc[pb].v[e] *= alpha[o_row(o_slot(0, pb, e))];
        }
        wg::accumulate_transposed<KEYS, G.p_stride()>(
            pv_acc,
            [&](int step, int m, u32(&a)[4]) {
              wg::load_transposed_f16<Tile, DECODED>(a, v, step * 16, pv_dim0 + 64 * m + 16 * (warp % 4));
            },
            rope_panel(t));
        ws::arrive(empty + t % STAGES);  // V, P and the record read: the slot is free
      }
      // Epilogue: normalise (a row that saw no key: o = 0) and store through shared memory. Past
      // the barrier every math thread is done with every tile, and the producer's copies all
      // landed (the softmax warpgroup waited for each), so the q tile and the ring take the rows.
      wg::sync<MATH_THREADS>(2);
      float inv[O_SLOTS];
#pragma unroll
      for (int slot = 0; slot < O_SLOTS; ++slot) {
        const float sum = sReduce[o_row(slot)];
        inv[slot] = sum > 0.f ? kv_scale * kv_unit / sum : 0.f;
      }
      stage_rows(pv_acc, inv);
      wg::sync<PV_THREADS>(3);
      store_rows(tid - kWarpgroupThreads, PV_THREADS);
    }
    return;
  }

  // Tile t's iteration queues the slots that tile t - 1 freed, t * SLOTS + STAGES - SLOTS onwards.
  SlotRows ahead[SLOTS];
  if constexpr (!WS)
#pragma unroll
    for (int j = 0; j < SLOTS; ++j) ahead[j] = look_up(STAGES - SLOTS + j);
  for (int t = 0; t < num_tiles; ++t) {
    // Tile t (and the q tile) landed, for this thread's copies: the slots of the next tile and
    // those queued past it, STAGES - 2 SLOTS groups, may still be in flight. (With a producer:
    // tile t's slot is full.)
    if constexpr (WS)
      ws::wait(full + t % STAGES, (t / STAGES) & 1);
    else
      async_copy::wait<STAGES - 2 * SLOTS>();
    if constexpr (WGMMA) wg::proxy_fence();  // ... also for the tensor cores' reads
    math_sync();                             // ... and for everyone's; the slots of tile t - 1 are free
    // Where key k of tile t lies: row k % SLOT_KEYS of the ring slot that key_slot(k) returns.
    auto key_slot = [&](int k) -> u8* { return sRing + ((t * SLOTS + k / SLOT_KEYS) % STAGES) * STAGE_BYTES; };
    const int tile_start = k_begin + t * KEYS;
    // P's second term (P_TERMS): its own matrix, or with wgmma_ss the tile's rope panel, free once
    // Q K^T read it.
    u8* const sP_lo = PV_SS ? key_slot(0) + Tile::offset(0, kValueDim * 2) : sP + G.p_term_bytes();

    // S = Q K^T over the 576 dims, 32 at a time, step i into chain i % QKC (independent
    // accumulators, summed at the end: see MmaGeometry::qk_chains).
    mc::Acc16 chains[QKC][QMT][QKB];
#pragma unroll
    for (int c = 0; c < QKC; ++c)
#pragma unroll
      for (int qm = 0; qm < QMT; ++qm)
#pragma unroll
        for (int kb = 0; kb < QKB; ++kb) mc::zero(chains[c][qm][kb]);
    mc::Acc16(&s)[QMT][QKB] = chains[0];
    // wgmma: the first warpgroup over the tile's keys, all 64 rows (QMT = 1: warp w has m-tile w).
    // The product runs on the tensor cores while the warps queue the next tile's copies, whose
    // issue can stall a warp for as long as the memory system takes to accept them.
    static_assert(!WGMMA || (QMT == 1 && QKC == 1 && QKB * 16 == KEYS && ROWS == kWgmmaRows), "wgmma: 64 rows");
    static_assert(!WGMMA || SLOTS == 1, "wgmma: a tile is one slot");
    auto queue_copies = [&]() -> void {
      if constexpr (!WS) {  // (else the producer's)
#pragma unroll
        for (int j = 0; j < SLOTS; ++j) {
          const int u = t * SLOTS + STAGES - SLOTS + j;  // into a slot of tile t - 1
          if (u < num_slots) {
            issue_slot(u, ahead[j]);
            ahead[j] = look_up(u + SLOTS);
          }
          async_copy::commit();
        }
      }
    };
    // (The product's issue and wait lie in one branch: ptxas serializes wgmma products whose
    // pipeline it cannot follow through the branches.)
    if constexpr (WGMMA) {
      if (qk_warp) {
        wg::start_product<KEYS, kHeadDim, ROWS, KEYS, DECODED>(s[0], sQ, key_slot(0));
        queue_copies();
        wg::finish_product(s[0]);
      } else {
        queue_copies();
      }
    } else {
      queue_copies();
    }
    // The tile's softmax (see below): this thread's maxima over its keys, its share of the row
    // sums at the running maxima, whether one of its scores passed those by more than kSlack.
    float tile_max[QMT][LR], tile_sum[QMT][LR];
    bool past = false;
#pragma unroll
    for (int qm = 0; qm < QMT; ++qm)
#pragma unroll
      for (int i = 0; i < LR; ++i) tile_sum[qm][i] = 0.f;
    // P = 2^(S - the running maxima) into sP (two bf16 terms with P_TERMS, else fp16), the lane's
    // share of the row sums added to `sum`.
    auto write_p = [&](float(&sum)[QMT][LR]) {
#pragma unroll
      for (int qm = 0; qm < QMT; ++qm) {
        float base[LR];
#pragma unroll
        for (int i = 0; i < LR; ++i) base[i] = max_qk[qm][i] == neg_inf() ? 0.f : max_qk[qm][i];
#pragma unroll
        for (int kb = 0; kb < QKB; ++kb)
#pragma unroll
          for (int e = 0; e < mc::kLaneAcc; ++e) {
            const int slot = mc::row_slot(e);
            const float p = fast_exp2(s[qm][kb].v[e] - base[slot]);
            sum[qm][slot] += p;
            const u32 at = PRows::offset((qk_m0 + qm) * 16 + mc::acc_row(e), (qk_key0 + kb * 16 + mc::acc_col(e)) * 2);
            if constexpr (P_TERMS) {
              const u32 hi = __float_as_uint(p) >> 16;
              *reinterpret_cast<u16*>(sP + at) = static_cast<u16>(hi);
              *reinterpret_cast<u16*>(sP_lo + at) = static_cast<u16>(float_to_bf16(p - __uint_as_float(hi << 16)));
            } else {
              *reinterpret_cast<u16*>(sP + at) = static_cast<u16>(float_to_f16(p));
            }
          }
      }
    };
    if (qk_warp) {
      if constexpr (!WGMMA) {  // S on mma.sync / MFMA (wgmma filled it above)
        // Bodies of QK_UNROLL steps with compile-time dims, so that the operands' addresses are
        // immediates (mc layouts); a body's first dim g is whole 128-byte groups of the 16-bit
        // tiles, which their swizzle leaves alone, so it moves the bases (fp8 codes: not whole
        // groups, so it stays in the dim).
        constexpr int QK_STEPS = kHeadDim / (32 * QKC);
        constexpr int QK_UNROLL = G.qk_unrolled() ? QK_STEPS : 2;  // see MmaGeometry::qk_unrolled
        static_assert(QK_STEPS % QK_UNROLL == 0, "whole bodies");
        for (int g = 0; g < kHeadDim; g += QK_UNROLL * 32 * QKC) {
#pragma unroll
          for (int i = 0; i < QK_UNROLL; ++i)
#pragma unroll
            for (int c = 0; c < QKC; ++c) {
              const int d = (i * QKC + c) * 32;  // step i * QKC + c of the body, into chain c
              mc::QkA a[QMT];
#pragma unroll
              for (int qm = 0; qm < QMT; ++qm) a[qm] = mc::load_qk_a<QTile>(sQ + g * 2, (qk_m0 + qm) * 16, d);
#pragma unroll
              for (int kb = 0; kb < QKB; ++kb) {
                const int key = qk_key0 + kb * 16;  // a block of 16 keys lies in one slot
                if constexpr (NATIVE && !FP8) {  // mfma_native, bf16: one 16x16x32 product a step
                  const mc::QkB k = mc::load_qk_b<Tile>(key_slot(key) + g * 2, key % SLOT_KEYS, d);
#pragma unroll
                  for (int qm = 0; qm < QMT; ++qm) Native::mma_qk(chains[c][qm][kb], a[qm], k);
                } else if constexpr (NATIVE) {  // mfma_native, fp8: the codes undecoded, two q terms
                  const mc::QkB8 k = mc::load_qk_b8<Codes>(key_slot(key), key % SLOT_KEYS, g + d);
#pragma unroll
                  for (int qm = 0; qm < QMT; ++qm) Native::mma_qk8(chains[c][qm][kb], a[qm], k);
                } else if constexpr (!FP8) {
                  const mc::QkB k = mc::load_qk_b<Tile>(key_slot(key) + g * 2, key % SLOT_KEYS, d);
#pragma unroll
                  for (int qm = 0; qm < QMT; ++qm) mc::mma_qk(chains[c][qm][kb], a[qm], k);
                } else {
                  const mc::QkB16 k =
                      mc::decode<Decode>(mc::load_qk_b8<Codes>(key_slot(key), key % SLOT_KEYS, g + d));
#pragma unroll
                  for (int qm = 0; qm < QMT; ++qm) mc::mma_qk_f16(chains[c][qm][kb], a[qm], k);
                }
              }
            }
        }
#pragma unroll
        for (int c = 1; c < QKC; ++c)
#pragma unroll
          for (int qm = 0; qm < QMT; ++qm)
#pragma unroll
            for (int kb = 0; kb < QKB; ++kb)
#pragma unroll
              for (int e = 0; e < mc::kLaneAcc; ++e) s[qm][kb].v[e] += chains[c][qm][kb].v[e];
      }

      // Mask and scale; this thread's maxima over its keys, and whether a score passes its row's
      // running maximum by more than kSlack.
#pragma unroll
      for (int qm = 0; qm < QMT; ++qm) {
#pragma unroll
        for (int i = 0; i < LR; ++i) tile_max[qm][i] = neg_inf();
#pragma unroll
        for (int kb = 0; kb < QKB; ++kb)
#pragma unroll
          for (int e = 0; e < mc::kLaneAcc; ++e) {
            const int slot = mc::row_slot(e);
            const int key = tile_start + qk_key0 + kb * 16 + mc::acc_col(e);
            const float x =
                key < row_limit[qm][slot] ? s[qm][kb].v[e] * (NATIVE && FP8 ? qk_scale[qm][slot] : score_scale)
                                          : neg_inf();
            s[qm][kb].v[e] = x;
            tile_max[qm][slot] = fmaxf(tile_max[qm][slot], x);
          }
#pragma unroll
        for (int i = 0; i < LR; ++i) past |= tile_max[qm][i] > max_qk[qm][i] + kSlack;
      }
      write_p(tile_sum);
    }
    // P against the rows' running maxima as they stand: the softmax allows any base common to a
    // row, and this one needs no exchange between warps while no score passes it by more than
    // kSlack (P <= 2^kSlack, as exact in its format as any P; sums and O in fp32). One barrier
    // publishes P and tells whether a thread saw a score past that; only then (the first tile of
    // a row, rarely a later one) the warps exchange the tile's maxima, rescale O and the sums and
    // write P again.
    if constexpr (WGMMA) wg::proxy_fence();  // P, for the tensor cores' reads
    if (math_sync_or(past)) {
      if (qk_warp) {
#pragma unroll
        for (int qm = 0; qm < QMT; ++qm)
#pragma unroll
          for (int i = 0; i < LR; ++i) {
            const float m = group_max<mc::kRowLanes>(tile_max[qm][i]);
            if (lane % mc::kRowLanes == 0) sReduce[qk_key_warp * ROWS + (qk_m0 + qm) * 16 + mc::lane_row(i)] = m;
          }
      }
      math_sync();
      if (qk_warp) {
#pragma unroll
        for (int qm = 0; qm < QMT; ++qm)
#pragma unroll
          for (int i = 0; i < LR; ++i) {
            const int r = (qk_m0 + qm) * 16 + mc::lane_row(i);
            float m = neg_inf();
#pragma unroll
            for (int w = 0; w < QKW; ++w) m = fmaxf(m, sReduce[w * ROWS + r]);
            const float new_max = fmaxf(max_qk[qm][i], m);
            // A row that has seen no key yet keeps max -inf; subtracting 0 keeps its P at 0.
            sum_qk[qm][i] *= fast_exp2(max_qk[qm][i] - (new_max == neg_inf() ? 0.f : new_max));
            max_qk[qm][i] = new_max;
          }
        write_p(sum_qk);
      }
      // The same new maxima for this thread's O rows: rescale the accumulators.
      float alpha[O_SLOTS];
#pragma unroll
      for (int slot = 0; slot < O_SLOTS; ++slot) {
        float m = neg_inf();
#pragma unroll
        for (int w = 0; w < QKW; ++w) m = fmaxf(m, sReduce[w * ROWS + o_row(slot)]);
        const float new_max = fmaxf(max_o[slot], m);
        alpha[slot] = fast_exp2(max_o[slot] - (new_max == neg_inf() ? 0.f : new_max));
        max_o[slot] = new_max;
      }
#pragma unroll
      for (int mt = 0; mt < PMT; ++mt)
#pragma unroll
        for (int pb = 0; pb < PVB; ++pb)
#pragma unroll
          for (int e = 0; e < mc::kLaneAcc; ++e) acc[mt][pb].v[e] *= alpha[o_slot(mt, pb, e)];
      if constexpr (WGMMA) wg::proxy_fence();
      math_sync();  // P complete
    } else if (qk_warp) {
#pragma unroll
      for (int qm = 0; qm < QMT; ++qm)
#pragma unroll
        for (int i = 0; i < LR; ++i) sum_qk[qm][i] += tile_sum[qm][i];
    }

    // O += P V, V = the first 512 dims of the tile's rows; this warp's dims. m-tiles that hold
    // only padding rows (P = 0) are skipped: H x L = 48 runs 3 of 4. wgmma: O^T += V^T P^T over
    // this warpgroup's 256 dims and all 64 rows, V^T from registers (its bf16 pairs read
    // transposed, as mma.sync's V operand, and converted to fp16), P^T as the tile of P.
    // wgmma_ss: O += P V over the same, P's two terms and V (N-major) from shared memory.
    if constexpr (PV_SS) {
      const u8* const terms[2] = {sP, sP_lo};
      wg::start_accumulation<KEYS, G.p_stride(), Tile::kPanelBytes>(acc[0], terms,
                                                                     key_slot(0) + Tile::offset(0, pv_dim0 * 2));
      wg::finish_product(acc[0]);
    } else if constexpr (WGMMA) {
      const u8* const v = key_slot(0);
      wg::accumulate_transposed<KEYS, G.p_stride()>(
          acc[0],
          [&](int step, int m, u32(&a)[4]) {
            wg::load_transposed_f16<Tile, DECODED>(a, v, step * 16, pv_dim0 + 64 * m + 16 * (warp % 4));
          },
          sP);
      if constexpr (WS) ws::arrive(empty + t % STAGES);  // its last reader done: the slot is free
    } else if constexpr (NATIVE && !FP8) {  // mfma_native, bf16: 16x16x32 products over 32 keys
      static_assert(SLOT_KEYS % 32 == 0, "mfma_native's bf16 P V takes 32 keys of one slot at a time");
#pragma unroll
      for (int kb = 0; kb < KEYS / 32; ++kb)
        Native::template pv<MT, PVB, PRows, Tile>(acc, sP, sP_lo, key_slot(kb * 32), kb * 32, kb * 32 % SLOT_KEYS,
                                                  live_m_tiles, pv_dim0);
    } else {
#pragma unroll
      for (int kb = 0; kb < KEYS / 16; ++kb) {
        const u8* const slot = key_slot(kb * 16);
        const int key = kb * 16 % SLOT_KEYS;
        mc::PvA p[MT];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
          if (mt < live_m_tiles) p[mt] = mc::load_pv_a<PRows>(sP, mt * 16, kb * 16);
        if constexpr (P_TERMS) {
          mc::PvA p_lo[MT];
#pragma unroll
          for (int mt = 0; mt < MT; ++mt)
            if (mt < live_m_tiles) p_lo[mt] = mc::load_pv_a<PRows>(sP_lo, mt * 16, kb * 16);
#pragma unroll
          for (int pb = 0; pb < PVB; ++pb) {
            const mc::PvB v = mc::load_pv_b<Tile>(slot, key, pv_dim0 + pb * 16);
#pragma unroll
            for (int mt = 0; mt < MT; ++mt)
              if (mt < live_m_tiles) mc::mma_pv(acc[mt][pb], p[mt], v), mc::mma_pv(acc[mt][pb], p_lo[mt], v);
          }
        } else {
#pragma unroll
          for (int pb = 0; pb < PVB; pb += 2) {
            const mc::PvB16 v = mc::decode<Decode>(mc::load_pv_b8<Codes>(slot, key, pv_dim0 + pb * 16));
#pragma unroll
            for (int mt = 0; mt < MT; ++mt)
              if (mt < live_m_tiles) mc::mma_pv16(acc[mt][pb], acc[mt][pb + 1], p[mt], v);
          }
        }
      }
    }
  }
  async_copy::wait<0>();  // no copy may land after the block has left (num_tiles == 0: the q tile)

  // Row sums: lanes, then key warps, through shared memory.
  math_sync();  // every warp is done with sReduce's maxima
  if (qk_warp) {
#pragma unroll
    for (int qm = 0; qm < QMT; ++qm)
#pragma unroll
      for (int i = 0; i < LR; ++i) {
        const float sum = group_sum<mc::kRowLanes>(sum_qk[qm][i]);
        if (lane % mc::kRowLanes == 0) sReduce[qk_key_warp * ROWS + (qk_m0 + qm) * 16 + mc::lane_row(i)] = sum;
      }
  }
  math_sync();

  // Epilogue: normalise; a row that saw no key (possible within a split) gets o = 0, lse = -inf.
  const int batch = static_cast<int>(gridDim.z);
  float inv[O_SLOTS];
#pragma unroll
  for (int slot = 0; slot < O_SLOTS; ++slot) {
    float sum = 0.f;
#pragma unroll
    for (int w = 0; w < QKW; ++w) sum += sReduce[w * ROWS + o_row(slot)];
    inv[slot] = sum > 0.f ? kv_scale * kv_unit / sum : 0.f;
    // One thread per row writes its lse: the first column group's lanes of warp 0 (wgmma_ss: of
    // warps 0 to 3, one m-tile each; wgmma: warp 0's lanes of the first row group).
    const int row = row0 + o_row(slot);
    const bool lse_thread = PV_RS ? warp == 0 && lane < 4 : warp < (PV_SS ? 4 : 1) && lane % mc::kRowLanes == 0;
    if (lse_thread && row < rows_per_request) {
      const float row_lse = sum > 0.f ? (max_o[slot] + log2f(sum)) * kLn2 : neg_inf();
      const i64 out_row = static_cast<i64>(b) * rows_per_request + row;
      if (num_splits == 1) {
        if (lse != nullptr) lse[out_row] = row_lse;
      } else {
        part_lse[static_cast<i64>(split) * batch * rows_per_request + out_row] = row_lse;
      }
    }
  }
  if constexpr (PV_RS) {
    stage_rows(acc[0], inv);
    math_sync();
    store_rows(tid, MATH_THREADS);
  } else {
#pragma unroll
    for (int mt = 0; mt < PMT; ++mt)
#pragma unroll
      for (int pb = 0; pb < PVB; ++pb)
#pragma unroll
        for (int e = 0; e < mc::kLaneAcc; ++e) {
          const int slot = o_slot(mt, pb, e);
          const int row = row0 + o_row(slot);
          if (row >= rows_per_request) continue;
          const i64 out_row = static_cast<i64>(b) * rows_per_request + row;
          // The fp8 path's P V step permutes the dims of two blocks (mc::pv8_dim).
          const int dim = FP8 ? mc::pv8_dim(pv_dim0 + pb / 2 * 32, pb % 2, e) : pv_dim0 + pb * 16 + mc::acc_col(e);
          const float x = acc[mt][pb].v[e] * inv[slot];
          if (num_splits == 1)
            o[out_row * kValueDim + dim] = static_cast<u16>(float_to_bf16(x));
          else
            part_o[(static_cast<i64>(split) * batch * rows_per_request + out_row) * kValueDim + dim] = x;
        }
  }
}

}  // namespace ktune
