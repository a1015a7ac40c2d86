// Built only with the HIP headers (KTUNE_WITH_HIP, see tuner/CMakeLists.txt).
#ifdef KTUNE_WITH_HIP
#include "backend/hip_runtime.hpp"

#include <fmt/format.h>

#include "backend/rocm_libraries.hpp"

namespace ktune::backend {
namespace {

// Errors after which the device state is corrupt. (A GPU page fault on ROCm usually aborts the
// whole process inside the HSA runtime instead; the sweep's worker processes absorb that.)
bool poisons_device(hipError_t e) {
  switch (e) {
    case hipErrorECCNotCorrectable:
    case hipErrorIllegalAddress:
    case hipErrorLaunchTimeOut:
    case hipErrorAssert:
    case hipErrorLaunchFailure: return true;
    default: return false;
  }
}

}  // namespace

DlLibrary open_amdhip64() { return DlLibrary::open_first(amdhip64_candidates(rocm_root())); }

std::string hip_version_string(int packed) {
  return fmt::format("{}.{}.{}", packed / 10000000, packed / 100000 % 100, packed % 100000);
}

HipRuntime::HipRuntime() : lib_(open_amdhip64()) {
#define KTUNE_HIP_LOAD(fn) fn = lib_.require<decltype(&::fn)>(#fn);
  KTUNE_HIP_RUNTIME_FUNCTIONS(KTUNE_HIP_LOAD)
#undef KTUNE_HIP_LOAD
  hipMalloc = lib_.require<decltype(hipMalloc)>("hipMalloc");
  int packed = 0;
  if (hipError_t e = hipRuntimeGetVersion(&packed); e != hipSuccess)
    throw Unavailable("hipRuntimeGetVersion failed: " + describe(e));
  version_ = hip_version_string(packed);
  // hipGetDeviceCount initialises the runtime; without a GPU it fails (hipErrorNoDevice).
  hipError_t e = hipGetDeviceCount(&device_count_);
  if (e != hipSuccess) device_count_ = 0;
  if (device_count_ == 0)
    throw Unavailable(fmt::format("no AMD GPU: hipGetDeviceCount returned {}{}", device_count_,
                                  e == hipSuccess ? "" : " with " + describe(e)));
}

std::string HipRuntime::describe(hipError_t e) const {
  const std::string name = hipGetErrorName(e), text = hipGetErrorString(e);
  return text == name ? name : fmt::format("{} ({})", name, text);  // ROCm 5.2 gives the name twice
}

void HipRuntime::fail(hipError_t e, std::string_view call) const {
  std::string message = fmt::format("{}: {}", call, describe(e));
  if (poisons_device(e)) throw DeviceFault(message);
  throw Error(message);
}

}  // namespace ktune::backend
#endif  // KTUNE_WITH_HIP
