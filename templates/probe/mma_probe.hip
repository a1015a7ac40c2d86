// Matrix-core throughput probe: the roof against which `ktune bench` and the sweep report the
// kernels' TFLOP/s on targets without warpgroup products (tuner/bench/matrix_probe.hpp times it
// and counts its FLOPs; on sm_90a the roof is wgmma_probe.hip's, and the GPU tests time this one
// there to show that wgmma's is above it).
//
// It issues the instruction the kernels issue (common/matrix_core.hpp): mma.sync m16n8k16 bf16 ->
// fp32 on NVIDIA, v_mfma_f32_16x16x16bf16_1k on AMD CDNA, back to back on CHAINS independent
// accumulators per warp, so that the matrix cores never wait for a result; operands stay in
// registers, so that nothing but the matrix cores limits the rate. What it measures is what this
// instruction reaches, not the device's data-sheet peak.
//
// Each thread writes the sum of its accumulators, so that no compiler can drop the work, and the
// host can check, with every operand 1.0, that every instruction ran: each one adds 16 (K) to
// every accumulator element, which starts at its chain's index.
#include "common/matrix_core.hpp"
#include "common/prelude.hpp"

namespace ktune {
namespace probe_detail {

// Operand words per lane in the operand buffer (the instruction uses the first 6 on NVIDIA, 4 on
// AMD); 8 keeps every lane's words 32-byte aligned.
constexpr int kLaneWords = 8;
// Accumulator elements per lane of one instruction: 16 x 8 / 32 lanes (NVIDIA), 16 x 16 / 64 (AMD).
constexpr int kChainElems = 4;

#if defined(KTUNE_CUDA)
struct Operands {
  u32 a[4], b[2];  // bf16 pairs: A 16 x 16, B 16 x 8
};
__device__ __forceinline__ Operands load_operands(const u32* p) { return {{p[0], p[1], p[2], p[3]}, {p[4], p[5]}}; }
struct Chain {
  float v[kChainElems];
};
__device__ __forceinline__ float& elem(Chain& c, int e) { return c.v[e]; }
__device__ __forceinline__ void issue(Chain& c, const Operands& o) {
  mc::mma_16816(c.v, o.a[0], o.a[1], o.a[2], o.a[3], o.b[0], o.b[1]);
}
#else
struct Operands {
  mc::short4_t a, b;  // A 16 x 16, B 16 x 16
};
__device__ __forceinline__ Operands load_operands(const u32* p) {
  return {mc::as_short4(p[0], p[1]), mc::as_short4(p[2], p[3])};
}
struct Chain {
  mc::Acc16 acc;
  static_assert(mc::kLaneAcc == kChainElems, "one MFMA accumulator block per chain");
};
__device__ __forceinline__ float& elem(Chain& c, int e) { return c.acc.v[e]; }
__device__ __forceinline__ void issue(Chain& c, const Operands& o) { mc::mfma_16x16x16(c.acc, o.a, o.b); }
#endif

}  // namespace probe_detail

// Grid: any number of CTAs of THREADS threads. operands: kLaneWords words per lane of a warp (the
// same for every warp); out: one float per thread, the sum of its accumulators after `iterations`
// instructions on each of its CHAINS chains.
template <int THREADS, int CHAINS>
__global__ void __launch_bounds__(THREADS)
    mma_probe(const u32* __restrict__ operands, float* __restrict__ out, int iterations) {
  using namespace probe_detail;
  static_assert(THREADS % kWarp == 0, "whole warps");
  const Operands o = load_operands(operands + kLaneWords * mc::lane_id());
  Chain chains[CHAINS];
#pragma unroll
  for (int c = 0; c < CHAINS; ++c)
#pragma unroll
    for (int e = 0; e < kChainElems; ++e) elem(chains[c], e) = static_cast<float>(c);
  for (int i = 0; i < iterations; ++i)
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) issue(chains[c], o);
  float sum = 0.f;
#pragma unroll
  for (int c = 0; c < CHAINS; ++c)
#pragma unroll
    for (int e = 0; e < kChainElems; ++e) sum += elem(chains[c], e);
  out[static_cast<i64>(blockIdx.x) * THREADS + threadIdx.x] = sum;
}

}  // namespace ktune
