#pragma once
// A producer warpgroup that fills a ring of shared-memory slots for math warpgroups (Hopper,
// sm_90a), so that the warps that issue matrix products neither issue the copies nor wait for a
// slot longer than its data takes to land:
//   init(bar, count)         an mbarrier that completes a phase once `count` threads arrived
//                            (one thread, before a barrier of the whole block)
//   arrive(bar)              this thread's arrival (a consumer done with a slot)
//   arrive_on_copies(bar)    an arrival once this thread's cp.async copies so far have landed
//                            (.noinc: counted in init's `count`), which also makes them visible to
//                            whoever waits on the phase
//   wait(bar, parity)        blocks until the phase of that parity completed
//   shrink_registers<N>()    setmaxnreg: the warpgroup gives up registers down to N a thread ...
//   grow_registers<N>()      ... which another takes, up to N (both multiples of 8 in 24..256; the
//                            block's total may not exceed what it was launched with)
// Elsewhere these are declared only, for code that names them in branches a target never
// instantiates (math=wgmma's producer is pruned for other targets).
#include "common/prelude.hpp"

namespace ktune {
namespace ws {

#if defined(KTUNE_CUDA) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

__device__ __forceinline__ u32 shared_address(const u64* bar) {
  return static_cast<u32>(__cvta_generic_to_shared(bar));
}
__device__ __forceinline__ void init(u64* bar, u32 count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(shared_address(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void arrive(u64* bar) {
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];\n" ::"r"(shared_address(bar)) : "memory");
}
__device__ __forceinline__ void arrive_on_copies(u64* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(shared_address(bar)) : "memory");
}
__device__ __forceinline__ void wait(u64* bar, u32 parity) {
  asm volatile(
      "{\n.reg .pred done;\n"
      "retry:\n"
      "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra retry;\n}\n" ::"r"(shared_address(bar)),
      "r"(parity)
      : "memory");
}
template <int N>
__device__ __forceinline__ void shrink_registers() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N>
__device__ __forceinline__ void grow_registers() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}

#else

__device__ void init(u64* bar, u32 count);
__device__ void arrive(u64* bar);
__device__ void arrive_on_copies(u64* bar);
__device__ void wait(u64* bar, u32 parity);
template <int N>
__device__ void shrink_registers();
template <int N>
__device__ void grow_registers();

#endif

}  // namespace ws
}  // namespace ktune
