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
#include "mla_decode/mma/producer_decoding.hpp"
#include "mla_decode/mma/row_copy.hpp"

namespace ktune {

// Parameters as mla_decode's; MATH is 1 (mma.sync / MFMA), 2 or 3 (Q K^T and P V on wgmma, sm_90a,
// P V as O^T = V^T P^T or O = P V; see MmaGeometry::qk_wgmma and pv_ss) or 5 (MATH 1 with the
// MFMA forms that take the cache's format, gfx942 / gfx950: mma/mfma_native.hpp; its hooks in the
// phases are marked "mfma_native"). STAGES: slots in the ring (MmaGeometry::ring_keys).
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
  // The body is cut into named phases, one header each under mla_decode/mma/, included here in the
  // order they run rather than called: moved into __device__ functions, the same statements
  // compiled to other machine code under NVRTC (another form of the address arithmetic, another
  // numbering of virtual registers: experiments/2026-12-07-mla-decode-variant-split), while
  // included the compiler sees the tokens of one function body. The fp8 decoding producer is the
  // exception, a function of the same machine code (experiments/2026-12-07-mla-decode-phase-headers).
  // A phase reads the names that those before it declare, and is included once (the render
  // inlines each file once); the variant (VARIANT, PRODUCER: setup.hpp) picks the branches
  // between them.
#include "mla_decode/mma/setup.hpp"
#include "mla_decode/mma/slot_copies.hpp"

  // The producer warpgroup (kWgmmaProducer, kWgmmaSoftmax): the last warpgroup copies (and with an
  // fp8 cache decodes) every slot, its page look-ups a slot ahead, and leaves; setmaxnreg gives its
  // registers to the math warpgroups.
  if constexpr (PRODUCER != MmaProducer::kNone) {
    if (tid >= MATH_THREADS) {  // warpgroup-uniform
      ws::shrink_registers<G.producer_registers()>();
      if constexpr (PRODUCER == MmaProducer::kDecoding) {
        produce_decoded<STAGES, CODE_SLOTS>(num_slots, full, empty, look_up, issue_slot, decode_slot);
        return;  // the last slots' copies were waited for: none lands after the block leaves
      }
#include "mla_decode/mma/producer_copies.hpp"
      return;  // the math threads wait for every slot's copies: none lands after the block leaves
    }
    // (With a softmax warpgroup, each math warpgroup sets its registers where its code parts
    // from the others': ptxas allocates the code that a setmaxnreg dominates within its count.)
    if constexpr (VARIANT != MmaVariant::kWgmmaSoftmax) {
      ws::grow_registers<G.value_registers()>();
    }
  }

#include "mla_decode/mma/prologue.hpp"

#include "mla_decode/mma/row_state.hpp"

  // kWgmmaSoftmax runs its own tile loop and epilogue; the code below is compiled for it too, but
  // never reached.
  if constexpr (VARIANT == MmaVariant::kWgmmaSoftmax) {
#include "mla_decode/mma/wgmma_softmax.hpp"
    return;
  }

  // Tile t's iteration queues the slots that tile t - 1 freed, t * SLOTS + STAGES - SLOTS onwards.
  SlotRows ahead[SLOTS];
  if constexpr (!WS)
#pragma unroll
    for (int j = 0; j < SLOTS; ++j) ahead[j] = look_up(STAGES - SLOTS + j);
  for (int t = 0; t < num_tiles; ++t) {
#include "mla_decode/mma/tile_begin.hpp"
    // (The product's issue and wait lie in one branch: ptxas serializes wgmma products whose
    // pipeline it cannot follow through the branches.)
    if constexpr (VARIANT == MmaVariant::kMma) {
      queue_copies();
    } else {
#include "mla_decode/mma/qk_wgmma.hpp"
    }
#include "mla_decode/mma/softmax_state.hpp"
    if (qk_warp) {
      if constexpr (VARIANT == MmaVariant::kMma) {  // S on mma.sync / MFMA (wgmma filled it above)
#include "mla_decode/mma/qk_mma.hpp"
      }
#include "mla_decode/mma/softmax_scores.hpp"
    }
#include "mla_decode/mma/softmax_rescale.hpp"

    // O += P V, V = the first 512 dims of the tile's rows; this warp's dims. m-tiles that hold
    // only padding rows (P = 0) are skipped: H x L = 48 runs 3 of 4. wgmma: O^T += V^T P^T over
    // this warpgroup's 256 dims and all 64 rows, V^T from registers (its bf16 pairs read
    // transposed, as mma.sync's V operand, and converted to fp16), P^T as the tile of P.
    // wgmma_ss: O += P V over the same, P's two terms and V (N-major) from shared memory.
    if constexpr (VARIANT == MmaVariant::kWgmmaSs) {
#include "mla_decode/mma/pv_wgmma_ss.hpp"
    } else if constexpr (NATIVE && !FP8) {  // mfma_native, bf16: 16x16x32 products over 32 keys
      static_assert(SLOT_KEYS % 32 == 0, "mfma_native's bf16 P V takes 32 keys of one slot at a time");
#pragma unroll
      for (int kb = 0; kb < KEYS / 32; ++kb)
        Native::template pv<MT, PVB, PRows, Tile>(acc, sP, sP_lo, key_slot(kb * 32), kb * 32, kb * 32 % SLOT_KEYS,
                                                  live_m_tiles, pv_dim0);
    } else if constexpr (VARIANT == MmaVariant::kMma) {
#include "mla_decode/mma/pv_mma.hpp"
    } else {  // kWgmma, kWgmmaProducer
#include "mla_decode/mma/pv_wgmma.hpp"
    }
  }
  async_copy::wait<0>();  // no copy may land after the block has left (num_tiles == 0: the q tile)

#include "mla_decode/mma/epilogue.hpp"
}

}  // namespace ktune
