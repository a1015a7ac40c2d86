#pragma once
// hipRTC, loaded at run time: compiles HIP C++ to an AMD code object without a GPU.
#include <hip/hiprtc.h>

#include <string>
#include <string_view>

#include "backend/backend.hpp"
#include "backend/compiler_identity.hpp"
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
  // Empty when this hipRTC's ROCm release generates code for `arch`; else why not.
  std::string cannot_build(std::string_view arch) const;
  // What a code-object cache key must hold of this compiler (CompilerIdentity), on first call.
  const std::string& identity() const { return identity_.get(); }
  std::string library_file() const { return rtc().file(); }            // the library that compiles
  std::string runtime_library_file() const { return amdhip_.file(); }  // the HIP runtime it came with
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
  // The library that compiles: rtc_ where one was opened, else the HIP runtime.
  const DlLibrary& rtc() const noexcept { return rtc_.path().empty() ? amdhip_ : rtc_; }
  std::string version_;
  int rocm_major_ = 0, rocm_minor_ = 0;  // the ROCm release, from the runtime's version
  CompilerIdentity identity_;
};

}  // namespace ktune::backend
