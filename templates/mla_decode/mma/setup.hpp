// Setup, for every variant: the geometry and the flags that the variant sets, the tiles' layouts,
// the shared-memory carve-up, this thread's place, the producer's mbarriers (kWgmmaProducer,
// kWgmmaSoftmax), and the CTA's rows and keys.
// A phase of mla_decode_mma's body, included at its place in mla_decode_mma.hip (which says why);
// it reads the names that the phases before it declare.
  using namespace mla_tile;
  using namespace mla_detail;
  static_assert((MATH >= 1 && MATH <= 3) || MATH == 5, "mla_decode_mma is the matrix-core path (MATH = 1, 2, 3 or 5)");
  constexpr bool WGMMA = MATH == 2 || MATH == 3;
  // mfma_native: MATH 5, the MFMA forms of the cache's own format (Path: gfx942 / gfx950 only).
  constexpr bool NATIVE = MATH == 5;
  typedef mfma_native::Path<KV_DTYPE> Native;
  constexpr MmaGeometry G{ROWS, KEYS, THREADS, STAGES, KV_DTYPE, kWarp, WGMMA, MATH == 3};
  // The variant that MATH, THREADS and KV_DTYPE select (MmaGeometry::variant) and what its
  // producer warpgroup does (MmaGeometry::producer_kind): the kernel's branches and the flags
  // below (PV_SS, WS, SOFTMAX_WG) read them.
  constexpr MmaVariant VARIANT = G.variant();
  constexpr MmaProducer PRODUCER = G.producer_kind();
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
  // tile is; Q K^T and P V then read fp16 (decode_slot, slot_copies.hpp).
  constexpr bool DECODED = G.decoded();
  // With a producer warpgroup (MmaGeometry::producer, wgmma only) the math warpgroups neither
  // issue copies nor join the producer's barriers: they meet on named barrier 1, and each ring
  // slot has two mbarriers, full (the producer's copies landed) and empty (all math threads are
  // done reading it). Without one, the whole block computes and copies, and meets on
  // __syncthreads. With a softmax warpgroup besides (wgmma_softmax.hpp) the math warpgroups meet
  // on named barrier 2, the P V warpgroups alone on 3, the softmax warpgroup alone on 4, and each
  // slot has a third mbarrier, ready (the softmax warpgroup wrote its P and record); only the P V
  // warpgroups arrive on empty.
  constexpr bool WS = PRODUCER != MmaProducer::kNone;
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
