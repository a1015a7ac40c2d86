#pragma once
// NVRTC, loaded at run time: compiles CUDA C++ to a CUBIN without a driver or a device.
#include <nvrtc.h>

#include <string>
#include <string_view>

#include "backend/backend.hpp"
#include "backend/compiler_identity.hpp"
#include "backend/dl_library.hpp"

namespace ktune::backend {

// clang-format off
#define KTUNE_NVRTC_FUNCTIONS(X)                                                                   \
  X(nvrtcGetErrorString) X(nvrtcVersion) X(nvrtcCreateProgram) X(nvrtcDestroyProgram)              \
  X(nvrtcAddNameExpression) X(nvrtcCompileProgram) X(nvrtcGetProgramLogSize) X(nvrtcGetProgramLog) \
  X(nvrtcGetCUBINSize) X(nvrtcGetCUBIN) X(nvrtcGetLoweredName)
// clang-format on

// The constructor throws Unavailable saying which libraries it tried.
class NvrtcCompiler {
 public:
  NvrtcCompiler();

  const std::string& version() const noexcept { return version_; }  // "nvrtc 13.0"
  // What a code-object cache key must hold of this compiler (CompilerIdentity), on first call.
  const std::string& identity() const { return identity_.get(); }
  // Thread-safe: each call owns its program. Throws CompileError carrying the compiler log.
  CompileResult compile(const CompileRequest& req) const;

 private:
#define KTUNE_NVRTC_DECLARE(fn) decltype(&::fn) fn = nullptr;
  KTUNE_NVRTC_FUNCTIONS(KTUNE_NVRTC_DECLARE)
#undef KTUNE_NVRTC_DECLARE
  void check(nvrtcResult r, std::string_view call) const;
  std::string program_log(nvrtcProgram prog) const;

  DlLibrary lib_;
  std::string version_;
  CompilerIdentity identity_;
};

}  // namespace ktune::backend
