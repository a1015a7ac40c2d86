// Built only with the HIP headers (KTUNE_WITH_HIP, see tuner/CMakeLists.txt).
#ifdef KTUNE_WITH_HIP
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backend/amd_compiler_choice.hpp"
#include "backend/builtin.hpp"
#include "backend/clang_compiler.hpp"
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

  bool compiler_available(std::string_view arch) const noexcept override {
    try {
      return choose(arch).why_not.empty();
    } catch (...) {
      return false;
    }
  }
  std::string compiler_unavailable_reason(std::string_view arch) const override { return choose(arch).why_not; }
  std::string compiler_version(std::string_view arch) const override {
    const Choice c = require(arch);
    return c.hiprtc ? c.hiprtc->version() : c.clang->version();
  }
  std::string compiler_identity(std::string_view arch) const override {
    const Choice c = require(arch);
    return c.hiprtc ? c.hiprtc->identity() : c.clang->identity();
  }
  bool compiles_in_threads(std::string_view arch) const override { return require(arch).clang != nullptr; }
  std::vector<CompilerStatus> compilers(std::string_view arch) const override;
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
    const Choice c = require(req.arch);
    return c.hiprtc ? c.hiprtc->compile(req) : c.clang->compile(req);
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
  // The compiler for an arch: one of the two, or why neither (the reasons of both).
  struct Choice {
    const HiprtcCompiler* hiprtc = nullptr;
    const ClangCompiler* clang = nullptr;
    std::string why_not;
  };
  Choice choose(std::string_view arch) const;
  Choice require(std::string_view arch) const {
    Choice c = choose(arch);
    if (!c.why_not.empty()) throw Unavailable(c.why_not);
    return c;
  }
  std::string hiprtc_why_not(std::string_view arch) const {
    const HiprtcCompiler* h = hiprtc_.get();
    return h ? h->cannot_build(arch) : hiprtc_.reason();
  }
  std::string clang_why_not(std::string_view arch) const {
    const ClangCompiler* c = clang_.get();
    return c ? c->cannot_build(arch) : clang_.reason();
  }

  LazyLoad<HiprtcCompiler> hiprtc_;
  LazyLoad<ClangCompiler> clang_;
  LazyLoad<HipRuntime> runtime_;
};

HipBackend::Choice HipBackend::choose(std::string_view arch) const {
  const AmdCompilerChoice preferred = amd_compiler_choice();
  Choice c;
  std::vector<std::string> reasons;
  if (preferred != AmdCompilerChoice::clang) {
    const std::string why = hiprtc_why_not(arch);
    if (why.empty()) {
      c.hiprtc = hiprtc_.get();
      return c;
    }
    reasons.push_back("hiprtc: " + why);
  }
  if (preferred != AmdCompilerChoice::hiprtc) {
    const std::string why = clang_why_not(arch);
    if (why.empty()) {
      c.clang = clang_.get();
      return c;
    }
    reasons.push_back("clang: " + why);
  }
  c.why_not =
      fmt::format("no {}compiler builds {}: {}",
                  preferred == AmdCompilerChoice::automatic ? std::string()
                                                            : fmt::format("{} (--amd-compiler) ", to_string(preferred)),
                  arch, fmt::join(reasons, "; "));
  return c;
}

std::vector<CompilerStatus> HipBackend::compilers(std::string_view arch) const {
  const Choice chosen = choose(arch);
  const HiprtcCompiler* h = hiprtc_.get();
  const ClangCompiler* c = clang_.get();
  return {{"hiprtc", h ? h->version() : std::string(), hiprtc_why_not(arch), chosen.hiprtc != nullptr},
          {"clang", c ? fmt::format("{} ({})", c->version(), c->path()) : std::string(), clang_why_not(arch),
           chosen.clang != nullptr}};
}

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
