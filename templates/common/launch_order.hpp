#pragma once
// A kernel launched to overlap the tail of the kernel ahead of it on the stream (the tuner's
// Context::launch_dependent, the runtime's Launch::overlaps_previous: CUDA's programmatic dependent
// launch) starts before that kernel has finished, so that its launch costs no time between the
// two; it must not read what that kernel writes before
//   wait_for_previous_kernel()   blocks until the kernel ahead has finished and its writes are
//                                visible (griddepcontrol.wait, sm_90 on). Where launches do not
//                                overlap (an ordinary launch, AMD GPUs) there is nothing to wait
//                                for: it returns at once.
#include "common/prelude.hpp"

namespace ktune {

__device__ __forceinline__ void wait_for_previous_kernel() {
#if defined(KTUNE_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

}  // namespace ktune
