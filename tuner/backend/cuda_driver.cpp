// Built only with the CUDA headers (KTUNE_WITH_CUDA, see tuner/CMakeLists.txt).
#ifdef KTUNE_WITH_CUDA
#include "backend/cuda_driver.hpp"

#include <fmt/format.h>

#define KTUNE_STRINGIFY2(x) #x
#define KTUNE_STRINGIFY(x) KTUNE_STRINGIFY2(x)

namespace ktune::backend {
namespace {

// Errors after which the context is corrupt: every later call fails the same way, so the
// process that saw one must be discarded (the sweep runs candidates in worker processes).
bool poisons_context(CUresult r) {
  switch (r) {
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_NVLINK_UNCORRECTABLE:
    case CUDA_ERROR_CONTAINED:
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_TENSOR_MEMORY_LEAK: return true;
    default: return false;
  }
}

}  // namespace

CudaDriver::CudaDriver() : lib_(DlLibrary::open_first({"libcuda.so.1"})) {
  // KTUNE_STRINGIFY expands cuda.h's version macros, so the versioned symbol is resolved.
#define KTUNE_CUDA_LOAD(fn) fn = lib_.require<decltype(&::fn)>(KTUNE_STRINGIFY(fn));
  KTUNE_CUDA_DRIVER_FUNCTIONS(KTUNE_CUDA_LOAD)
#undef KTUNE_CUDA_LOAD
  if (CUresult r = cuInit(0); r != CUDA_SUCCESS) throw Unavailable("cuInit failed: " + describe(r));
  if (CUresult r = cuDriverGetVersion(&version_); r != CUDA_SUCCESS)
    throw Unavailable("cuDriverGetVersion failed: " + describe(r));
  if (CUresult r = cuDeviceGetCount(&device_count_); r != CUDA_SUCCESS)
    throw Unavailable("cuDeviceGetCount failed: " + describe(r));
  if (device_count_ == 0) throw Unavailable("no NVIDIA GPU: cuDeviceGetCount returned 0");
}

std::string CudaDriver::describe(CUresult r) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (cuGetErrorName(r, &name) != CUDA_SUCCESS) name = nullptr;
  if (cuGetErrorString(r, &text) != CUDA_SUCCESS) text = nullptr;
  return fmt::format("{} ({})", name ? name : fmt::format("CUresult {}", static_cast<int>(r)),
                     text ? text : "no description");
}

void CudaDriver::fail(CUresult r, std::string_view call) const {
  std::string message = fmt::format("{}: {}", call, describe(r));
  if (poisons_context(r)) throw DeviceFault(message);
  throw Error(message);
}

}  // namespace ktune::backend
#endif  // KTUNE_WITH_CUDA
