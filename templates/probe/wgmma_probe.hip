// Matrix-core throughput probe of Hopper (sm_90a): the roof against which `ktune bench` and the
// sweep report TFLOP/s there (tuner/bench/matrix_probe.hpp times it and counts its FLOPs).
//
// It issues the largest product the kernels issue, wgmma m64n256k16 bf16 -> fp32 with both
// operands in shared memory (common/wgmma.hpp's start_accumulation: mla_decode's P V with
// math=wgmma_ss), back to back into one accumulator per warpgroup. The tensor cores chain
// accumulations into the same registers without a wait, and read the operands themselves, so
// that nothing but their own rate should limit it; mma.sync (mma_probe.hip), whose operands pass
// through every warp's registers, stays below the data sheet's rate for dense bf16.
//
// The operands: a 64-row K-major panel (A, 8 KiB) and 4 N-major panels of 16 rows (B, 8 KiB),
// filled with the operand buffer's words over and over. With every operand 1.0 each product adds
// 16 (K) to every accumulator element, whatever the layout and swizzle, so that the host can
// check, thread by thread, that every product ran.
#include "common/prelude.hpp"
#include "common/wgmma.hpp"

namespace ktune {
namespace probe_detail {

// The operand buffer: 8 words per lane of a 32-lane warp, as mma_probe.hip reads it.
constexpr int kOperandWords = 32 * 8;
// B: 16 rows (its K) of 128 bytes in each panel of 64 of its 256 dims.
constexpr int kPanelBytes = 16 * 128;
constexpr int kABytes = 64 * 128;
constexpr int kTileWords = (kABytes + 4 * kPanelBytes) / 4;

}  // namespace probe_detail

// Grid: one CTA of THREADS threads (whole warpgroups) per SM; operands: kOperandWords words; out:
// one float per thread, the sum of its accumulators after `iterations` products of its warpgroup.
// CHAINS: accumulators per warpgroup, 1 (a 64 x 256 fp32 accumulator takes 128 registers a thread).
template <int THREADS, int CHAINS>
__global__ void __launch_bounds__(THREADS, 1)
    wgmma_probe(const u32* __restrict__ operands, float* __restrict__ out, int iterations) {
  static_assert(THREADS % 128 == 0, "whole warpgroups");
  static_assert(CHAINS == 1, "one 64 x 256 accumulator per warpgroup: two would not fit the registers");
#if defined(KTUNE_CUDA) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using namespace probe_detail;
  __shared__ __align__(1024) u32 tiles[kTileWords];  // wgmma's 128-byte swizzle is anchored at 1024 bytes
  wg::require_swizzle_alignment(tiles);
  for (int i = static_cast<int>(threadIdx.x); i < kTileWords; i += THREADS) tiles[i] = operands[i % kOperandWords];
  wg::proxy_fence();
  __syncthreads();
  mc::Acc16 d[16];
#pragma unroll
  for (int b = 0; b < 16; ++b) mc::zero(d[b]);
  const auto desc_a = wg::detail::Desc::k_major<128>(tiles);
  const auto desc_b = wg::detail::Desc::n_major<kPanelBytes>(reinterpret_cast<const u8*>(tiles) + kABytes);
  wg::detail::fence();
  for (int i = 0; i < iterations; ++i) wg::detail::mma_bf16<256, true>(d, desc_a, desc_b, true);
  wg::detail::commit();
  wg::detail::wait<0>();
  wg::detail::settle(d);
  float sum = 0.f;
#pragma unroll
  for (int b = 0; b < 16; ++b)
#pragma unroll
    for (int e = 0; e < 8; ++e) sum += d[b].v[e];
  out[static_cast<i64>(blockIdx.x) * THREADS + threadIdx.x] = sum;
#else
  static_assert(THREADS != THREADS, "wgmma_probe is sm_90a's: wgmma");
#endif
}

}  // namespace ktune
