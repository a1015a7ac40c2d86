// The HIP runtime for the runtime library, from libamdhip64 (hip_runtime_api.h supplies only
// the types, compiled with __HIP_PLATFORM_AMD__ and without hipcc).
#include <hip/hip_runtime_api.h>

#include <fmt/format.h>

#include "backend/hip_runtime.hpp"
#include "common/error.hpp"
#include "dispatch/runtime/gpu_api.hpp"

namespace ktune::runtime {
namespace {

// clang-format off
#define KTUNE_RT_HIP_FUNCTIONS(X)                                                               \
  X(hipGetErrorName) X(hipGetDeviceCount) X(hipGetDevice) X(hipGetDeviceProperties)              \
  X(hipModuleLoadData) X(hipModuleUnload) X(hipModuleGetFunction) X(hipModuleLaunchKernel)
// clang-format on

// For calls in noexcept paths (unload) whose failure has no one to hear it: hipError_t is
// warn_unused_result, which a cast to void does not silence in GCC.
void ignore(hipError_t) noexcept {}

class HipApi final : public GpuApi {
 public:
  HipApi() : lib_(backend::open_amdhip64()) {
#define KTUNE_RT_LOAD(fn) fn = lib_.require<decltype(&::fn)>(#fn);
    KTUNE_RT_HIP_FUNCTIONS(KTUNE_RT_LOAD)
#undef KTUNE_RT_LOAD
    int count = 0;
    if (hipGetDeviceCount(&count) != hipSuccess || count == 0)
      throw Unavailable("no AMD GPU: hipGetDeviceCount found none");
  }

  std::string_view name() const noexcept override { return "hip"; }

  // Module handles belong to a device: the id is ordinal + 1, so that device 0 is not null.
  const void* current() const override {
    int ordinal = 0;
    check(hipGetDevice(&ordinal), "hipGetDevice");
    return reinterpret_cast<const void*>(static_cast<uintptr_t>(ordinal) + 1);
  }

  Device describe(const void* id) const override {
    const int ordinal = static_cast<int>(reinterpret_cast<uintptr_t>(id) - 1);
    hipDeviceProp_t props{};
    check(hipGetDeviceProperties(&props, ordinal), "hipGetDeviceProperties");
    const std::string_view arch = props.gcnArchName;  // "gfx90a:sramecc+:xnack-": the target is before ':'
    return {id, std::string(arch.substr(0, arch.find(':'))), props.multiProcessorCount};
  }

  void* load(std::string_view code) const override {
    hipModule_t m = nullptr;
    check(hipModuleLoadData(&m, code.data()), "hipModuleLoadData");
    return m;
  }
  void unload(void* module) const noexcept override { ignore(hipModuleUnload(static_cast<hipModule_t>(module))); }

  // AMD has no opt-in shared memory beyond the default limit: nothing to raise.
  void* function(void* module, const std::string& symbol, size_t) const override {
    hipFunction_t f = nullptr;
    check(hipModuleGetFunction(&f, static_cast<hipModule_t>(module), symbol.c_str()), "hipModuleGetFunction " + symbol);
    return f;
  }

  // (Device::overlapping_launches is false here: every launch waits for the one ahead.)
  void launch(void* function, const Launch& l, void* stream, void** args) const override {
    check(hipModuleLaunchKernel(static_cast<hipFunction_t>(function), l.grid[0], l.grid[1], l.grid[2], l.block, 1, 1,
                                static_cast<unsigned>(l.shared_bytes), static_cast<hipStream_t>(stream), args, nullptr),
          "hipModuleLaunchKernel");
  }

 private:
  void check(hipError_t e, std::string_view call) const {
    if (e != hipSuccess) throw Error(fmt::format("{} failed: {}", call, hipGetErrorName(e)));
  }

  backend::DlLibrary lib_;
#define KTUNE_RT_DECLARE(fn) decltype(&::fn) fn = nullptr;
  KTUNE_RT_HIP_FUNCTIONS(KTUNE_RT_DECLARE)
#undef KTUNE_RT_DECLARE
};

}  // namespace

std::unique_ptr<GpuApi> hip_api() { return std::make_unique<HipApi>(); }

}  // namespace ktune::runtime
