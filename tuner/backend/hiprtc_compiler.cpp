// Built only with the HIP headers (KTUNE_WITH_HIP, see tuner/CMakeLists.txt).
#ifdef KTUNE_WITH_HIP
#include "backend/hiprtc_compiler.hpp"

#include <fmt/format.h>

#include <iterator>
#include <mutex>
#include <vector>

#include "backend/hip_runtime.hpp"
#include "backend/rocm_libraries.hpp"

namespace ktune::backend {

namespace {

// Passed to every compile besides the arch.
constexpr const char* kOptions[] = {"-O3", "-std=c++17"};

// Debian's ROCm 5.2 has hipRTC inside libamdhip64 (nothing to open); later ROCm moved it to libhiprtc,
// looked for beside the runtime first.
DlLibrary open_separate_hiprtc(const DlLibrary& amdhip) {
  if (amdhip.find("hiprtcCreateProgram") != nullptr) return {};
  return DlLibrary::open_first(hiprtc_candidates(rocm_root(), amdhip.file()));
}

}  // namespace

HiprtcCompiler::HiprtcCompiler()
    : amdhip_(open_amdhip64()), rtc_(open_separate_hiprtc(amdhip_)), identity_(version_, kOptions, rtc()) {
#define KTUNE_HIPRTC_LOAD(fn) fn = rtc().require<decltype(&::fn)>(#fn);
  KTUNE_HIPRTC_FUNCTIONS(KTUNE_HIPRTC_LOAD)
#undef KTUNE_HIPRTC_LOAD
  // hiprtcVersion reports the compiler front end (9.0 on ROCm 5.2), not the ROCm release that
  // decides the generated code, so the runtime's version names the compiler instead. It needs
  // no GPU.
  auto runtime_version = amdhip_.require<decltype(&::hipRuntimeGetVersion)>("hipRuntimeGetVersion");
  int packed = 0;
  if (hipError_t e = runtime_version(&packed); e != hipSuccess)
    throw Unavailable(fmt::format("hipRuntimeGetVersion failed with error {}", static_cast<int>(e)));
  version_ = "hiprtc " + hip_version_string(packed);
  rocm_major_ = packed / 10000000;
  rocm_minor_ = packed / 100000 % 100;
}

namespace {

// The first ROCm release whose compiler targets an arch, where that is later than the ROCm 5.2
// Debian ships: MI300X (gfx942) is supported from ROCm 6.0, MI350X / MI355X (gfx950) from 7.0.
struct FirstRelease {
  std::string_view arch;
  int major, minor;
};
constexpr FirstRelease kFirstRelease[] = {{"gfx942", 6, 0}, {"gfx950", 7, 0}};

}  // namespace

std::string HiprtcCompiler::cannot_build(std::string_view arch) const {
  for (const FirstRelease& f : kFirstRelease)
    if (f.arch == arch && (rocm_major_ < f.major || (rocm_major_ == f.major && rocm_minor_ < f.minor)))
      return fmt::format("{} is older than ROCm {}.{}, the first to compile for {}", version_, f.major, f.minor, arch);
  return {};
}

namespace {

// hipRTC 5.2 compiles a temporary copy of the source and its log names that copy
// ("/tmp/comgr-0ae6b7/input/CompileSource:3:14: error: ..."); the log names the caller's
// source instead, as NVRTC's does.
std::string name_source_in_log(std::string log, const std::string& source_name) {
  static constexpr std::string_view kTemporary = "CompileSource";
  for (size_t at = log.find(kTemporary); at != std::string::npos; at = log.find(kTemporary, at)) {
    size_t begin = log.find_last_of(" \t\n", at);
    begin = begin == std::string::npos ? 0 : begin + 1;
    log.replace(begin, at + kTemporary.size() - begin, source_name);
    at = begin + source_name.size();
  }
  return log;
}

}  // namespace

void HiprtcCompiler::check(hiprtcResult r, std::string_view call) const {
  if (r != HIPRTC_SUCCESS) throw Error(fmt::format("{}: {}", call, hiprtcGetErrorString(r)));
}

std::string HiprtcCompiler::program_log(hiprtcProgram prog) const {
  size_t size = 0;
  check(hiprtcGetProgramLogSize(prog, &size), "hiprtcGetProgramLogSize");
  std::string log(size, '\0');
  if (size > 0) check(hiprtcGetProgramLog(prog, log.data()), "hiprtcGetProgramLog");
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

CompileResult HiprtcCompiler::compile(const CompileRequest& req) const {
  // hipRTC (seen with ROCm 5.2) crashes when two threads compile at once, and serialises its
  // compiles internally anyway: one compile at a time per process. Parallel compilation runs in
  // worker processes instead (tuner/sweep/process_compiler).
  static std::mutex one_at_a_time;
  const std::lock_guard<std::mutex> lock(one_at_a_time);
  hiprtcProgram prog = nullptr;
  check(hiprtcCreateProgram(&prog, req.source.c_str(), req.source_name.c_str(), 0, nullptr, nullptr),
        "hiprtcCreateProgram");
  struct Destroy {
    const HiprtcCompiler& api;
    hiprtcProgram& prog;
    ~Destroy() { api.hiprtcDestroyProgram(&prog); }
  } destroy{*this, prog};

  for (const std::string& expr : req.name_expressions)
    check(hiprtcAddNameExpression(prog, expr.c_str()), "hiprtcAddNameExpression(" + expr + ")");

  std::vector<std::string> options = {"--offload-arch=" + req.arch};
  options.insert(options.end(), std::begin(kOptions), std::end(kOptions));
  options.insert(options.end(), req.options.begin(), req.options.end());
  std::vector<const char*> option_ptrs;
  for (const std::string& o : options) option_ptrs.push_back(o.c_str());

  hiprtcResult compiled = hiprtcCompileProgram(prog, static_cast<int>(option_ptrs.size()), option_ptrs.data());
  CompileResult result;
  result.log = name_source_in_log(program_log(prog), req.source_name);
  if (compiled != HIPRTC_SUCCESS)
    throw CompileError(fmt::format("hiprtc could not compile {} for {}: {}", req.source_name, req.arch,
                                   hiprtcGetErrorString(compiled)),
                       result.log);

  size_t size = 0;
  check(hiprtcGetCodeSize(prog, &size), "hiprtcGetCodeSize");
  if (size == 0) throw Error(fmt::format("hiprtc produced an empty code object for {}", req.arch));
  result.code.resize(size);
  check(hiprtcGetCode(prog, result.code.data()), "hiprtcGetCode");

  for (const std::string& expr : req.name_expressions) {
    const char* lowered = nullptr;
    check(hiprtcGetLoweredName(prog, expr.c_str(), &lowered), "hiprtcGetLoweredName(" + expr + ")");
    result.lowered_names.emplace_back(lowered);
  }
  return result;
}

}  // namespace ktune::backend
#endif  // KTUNE_WITH_HIP
