#pragma once
// The CUDA driver API, loaded from libcuda.so.1 at run time. cuda.h supplies only the types:
// its macros map each name to the versioned symbol (cuMemAlloc -> cuMemAlloc_v2), and the
// table below resolves exactly those symbols.
#include <cuda.h>

#include "backend/dl_library.hpp"

namespace ktune::backend {

// clang-format off
#define KTUNE_CUDA_DRIVER_FUNCTIONS(X)                                                            \
  X(cuGetErrorName) X(cuGetErrorString) X(cuInit) X(cuDriverGetVersion)                           \
  X(cuDeviceGet) X(cuDeviceGetCount) X(cuDeviceGetName) X(cuDeviceGetAttribute)                   \
  X(cuDeviceTotalMem) X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent) \
  X(cuMemGetInfo) X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize)                     \
  X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync)                            \
  X(cuMemcpyDtoDAsync) X(cuMemsetD8Async) X(cuModuleLoadData) X(cuModuleUnload)                   \
  X(cuModuleGetFunction) X(cuFuncSetAttribute) X(cuLaunchKernel) X(cuLaunchKernelEx)             \
  X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord) X(cuEventSynchronize) X(cuEventElapsedTime) \
  X(cuStreamBeginCapture) X(cuStreamEndCapture) X(cuGraphInstantiate) X(cuGraphLaunch)            \
  X(cuGraphExecDestroy) X(cuGraphDestroy)
// clang-format on

// Loaded and initialised driver with at least one device. The constructor throws Unavailable
// saying why otherwise (no library, missing symbol, cuInit failure, no GPU).
class CudaDriver {
 public:
  CudaDriver();

#define KTUNE_CUDA_DECLARE(fn) decltype(&::fn) fn = nullptr;
  KTUNE_CUDA_DRIVER_FUNCTIONS(KTUNE_CUDA_DECLARE)
#undef KTUNE_CUDA_DECLARE

  int device_count() const noexcept { return device_count_; }
  int version() const noexcept { return version_; }  // 13000 for CUDA 13.0

  // "CUDA_ERROR_X (the driver's description)".
  std::string describe(CUresult r) const;
  // Throws DeviceFault for errors that leave the context unusable, Error for any other
  // failure; the message names `call`.
  void check(CUresult r, std::string_view call) const {
    if (r != CUDA_SUCCESS) fail(r, call);
  }

 private:
  [[noreturn]] void fail(CUresult r, std::string_view call) const;
  DlLibrary lib_;
  int device_count_ = 0;
  int version_ = 0;
};

}  // namespace ktune::backend
