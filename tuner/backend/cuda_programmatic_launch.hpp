#pragma once
// The configuration of a CUDA programmatic dependent launch (cuLaunchKernelEx with
// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION): the kernel may start once every block of
// the kernel ahead of it on the stream has exited, and waits for that kernel's completion itself
// (templates/common/launch_order.hpp). For the tuner's CudaContext::launch_dependent and the
// runtime's Launch::overlaps_previous.
#include <cuda.h>

namespace ktune::backend {

// Whether a device of this compute capability overlaps such launches (Hopper on); elsewhere the
// launchers make ordinary ones.
constexpr bool has_programmatic_launches(int compute_capability_major) noexcept {
  return compute_capability_major >= 9;
}

struct ProgrammaticLaunch {
  CUlaunchAttribute attribute{};
  CUlaunchConfig config{};  // points at `attribute`: neither is copied

  ProgrammaticLaunch(const unsigned (&grid)[3], const unsigned (&block)[3], unsigned shared_bytes,
                     CUstream stream) noexcept {
    attribute.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attribute.value.programmaticStreamSerializationAllowed = 1;
    config.gridDimX = grid[0], config.gridDimY = grid[1], config.gridDimZ = grid[2];
    config.blockDimX = block[0], config.blockDimY = block[1], config.blockDimZ = block[2];
    config.sharedMemBytes = shared_bytes;
    config.hStream = stream;
    config.attrs = &attribute;
    config.numAttrs = 1;
  }
  ProgrammaticLaunch(const ProgrammaticLaunch&) = delete;
  ProgrammaticLaunch& operator=(const ProgrammaticLaunch&) = delete;
};

}  // namespace ktune::backend
