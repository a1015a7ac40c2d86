#include "sweep/process_compiler.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.hpp"
#include "sweep/protocol.hpp"

namespace ktune::sweep {
namespace {
constexpr std::chrono::seconds kStartTimeout{60};
constexpr std::chrono::seconds kCompileTimeout{900};
}  // namespace

ProcessCompiler::ProcessCompiler(std::string version, std::string identity, std::vector<std::string> worker_command,
                                 std::chrono::duration<double> timeout)
    : version_(std::move(version)),
      identity_(std::move(identity)),
      worker_command_(std::move(worker_command)),
      timeout_(timeout) {}

ProcessCompiler::~ProcessCompiler() = default;

std::unique_ptr<Supervisor> ProcessCompiler::take() const {
  {
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      auto s = std::move(idle_.back());
      idle_.pop_back();
      return s;
    }
  }
  return std::make_unique<Supervisor>(worker_command_, nlohmann::json{{"op", "hello"}}, kStartTimeout);
}

void ProcessCompiler::give_back(std::unique_ptr<Supervisor> s) const {
  std::lock_guard lock(mutex_);
  idle_.push_back(std::move(s));
}

backend::CompileResult ProcessCompiler::compile(const backend::CompileRequest& req) const {
  auto worker = take();
  try {
    worker->ensure_started();
  } catch (const Error& e) {
    throw jit::CompilerUnavailable(
        fmt::format("no compile worker starts ({}): {}", fmt::join(worker_command_, " "), e.what()));
  }
  auto out = worker->request(to_json(req), timeout_);
  give_back(std::move(worker));  // a dead worker is replaced on its next request
  if (out.kind == WorkerOutcome::Kind::timeout)
    throw CompileError(fmt::format("the compiler did not finish {} for {} within {:.0f} s", req.source_name, req.arch,
                                   timeout_.count()),
                       out.detail);
  if (out.kind == WorkerOutcome::Kind::fault)
    throw CompileError(fmt::format("the compiler crashed on {} for {}", req.source_name, req.arch), out.detail);
  return compile_result_from(out.reply);
}

std::unique_ptr<jit::Compiler> compiler_for(const backend::Backend& b, std::string_view arch,
                                            std::vector<std::string> worker_command) {
  if (!b.compiles_in_threads(arch))
    return std::make_unique<ProcessCompiler>(b.compiler_version(arch), b.compiler_identity(arch),
                                             std::move(worker_command), kCompileTimeout);
  return std::make_unique<jit::BackendCompiler>(b, arch);
}

}  // namespace ktune::sweep
