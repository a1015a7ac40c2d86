#pragma once
// 16-byte global -> shared-memory copies that complete in groups, for multi-stage pipelines:
//   copy16<DST_OFFSET, SRC_OFFSET>(dst, src, valid)
//                             queue a copy of src + SRC_OFFSET (default: DST_OFFSET) to
//                             dst + DST_OFFSET (valid == false: dst gets zeros, src is not read);
//                             the offsets are immediates of the instruction, so a row's copies
//                             share two address registers
//   commit()                  close the group of copies queued since the last commit
//   wait<N>()                 block until at most N groups of this thread are still in flight
// A __syncthreads() after wait<N>() makes the landed data visible to the whole block.
//
// NVIDIA (sm_80+): cp.async.cg (L2 only, bypassing L1: streamed data is read once), so that the
// copies of later stages are in flight while the block computes on earlier ones.
// AMD CDNA: gfx90a has no 16-byte global -> LDS copy, so the copy goes through registers and
// completes before copy16 returns; commit / wait have nothing to track and the pipeline's stages
// only give the loads of different warps independent slots.
#include "common/prelude.hpp"

namespace ktune {
namespace async_copy {

#if defined(KTUNE_CUDA)
template <int DST_OFFSET, int SRC_OFFSET = DST_OFFSET>
__device__ __forceinline__ void copy16(void* dst, const void* src, bool valid) {
  const u32 dst_addr = static_cast<u32>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0 + %3], [%1 + %4], 16, %2;\n" ::"r"(dst_addr), "l"(src),
               "r"(valid ? 16 : 0), "n"(DST_OFFSET), "n"(SRC_OFFSET));
}

__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::); }

template <int N>
__device__ __forceinline__ void wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}
#else
template <int DST_OFFSET, int SRC_OFFSET = DST_OFFSET>
__device__ __forceinline__ void copy16(void* dst, const void* src, bool valid) {
  store16(static_cast<u8*>(dst) + DST_OFFSET,
          valid ? load16(static_cast<const u8*>(src) + SRC_OFFSET) : zero_u32x4());
}

__device__ __forceinline__ void commit() {}

template <int N>
__device__ __forceinline__ void wait() {}
#endif

}  // namespace async_copy
}  // namespace ktune
