// Built only with the HIP headers (KTUNE_WITH_HIP, see tuner/CMakeLists.txt).
#ifdef KTUNE_WITH_HIP
#include <fmt/format.h>

#include "backend/builtin.hpp"
#include "backend/hip_context.hpp"
#include "backend/hip_runtime.hpp"
#include "backend/hiprtc_compiler.hpp"
#include "backend/lazy_load.hpp"

namespace ktune::backend {
namespace {

// "gfx90a:sramecc+:xnack-" -> "gfx90a": ktune compiles for the base target, which runs under
// either setting of the target features.
std::string base_arch(std::string_view gcn_arch_name) {
  return std::string(gcn_arch_name.substr(0, gcn_arch_name.find(':')));
}

class HipBackend final : public Backend {
 public:
  std::string_view name() const noexcept override { return "hip"; }
  bool handles_arch(std::string_view arch) const noexcept override { return has_arch_prefix(arch, kHipArchPrefix); }

  bool compiler_available() const noexcept override { return hiprtc_.get() != nullptr; }
  std::string compiler_unavailable_reason() const override { return hiprtc_.reason(); }
  std::string compiler_version() const override { return hiprtc_.require().version(); }
  std::string compiler_identity() const override { return hiprtc_.require().identity(); }
  std::string compiler_library() const override {
    const HiprtcCompiler* c = hiprtc_.get();
    return c ? c->library_file() : "";
  }
  // The runtime's, or without a device (which the runtime needs) the one hipRTC came with.
  std::string runtime_library() const override {
    if (const HipRuntime* h = runtime_.get()) return h->library_file();
    const HiprtcCompiler* c = hiprtc_.get();
    return c ? c->runtime_library_file() : "";
  }
  CompileResult compile(const CompileRequest& req) const override {
    if (!handles_arch(req.arch))
      throw Error(fmt::format("the hip backend compiles for gfx* targets, not '{}'", req.arch));
    return hiprtc_.require().compile(req);
  }

  bool available() const noexcept override { return runtime_.get() != nullptr; }
  std::string unavailable_reason() const override { return runtime_.reason(); }
  std::string driver_version() const override { return "hip runtime " + runtime_.require().version(); }
  int device_count() const override {
    const HipRuntime* h = runtime_.get();
    return h ? h->device_count() : 0;
  }
  DeviceInfo device_info(int ordinal) const override;
  std::unique_ptr<Context> open(int ordinal) const override {
    return open_hip_context(runtime_.require(), device_info(ordinal));
  }

 private:
  LazyLoad<HiprtcCompiler> hiprtc_;
  LazyLoad<HipRuntime> runtime_;
};

DeviceInfo HipBackend::device_info(int ordinal) const {
  const HipRuntime& h = runtime_.require();
  if (ordinal < 0 || ordinal >= h.device_count())
    throw Error(fmt::format("no HIP device {}: this machine has {}", ordinal, h.device_count()));
  hipDeviceProp_t props{};
  h.check(h.hipGetDeviceProperties(&props, ordinal), fmt::format("hipGetDeviceProperties({})", ordinal));

  DeviceInfo info;
  info.ordinal = ordinal;
  info.name = props.name;
  info.arch = base_arch(props.gcnArchName);
  info.compute_units = props.multiProcessorCount;
  info.warp_size = props.warpSize;
  info.l2_bytes = props.l2CacheSize;
  info.memory_bytes = static_cast<int64_t>(props.totalGlobalMem);
  info.shared_per_block = static_cast<int64_t>(props.sharedMemPerBlock);
  info.shared_per_block_optin = info.shared_per_block;  // AMD has no opt-in beyond the default
  info.clock_khz = props.clockRate;
  return info;
}

}  // namespace

Backend& hip_backend() {
  static HipBackend backend;
  return backend;
}

}  // namespace ktune::backend
#endif  // KTUNE_WITH_HIP
