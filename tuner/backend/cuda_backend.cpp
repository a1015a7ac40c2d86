// Built only with the CUDA headers (KTUNE_WITH_CUDA, see tuner/CMakeLists.txt).
#ifdef KTUNE_WITH_CUDA
#include <fmt/format.h>

#include "backend/builtin.hpp"
#include "backend/cuda_context.hpp"
#include "backend/cuda_driver.hpp"
#include "backend/cuda_programmatic_launch.hpp"
#include "backend/lazy_load.hpp"
#include "backend/nvrtc_compiler.hpp"

namespace ktune::backend {
namespace {

// "sm_<major><minor>", with the "a" suffix on 9.0: ktune's templates use Hopper's
// arch-specific instructions (wgmma, bulk tensor copies), which only sm_90a code may contain.
std::string cuda_arch(int major, int minor) {
  return fmt::format("sm_{}{}{}", major, minor, major == 9 && minor == 0 ? "a" : "");
}

class CudaBackend final : public Backend {
 public:
  std::string_view name() const noexcept override { return "cuda"; }
  bool handles_arch(std::string_view arch) const noexcept override { return has_arch_prefix(arch, kCudaArchPrefix); }

  // NVRTC is the one compiler, for every sm_* target.
  bool compiler_available(std::string_view) const noexcept override { return nvrtc_.get() != nullptr; }
  std::string compiler_unavailable_reason(std::string_view) const override { return nvrtc_.reason(); }
  std::string compiler_version(std::string_view) const override { return nvrtc_.require().version(); }
  std::string compiler_identity(std::string_view) const override { return nvrtc_.require().identity(); }
  bool compiles_in_threads(std::string_view) const override { return true; }
  std::vector<CompilerStatus> compilers(std::string_view) const override {
    const NvrtcCompiler* nvrtc = nvrtc_.get();
    return {
        {"nvrtc", nvrtc ? nvrtc->version() : std::string(), nvrtc ? std::string() : nvrtc_.reason(), nvrtc != nullptr}};
  }
  CompileResult compile(const CompileRequest& req) const override {
    if (!handles_arch(req.arch))
      throw Error(fmt::format("the cuda backend compiles for sm_* targets, not '{}'", req.arch));
    return nvrtc_.require().compile(req);
  }

  bool available() const noexcept override { return driver_.get() != nullptr; }
  std::string unavailable_reason() const override { return driver_.reason(); }
  std::string driver_version() const override {
    int v = driver_.require().version();
    return fmt::format("cuda driver {}.{}", v / 1000, v % 1000 / 10);
  }
  int device_count() const override {
    const CudaDriver* d = driver_.get();
    return d ? d->device_count() : 0;
  }
  DeviceInfo device_info(int ordinal) const override;
  std::unique_ptr<Context> open(int ordinal) const override {
    return open_cuda_context(driver_.require(), device_info(ordinal));
  }

 private:
  LazyLoad<NvrtcCompiler> nvrtc_;
  LazyLoad<CudaDriver> driver_;
};

DeviceInfo CudaBackend::device_info(int ordinal) const {
  const CudaDriver& d = driver_.require();
  if (ordinal < 0 || ordinal >= d.device_count())
    throw Error(fmt::format("no CUDA device {}: this machine has {}", ordinal, d.device_count()));
  CUdevice dev = 0;
  d.check(d.cuDeviceGet(&dev, ordinal), fmt::format("cuDeviceGet({})", ordinal));
  auto attribute = [&](CUdevice_attribute a, const char* what) {
    int value = 0;
    d.check(d.cuDeviceGetAttribute(&value, a, dev), fmt::format("cuDeviceGetAttribute({})", what));
    return value;
  };
  char name[256] = {};
  d.check(d.cuDeviceGetName(name, sizeof name, dev), "cuDeviceGetName");
  size_t memory = 0;
  d.check(d.cuDeviceTotalMem(&memory, dev), "cuDeviceTotalMem");

  DeviceInfo info;
  info.ordinal = ordinal;
  info.name = name;
  const int major = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "COMPUTE_CAPABILITY_MAJOR");
  info.arch = cuda_arch(major, attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "COMPUTE_CAPABILITY_MINOR"));
  info.overlapping_launches = has_programmatic_launches(major);
  info.compute_units = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "MULTIPROCESSOR_COUNT");
  info.warp_size = attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE, "WARP_SIZE");
  info.l2_bytes = attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2_CACHE_SIZE");
  info.memory_bytes = static_cast<int64_t>(memory);
  info.shared_per_block = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, "MAX_SHARED_MEMORY_PER_BLOCK");
  info.shared_per_block_optin =
      attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN");
  info.clock_khz = attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE, "CLOCK_RATE");
  return info;
}

}  // namespace

Backend& cuda_backend() {
  static CudaBackend backend;
  return backend;
}

}  // namespace ktune::backend
#endif  // KTUNE_WITH_CUDA
