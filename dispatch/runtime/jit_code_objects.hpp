#pragma once
// Code objects compiled at run time: a winner of the KTUNE_DB override that no package holds is
// compiled at its first launch with the tuner's JIT (NVRTC for sm_*, hipRTC for gfx*) from the
// templates built into the library, once per process per (arch, name expressions) however many
// threads ask at once, and kept like a packaged code object. A failure is kept too (compiling is
// deterministic): every later launch of that kernel gets the same error without compiling again.
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "dispatch/runtime/choice.hpp"
#include "dispatch/runtime/family.hpp"
#include "jit/compiler.hpp"

namespace ktune::runtime {

// What compiles for an arch; throws Unavailable (no NVRTC / hipRTC) or Error.
using JitCompilerFor = std::function<std::shared_ptr<const jit::Compiler>(std::string_view arch)>;

// The tuner's backend compiler of the arch (backend::for_arch).
JitCompilerFor backend_compilers();

// A kernel that could not be compiled at run time: the compiler's message and the log's beginning.
class JitFailed : public Error {
 public:
  using Error::Error;
};

class JitCodeObjects {
 public:
  explicit JitCodeObjects(JitCompilerFor compiler_for) : compiler_for_(std::move(compiler_for)) {}

  // The code object of `kernel` for `arch`, compiled on the first call. `template_hash`: the hash
  // the override table was validated against; the templates built in must render to it. Throws
  // JitFailed. `kernel` is remembered by address: it must outlive this object, as the engine's
  // override tables (which own their KernelChoices in a deque) do.
  const CodeObject& get(const RuntimeFamily& family, std::string_view arch, const KernelChoice& kernel,
                        std::string_view template_hash);

  size_t compiles() const;  // programs compiled (or failed) so far

 private:
  struct Entry {
    std::once_flag once;
    std::string package, code, error;
    std::vector<std::string> names, symbols;
    std::vector<const char*> name_ptrs, symbol_ptrs;
    CodeObject object{};
  };
  void compile(Entry& e, const RuntimeFamily& family, std::string_view arch, std::string_view template_hash) const;

  JitCompilerFor compiler_for_;
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, std::vector<std::string>>, std::unique_ptr<Entry>> entries_;  // per program
  std::map<std::pair<const KernelChoice*, std::string>, Entry*> by_kernel_;  // (kernel, arch) -> its program
};

}  // namespace ktune::runtime
