#pragma once
// The compile service: turns (key, config) candidates of one family into code objects, in
// parallel, through the on-disk cache. Candidates that need the same template instances share
// one compile. A failure (compiler error, crash reported as an exception) is confined to the
// candidates that need that program.
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "common/error.hpp"
#include "common/params.hpp"
#include "jit/cache.hpp"
#include "kernels/family.hpp"

namespace ktune::jit {

// The compiler cannot run at all (its worker process does not start): not the program's fault,
// so compile_candidates stops and throws it rather than recording a compile error for each
// program (a sweep would keep those for good, and --resume would not retry them).
class CompilerUnavailable : public Error {
 public:
  using Error::Error;
};

// What compiles one request. Must be callable from several threads at once.
class Compiler {
 public:
  virtual ~Compiler() = default;
  virtual std::string version() const = 0;  // recorded with the results
  // The cache key's part (Backend::compiler_identity); the version where nothing else matters.
  virtual std::string identity() const { return version(); }
  // Throws CompileError (the program's), CompilerUnavailable (the compiler's).
  virtual backend::CompileResult compile(const backend::CompileRequest& req) const = 0;
};

// Compiles for one arch in this process with the compiler a backend chooses for it (NVRTC, the
// offline clang; hipRTC where it runs in this process).
class BackendCompiler final : public Compiler {
 public:
  BackendCompiler(const backend::Backend& b, std::string_view arch) : backend_(b), arch_(arch) {}
  std::string version() const override { return backend_.compiler_version(arch_); }
  std::string identity() const override { return backend_.compiler_identity(arch_); }
  backend::CompileResult compile(const backend::CompileRequest& req) const override { return backend_.compile(req); }

 private:
  const backend::Backend& backend_;
  std::string arch_;
};

struct CompileJob {
  Params key;
  Params config;
};

struct CompileOutcome {
  std::vector<std::string> name_expressions;
  std::shared_ptr<const backend::CompileResult> result;  // null when the program did not compile
  std::string error;                                     // when result is null: what failed, then the compiler log
  bool cache_hit = false;
  double seconds = 0;  // the program's compile, or its load from the cache (shared by its candidates)
  bool ok() const noexcept { return result != nullptr; }
};

// Entries the code-object cache could not store. Nothing is lost but time (the next run compiles
// them again), which is why the commands say so rather than fail: a cache directory on a full or
// read-only disk would otherwise cost every run its compiles without a word.
struct CacheWriteFailures {
  size_t count = 0;
  std::string first;  // the first failure's reason (CodeCache::store)
  void add(const CacheWriteFailures& more);
  // "" when none failed; else a warning line naming the count, the cache and the first reason.
  std::string warning(const CodeCache& cache) const;
};

struct CompileStats {
  size_t programs = 0;    // distinct sets of name expressions
  size_t cache_hits = 0;  // programs loaded from the cache
  size_t failed_programs = 0;
  CacheWriteFailures cache_writes_failed;
  double seconds = 0;
};

struct CompileSettings {
  std::string arch;
  std::vector<std::string> options;  // extra compiler flags
  int jobs = 0;                      // compiling threads; 0: one per core
  const CodeCache* cache = nullptr;  // null: compile everything, store nothing
  // Called after each program (from compiling threads, one call at a time).
  std::function<void(size_t done, size_t total)> on_progress;
};

struct CompileBatch {
  std::vector<CompileOutcome> outcomes;  // one per job, in the order of the jobs
  CompileStats stats;
};

// Renders the family's template once and compiles every distinct program the jobs need.
// Throws Error only for failures that concern every job (the template cannot be rendered).
CompileBatch compile_candidates(const Family& family, std::span<const CompileJob> jobs, const Compiler& compiler,
                                const CompileSettings& settings);

}  // namespace ktune::jit
