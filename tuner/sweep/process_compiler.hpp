#pragma once
// Compiling in worker processes (`ktune worker` without a device), one request at a time each.
// Needed where a JIT must not run on several threads of one process: hipRTC of ROCm 5.2
// crashes in hiprtcAddNameExpression when two threads compile at once (and serialises
// compiles internally anyway), so parallel hipRTC compiles need processes. It also confines a
// compiler crash to one candidate's program.
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "jit/compiler.hpp"
#include "sweep/supervisor.hpp"

namespace ktune::sweep {

class ProcessCompiler final : public jit::Compiler {
 public:
  // `worker_command` starts a compile worker; `timeout` bounds one compile.
  // `version` and `identity`: those of the backend the workers compile with.
  ProcessCompiler(std::string version, std::string identity, std::vector<std::string> worker_command,
                  std::chrono::duration<double> timeout);
  ~ProcessCompiler() override;
  std::string version() const override { return version_; }
  std::string identity() const override { return identity_; }
  // Throws CompileError for a compiler error, crash or overrun; jit::CompilerUnavailable when no
  // worker starts.
  backend::CompileResult compile(const backend::CompileRequest& req) const override;

 private:
  std::unique_ptr<Supervisor> take() const;  // an idle worker, or a new one
  void give_back(std::unique_ptr<Supervisor> s) const;

  std::string version_, identity_;
  std::vector<std::string> worker_command_;
  std::chrono::duration<double> timeout_;
  mutable std::mutex mutex_;
  mutable std::vector<std::unique_ptr<Supervisor>> idle_;
};

// The compiler to use for `arch` on `b`: the backend itself on compiling threads where its
// compiler is thread-safe (NVRTC, clang), compile workers started with `worker_command` where it
// is not (hipRTC).
std::unique_ptr<jit::Compiler> compiler_for(const backend::Backend& b, std::string_view arch,
                                            std::vector<std::string> worker_command);

}  // namespace ktune::sweep
