// Built only with the CUDA headers (KTUNE_WITH_CUDA, see tuner/CMakeLists.txt).
#ifdef KTUNE_WITH_CUDA
#include "backend/nvrtc_compiler.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <iterator>

namespace ktune::backend {
namespace {

// The loader's search path first, then the toolkit's own folders, which are often not on it.
DlLibrary open_nvrtc() {
  const char* cuda_home = std::getenv("CUDA_HOME");
  std::string home_dir = cuda_home && *cuda_home ? std::string(cuda_home) + "/lib64/" : "/usr/local/cuda/lib64/";
  return DlLibrary::open_first({"libnvrtc.so.13", "libnvrtc.so", home_dir + "libnvrtc.so.13", home_dir + "libnvrtc.so",
                                "/usr/local/cuda/lib64/libnvrtc.so.13", "/usr/local/cuda/lib64/libnvrtc.so"});
}

// Passed to every compile besides the arch. No directory is searched for quoted includes: the
// templates are rendered into one source, and a header found beside it would be in no hash.
constexpr const char* kOptions[] = {"-std=c++17", "--no-source-include"};

}  // namespace

NvrtcCompiler::NvrtcCompiler() : lib_(open_nvrtc()), identity_(version_, kOptions, lib_) {
#define KTUNE_NVRTC_LOAD(fn) fn = lib_.require<decltype(&::fn)>(#fn);
  KTUNE_NVRTC_FUNCTIONS(KTUNE_NVRTC_LOAD)
#undef KTUNE_NVRTC_LOAD
  int major = 0, minor = 0;
  check(nvrtcVersion(&major, &minor), "nvrtcVersion");
  version_ = fmt::format("nvrtc {}.{}", major, minor);
}

void NvrtcCompiler::check(nvrtcResult r, std::string_view call) const {
  if (r != NVRTC_SUCCESS) throw Error(fmt::format("{}: {}", call, nvrtcGetErrorString(r)));
}

std::string NvrtcCompiler::program_log(nvrtcProgram prog) const {
  size_t size = 0;
  check(nvrtcGetProgramLogSize(prog, &size), "nvrtcGetProgramLogSize");
  std::string log(size, '\0');
  check(nvrtcGetProgramLog(prog, log.data()), "nvrtcGetProgramLog");
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

CompileResult NvrtcCompiler::compile(const CompileRequest& req) const {
  nvrtcProgram prog = nullptr;
  check(nvrtcCreateProgram(&prog, req.source.c_str(), req.source_name.c_str(), 0, nullptr, nullptr),
        "nvrtcCreateProgram");
  struct Destroy {
    const NvrtcCompiler& api;
    nvrtcProgram& prog;
    ~Destroy() { api.nvrtcDestroyProgram(&prog); }
  } destroy{*this, prog};

  for (const std::string& expr : req.name_expressions)
    check(nvrtcAddNameExpression(prog, expr.c_str()), "nvrtcAddNameExpression(" + expr + ")");

  std::vector<std::string> options = {"--gpu-architecture=" + req.arch};
  options.insert(options.end(), std::begin(kOptions), std::end(kOptions));
  options.insert(options.end(), req.options.begin(), req.options.end());
  std::vector<const char*> option_ptrs;
  for (const std::string& o : options) option_ptrs.push_back(o.c_str());

  nvrtcResult compiled = nvrtcCompileProgram(prog, static_cast<int>(option_ptrs.size()), option_ptrs.data());
  CompileResult result;
  result.log = program_log(prog);
  if (compiled != NVRTC_SUCCESS)
    throw CompileError(
        fmt::format("nvrtc could not compile {} for {}: {}", req.source_name, req.arch, nvrtcGetErrorString(compiled)),
        result.log);

  size_t size = 0;
  check(nvrtcGetCUBINSize(prog, &size), "nvrtcGetCUBINSize");
  if (size == 0)
    throw CompileError(
        fmt::format("nvrtc produced no CUBIN for '{}': name a real architecture such as sm_90a", req.arch), result.log);
  result.code.resize(size);
  check(nvrtcGetCUBIN(prog, result.code.data()), "nvrtcGetCUBIN");

  for (const std::string& expr : req.name_expressions) {
    const char* lowered = nullptr;
    check(nvrtcGetLoweredName(prog, expr.c_str(), &lowered), "nvrtcGetLoweredName(" + expr + ")");
    result.lowered_names.emplace_back(lowered);
  }
  return result;
}

}  // namespace ktune::backend
#endif  // KTUNE_WITH_CUDA
