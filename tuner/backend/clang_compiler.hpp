#pragma once
// The offline AMD compiler: Debian's clang and ld.lld of one LLVM version compile a rendered
// template to a code object (.hsaco) on a machine without a GPU or ROCm, as AMD's own stacks
// build the kernels they ship. It reaches the targets that LLVM version knows (clang-19: gfx90a and
// gfx942; clang-22: gfx950 too), where Debian's hipRTC (ROCm 5.2) stops at gfx90a. Device code
// uses Debian's HIP 5.2 headers and ROCm device libraries, as hipRTC does.
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "backend/backend.hpp"

namespace ktune::backend {

// The tool `name` of clang's LLVM version in clang's folder: "/usr/bin/clang-22" gives
// "/usr/bin/<name>-22", "/usr/lib/llvm-22/bin/clang" "/usr/lib/llvm-22/bin/<name>".
std::string beside_clang(const std::string& clang, std::string_view name);

class ClangCompiler {
 public:
  // Finds clang: $KTUNE_AMD_CLANG when set (a path or a name on PATH), else the newest of
  // clang-22 .. clang-19 on PATH; then ld.lld of the same version beside it, the HIP headers and
  // the device libraries. Throws Unavailable saying what is missing and how to install it.
  ClangCompiler();

  const std::string& version() const noexcept { return version_; }  // "clang 22.1.8"
  const std::string& path() const noexcept { return clang_; }       // "/usr/bin/clang-22"
  // A tool of the same LLVM beside clang: tool("llvm-objdump") is "/usr/bin/llvm-objdump-22".
  std::string tool(std::string_view name) const { return beside_clang(clang_, name); }
  // What a code-object cache key must hold of this compiler: clang's version line and path, the
  // options every compile passes, ld.lld's version and path, and hashes of the device libraries
  // and the HIP headers' version file (a Debian update of any of them misses the cache).
  const std::string& identity() const noexcept { return identity_; }
  // Empty when this clang generates code for `arch`; else why not ("clang 19.1.7 (/usr/bin/clang-19)
  // does not know gfx950").
  std::string cannot_build(std::string_view arch) const;
  // Thread-safe: each call compiles in a folder of its own. Throws CompileError with the log.
  CompileResult compile(const CompileRequest& req) const;

 private:
  std::vector<std::string> compile_command(const CompileRequest& req, const std::string& source,
                                           const std::string& assembly) const;

  std::string clang_, lld_, version_, version_line_, resource_dir_, device_libs_, identity_;
  std::set<std::string> targets_;  // the AMD GPUs this clang knows (--print-supported-cpus)
};

// The value of __oclc_ISA_version for a gfx target (major * 1000 + minor * 100 + stepping, the
// digits after "gfx" read as hex for the last two): gfx90a 9010, gfx942 9402, gfx950 9500.
int oclc_isa_version(std::string_view arch);

// The mangled symbol of each name expression, read from clang's assembly of a source to which
// name_expression_variables() was appended. Throws Error naming one it cannot find.
std::vector<std::string> lowered_names_from_assembly(std::string_view assembly, size_t count);
// The variables that make clang instantiate each name expression and name its symbol in the
// assembly: one `extern "C"` device constant per expression holding the kernel's address.
std::string name_expression_variables(const std::vector<std::string>& name_expressions);

}  // namespace ktune::backend
