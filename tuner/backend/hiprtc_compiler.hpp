#pragma once
// hipRTC, loaded at run time: compiles HIP C++ to an AMD code object without a GPU.
#include <hip/hiprtc.h>

#include <string>
#include <string_view>

#include "backend/backend.hpp"
#include "backend/dl_library.hpp"

namespace ktune::backend {

// clang-format off
#define KTUNE_HIPRTC_FUNCTIONS(X)                                                                   \
  X(hiprtcGetErrorString) X(hiprtcCreateProgram) X(hiprtcDestroyProgram) X(hiprtcAddNameExpression) \
  X(hiprtcCompileProgram) X(hiprtcGetProgramLogSize) X(hiprtcGetProgramLog) X(hiprtcGetCodeSize)    \
  X(hiprtcGetCode) X(hiprtcGetLoweredName)
// clang-format on

// The constructor throws Unavailable saying which libraries it tried.
class HiprtcCompiler {
 public:
  HiprtcCompiler();

  const std::string& version() const noexcept { return version_; }  // "hiprtc 5.2.21153"
  // What a code-object cache key must hold of this compiler: the version, the options every
  // compile passes, and a hash of the library that compiles.
  const std::string& identity() const noexcept { return identity_; }
  // Each call owns its program. Throws CompileError carrying the compiler log.
  CompileResult compile(const CompileRequest& req) const;

 private:
#define KTUNE_HIPRTC_DECLARE(fn) decltype(&::fn) fn = nullptr;
  KTUNE_HIPRTC_FUNCTIONS(KTUNE_HIPRTC_DECLARE)
#undef KTUNE_HIPRTC_DECLARE
  void check(hiprtcResult r, std::string_view call) const;
  std::string program_log(hiprtcProgram prog) const;

  DlLibrary amdhip_;  // the HIP runtime: its version names the compiler
  DlLibrary rtc_;     // libhiprtc where hipRTC is a library of its own (ROCm 6 and later)
  std::string version_;
  std::string identity_;
};

}  // namespace ktune::backend
