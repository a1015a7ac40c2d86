#pragma once
// The HIP runtime, loaded from libamdhip64 at run time. hip_runtime_api.h supplies only the
// types (compiled with __HIP_PLATFORM_AMD__, without hipcc).
#include <hip/hip_runtime_api.h>

#include <string>
#include <string_view>

#include "backend/dl_library.hpp"

namespace ktune::backend {

// libamdhip64 in the order of rocm_libraries.hpp: ROCM_PATH (else /opt/rocm) first.
DlLibrary open_amdhip64();
// HIP's packed version number (50221153) as "5.2.21153".
std::string hip_version_string(int packed);

// clang-format off
#define KTUNE_HIP_RUNTIME_FUNCTIONS(X)                                                           \
  X(hipGetErrorName) X(hipGetErrorString) X(hipRuntimeGetVersion) X(hipGetDeviceCount)           \
  X(hipGetDeviceProperties) X(hipSetDevice) X(hipMemGetInfo) X(hipStreamCreateWithFlags)         \
  X(hipStreamDestroy) X(hipStreamSynchronize) X(hipFree) X(hipMemcpyHtoDAsync)                   \
  X(hipMemcpyDtoHAsync) X(hipMemcpyDtoDAsync) X(hipMemsetD8Async) X(hipModuleLoadData)           \
  X(hipModuleUnload) X(hipModuleGetFunction) X(hipModuleLaunchKernel) X(hipEventCreateWithFlags) \
  X(hipEventDestroy) X(hipEventRecord) X(hipEventSynchronize) X(hipEventElapsedTime)             \
  X(hipStreamBeginCapture) X(hipStreamEndCapture) X(hipGraphInstantiate) X(hipGraphLaunch)       \
  X(hipGraphExecDestroy) X(hipGraphDestroy)
// clang-format on

// Loaded runtime with at least one device. The constructor throws Unavailable saying why
// otherwise (no library, missing symbol, no GPU); it never aborts on a machine without one.
class HipRuntime {
 public:
  HipRuntime();

#define KTUNE_HIP_DECLARE(fn) decltype(&::fn) fn = nullptr;
  KTUNE_HIP_RUNTIME_FUNCTIONS(KTUNE_HIP_DECLARE)
#undef KTUNE_HIP_DECLARE
  // hip_runtime_api.h overloads hipMalloc with a C++ template, so its type is spelled out.
  hipError_t (*hipMalloc)(void**, size_t) = nullptr;

  int device_count() const noexcept { return device_count_; }
  const std::string& version() const noexcept { return version_; }  // "5.2.21153"
  std::string library_file() const { return lib_.file(); }          // the libamdhip64 in use

  // "hipErrorX (the runtime's description)".
  std::string describe(hipError_t e) const;
  // Throws DeviceFault for errors that leave the device unusable, Error for any other failure.
  void check(hipError_t e, std::string_view call) const {
    if (e != hipSuccess) fail(e, call);
  }

 private:
  [[noreturn]] void fail(hipError_t e, std::string_view call) const;
  DlLibrary lib_;
  int device_count_ = 0;
  std::string version_;
};

}  // namespace ktune::backend
