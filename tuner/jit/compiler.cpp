#include "jit/compiler.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "common/error.hpp"
#include "jit/templates.hpp"

namespace ktune::jit {
namespace {

struct Program {
  backend::CompileRequest request;
  std::shared_ptr<const backend::CompileResult> result;
  std::string error;
  bool cache_hit = false;
  double seconds = 0;                // compiling or loading it
  std::string cache_write_error;     // CodeCache::store's reason, when it failed
  std::string compiler_unavailable;  // CompilerUnavailable's message: the batch stops
};

// Compiles one program; never throws, so that one bad program cannot stop the others.
void build(Program& p, const Compiler& compiler, const std::string& compiler_identity, const CodeCache* cache) {
  try {
    std::string key;
    if (cache) {
      key = CodeCache::key(p.request, compiler_identity);
      if (auto hit = cache->load(key)) {
        p.result = std::make_shared<const backend::CompileResult>(std::move(*hit));
        p.cache_hit = true;
        return;
      }
    }
    auto result = std::make_shared<const backend::CompileResult>(compiler.compile(p.request));
    if (result->lowered_names.size() != p.request.name_expressions.size())
      throw Error(fmt::format("the compiler returned {} lowered names for {} name expressions",
                              result->lowered_names.size(), p.request.name_expressions.size()));
    if (cache) p.cache_write_error = cache->store(key, *result);
    p.result = std::move(result);
  } catch (const CompileError& e) {
    p.error = e.log().empty() ? e.what() : fmt::format("{}\n{}", e.what(), e.log());
  } catch (const CompilerUnavailable& e) {
    p.compiler_unavailable = e.what();
  } catch (const std::exception& e) {
    p.error = e.what();
  } catch (...) {
    p.error = "the compiler threw an unknown exception";
  }
}

std::string basename(std::string_view path) {
  auto slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}
}  // namespace

void CacheWriteFailures::add(const CacheWriteFailures& more) {
  if (first.empty()) first = more.first;
  count += more.count;
}

std::string CacheWriteFailures::warning(const CodeCache& cache) const {
  if (count == 0) return {};
  if (count == 1)
    return fmt::format("warning: 1 code object could not be stored in the cache {}: {}; the next run compiles it again",
                       cache.dir(), first);
  return fmt::format("warning: {} code objects could not be stored in the cache {} (the first: {}); the next run "
                     "compiles them again",
                     count, cache.dir(), first);
}

CompileBatch compile_candidates(const Family& family, std::span<const CompileJob> jobs, const Compiler& compiler,
                                const CompileSettings& settings) {
  auto start = std::chrono::steady_clock::now();
  const std::string source = render(family.template_file());
  const std::string compiler_identity = settings.cache ? compiler.identity() : std::string();

  CompileBatch batch;
  batch.outcomes.resize(jobs.size());
  // Candidates whose name expressions are equal need the same code object: one program each.
  std::vector<Program> programs;
  std::map<std::vector<std::string>, size_t> program_of;
  std::vector<size_t> job_program(jobs.size(), SIZE_MAX);
  for (size_t i = 0; i < jobs.size(); ++i) {
    auto& out = batch.outcomes[i];
    try {
      out.name_expressions = family.name_expressions(jobs[i].key, jobs[i].config);
    } catch (const std::exception& e) {
      out.error = fmt::format("no name expressions for {} / {}: {}", jobs[i].key.canonical(),
                              jobs[i].config.canonical(), e.what());
      continue;
    }
    auto [it, inserted] = program_of.try_emplace(out.name_expressions, programs.size());
    if (inserted)
      programs.push_back({backend::CompileRequest{source, basename(family.template_file()), out.name_expressions,
                                                  settings.arch, settings.options},
                          nullptr,
                          {},
                          false,
                          0,
                          {},
                          {}});
    job_program[i] = it->second;
  }

  std::atomic<size_t> next{0};
  std::mutex progress_mutex;
  size_t done = 0;
  std::atomic<bool> unavailable{false};  // once the compiler cannot run, no program is tried
  auto work = [&] {
    for (size_t i = next++; i < programs.size() && !unavailable; i = next++) {
      const auto began = std::chrono::steady_clock::now();
      build(programs[i], compiler, compiler_identity, settings.cache);
      programs[i].seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
      if (!programs[i].compiler_unavailable.empty()) unavailable = true;
      if (settings.on_progress) {
        std::lock_guard lock(progress_mutex);
        settings.on_progress(++done, programs.size());
      }
    }
  };
  size_t threads =
      settings.jobs > 0 ? static_cast<size_t>(settings.jobs) : std::max(1u, std::thread::hardware_concurrency());
  threads = std::min(threads, programs.size());
  {
    std::vector<std::jthread> pool;
    for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
    if (threads > 0) work();
  }

  for (const auto& p : programs)
    if (!p.compiler_unavailable.empty()) throw CompilerUnavailable(p.compiler_unavailable);
  for (const auto& p : programs) {
    batch.stats.cache_hits += p.cache_hit;
    batch.stats.failed_programs += p.result == nullptr;
    if (!p.cache_write_error.empty()) batch.stats.cache_writes_failed.add({1, p.cache_write_error});
  }
  batch.stats.programs = programs.size();
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (job_program[i] == SIZE_MAX) continue;
    const auto& p = programs[job_program[i]];
    auto& out = batch.outcomes[i];
    out.result = p.result;
    out.error = p.error;
    out.cache_hit = p.cache_hit;
    out.seconds = p.seconds;
  }
  batch.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return batch;
}

}  // namespace ktune::jit
