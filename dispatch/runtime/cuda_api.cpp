// The CUDA driver API for the runtime, from libcuda.so.1 (cuda.h supplies only the types; its
// macros name the versioned symbols, which the table resolves).
#include <cuda.h>

#include <cstdint>

#include <fmt/format.h>

#include "backend/cuda_programmatic_launch.hpp"
#include "backend/dl_library.hpp"
#include "common/error.hpp"
#include "dispatch/runtime/gpu_api.hpp"

#define KTUNE_RT_STRINGIFY2(x) #x
#define KTUNE_RT_STRINGIFY(x) KTUNE_RT_STRINGIFY2(x)

namespace ktune::runtime {
namespace {

// (cuLaunchKernelEx, cuCtxGetId: drivers of CUDA 12.0 on, as the sm_90a code objects themselves need.)
// clang-format off
#define KTUNE_RT_CUDA_FUNCTIONS(X)                                                        \
  X(cuGetErrorName) X(cuInit) X(cuCtxGetCurrent) X(cuCtxGetId) X(cuCtxGetDevice) X(cuDeviceGetAttribute) \
  X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction) X(cuFuncSetAttribute)       \
  X(cuLaunchKernel) X(cuLaunchKernelEx)
// clang-format on

// Default dynamic shared memory per block; more needs the opt-in attribute.
constexpr size_t kDefaultSharedBytes = 48 * 1024;

class CudaApi final : public GpuApi {
 public:
  CudaApi() : lib_(backend::DlLibrary::open_first({"libcuda.so.1"})) {
#define KTUNE_RT_LOAD(fn) fn = lib_.require<decltype(&::fn)>(KTUNE_RT_STRINGIFY(fn));
    KTUNE_RT_CUDA_FUNCTIONS(KTUNE_RT_LOAD)
#undef KTUNE_RT_LOAD
    if (CUresult r = cuInit(0); r != CUDA_SUCCESS) throw Unavailable("cuInit failed: " + describe(r));
  }

  std::string_view name() const noexcept override { return "cuda"; }

  // The context's id, not its address: a context created after another was destroyed may be given
  // its address, and must not be handed the dead one's modules.
  const void* current() const override {
    CUcontext ctx = nullptr;
    check(cuCtxGetCurrent(&ctx), "cuCtxGetCurrent");
    if (ctx == nullptr)
      throw Unavailable("no current CUDA context on this thread (make the device's context current first, "
                        "e.g. cudaSetDevice or cuCtxSetCurrent)");
    unsigned long long id = 0;
    check(cuCtxGetId(ctx, &id), "cuCtxGetId");
    return reinterpret_cast<const void*>(static_cast<uintptr_t>(id) + 1);  // + 1: never null
  }

  Device describe(const void* id) const override {
    CUdevice dev = 0;
    check(cuCtxGetDevice(&dev), "cuCtxGetDevice");
    auto attribute = [&](CUdevice_attribute a) {
      int v = 0;
      check(cuDeviceGetAttribute(&v, a, dev), "cuDeviceGetAttribute");
      return v;
    };
    const int major = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    const int minor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    // As tuner/backend names it: the templates use Hopper's arch-specific instructions on 9.0.
    return {id, fmt::format("sm_{}{}{}", major, minor, major == 9 && minor == 0 ? "a" : ""),
            attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT), backend::has_programmatic_launches(major)};
  }

  void* load(std::string_view code) const override {
    CUmodule m = nullptr;
    check(cuModuleLoadData(&m, code.data()), "cuModuleLoadData");
    return m;
  }
  void unload(void* module) const noexcept override { cuModuleUnload(static_cast<CUmodule>(module)); }

  void* function(void* module, const std::string& symbol, size_t shared_bytes) const override {
    CUfunction f = nullptr;
    check(cuModuleGetFunction(&f, static_cast<CUmodule>(module), symbol.c_str()), "cuModuleGetFunction " + symbol);
    if (shared_bytes > kDefaultSharedBytes)
      check(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(shared_bytes)),
            "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
    return f;
  }

  void launch(void* function, const Launch& l, void* stream, void** args) const override {
    if (!l.overlaps_previous) {
      check(cuLaunchKernel(static_cast<CUfunction>(function), l.grid[0], l.grid[1], l.grid[2], l.block, 1, 1,
                           static_cast<unsigned>(l.shared_bytes), static_cast<CUstream>(stream), args, nullptr),
            "cuLaunchKernel");
      return;
    }
    const backend::ProgrammaticLaunch overlapping(l.grid, {l.block, 1, 1}, static_cast<unsigned>(l.shared_bytes),
                                                  static_cast<CUstream>(stream));
    check(cuLaunchKernelEx(&overlapping.config, static_cast<CUfunction>(function), args, nullptr),
          "cuLaunchKernelEx (overlapping the previous launch)");
  }

 private:
  std::string describe(CUresult r) const {
    const char* name = nullptr;
    if (cuGetErrorName(r, &name) != CUDA_SUCCESS || name == nullptr) return fmt::format("CUresult {}", int(r));
    return name;
  }
  void check(CUresult r, std::string_view call) const {
    if (r != CUDA_SUCCESS) throw Error(fmt::format("{} failed: {}", call, describe(r)));
  }

  backend::DlLibrary lib_;
#define KTUNE_RT_DECLARE(fn) decltype(&::fn) fn = nullptr;
  KTUNE_RT_CUDA_FUNCTIONS(KTUNE_RT_DECLARE)
#undef KTUNE_RT_DECLARE
};

}  // namespace

std::unique_ptr<GpuApi> cuda_api() { return std::make_unique<CudaApi>(); }

}  // namespace ktune::runtime
