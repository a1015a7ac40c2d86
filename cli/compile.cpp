// `ktune compile`: compiles every feasible instance of a space for one arch, without a device,
// through the code-object cache. Proves that the templates generate code for a target (run.sh
// uses it on CPU-only machines); exits non-zero when any program fails, printing its log.
#include <unistd.h>

#include <cstdio>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "backend/backend.hpp"
#include "cache_options.hpp"
#include "common/error.hpp"
#include "jit/compiler.hpp"
#include "kernels/family.hpp"
#include "space_options.hpp"
#include "sweep/plan.hpp"
#include "sweep/process_compiler.hpp"
#include "sweep/progress.hpp"
#include "verb.hpp"

namespace ktune::cli {
namespace {

struct CompileOptions : SpaceOptions {
  std::string arch;
};

void run(const CompileOptions& o) {
  const Family& fam = family(o.kernel);
  const TargetLimits& target = target_limits(o.arch);
  backend::Backend& b = backend::for_arch(o.arch);
  if (!b.compiler_available(o.arch))
    throw Unavailable(fmt::format("cannot compile for {}: {}", o.arch, b.compiler_unavailable_reason(o.arch)));
  const auto space = load_filtered_space(o);
  const auto plan = sweep::build_plan(space, target, {}, shard_of(o));
  std::vector<jit::CompileJob> jobs;
  for (const auto& k : plan.keys)
    for (const auto& c : k.configs) jobs.push_back({k.key, c});

  const bool quiet = globals().quiet;
  if (!quiet)
    fmt::print("compile: {} for {} with {}: {}; {} keys, {} candidates, {} infeasible\n", fam.name(), o.arch,
               b.compiler_version(o.arch), space.origin, plan.keys.size(), jobs.size(), plan.infeasible);
  std::fflush(stdout);
  auto cache = open_cache(o.cache);
  auto settings = compile_settings(o, o.arch, cache.get());
  if (!quiet && ::isatty(STDERR_FILENO))
    settings.on_progress = [](size_t done, size_t total) {
      fmt::print(stderr, "\r\x1b[Kcompiling: {}/{} programs", done, total);
      if (done == total) fmt::print(stderr, "\r\x1b[K");
      std::fflush(stderr);
    };
  const auto compiler = sweep::compiler_for(b, o.arch, compile_worker_command(b));
  const auto batch = jit::compile_candidates(fam, jobs, *compiler, settings);

  // One report per failed program, naming every candidate that needs it.
  std::map<std::string, std::vector<size_t>> failed;  // error text -> jobs
  for (size_t i = 0; i < jobs.size(); ++i)
    if (!batch.outcomes[i].ok()) failed[batch.outcomes[i].error].push_back(i);
  for (const auto& [error, which] : failed) {
    const auto& first = jobs[which.front()];
    fmt::print("FAILED: {} / {}{}\n{}\n\n", first.key.pretty(fam.key_fields()),
               first.config.pretty(fam.config_fields()),
               which.size() > 1 ? fmt::format(" (and {} more candidates)", which.size() - 1) : "", error);
  }
  const auto& s = batch.stats;
  if (!quiet || s.failed_programs) {
    fmt::print("compile: {} programs: {} compiled, {} from the cache{}, {} failed; {}\n", s.programs,
               s.programs - s.cache_hits - s.failed_programs, s.cache_hits,
               cache ? fmt::format(" ({})", cache->dir()) : "", s.failed_programs,
               sweep::Progress::format_duration(s.seconds));
  }
  warn_failed_cache_writes(s.cache_writes_failed, cache.get());
  if (s.failed_programs)
    throw Error(
        fmt::format("{} of {} programs failed to compile for {} (logs above)", s.failed_programs, s.programs, o.arch));
}

void setup(CLI::App& app) {
  auto o = std::make_shared<CompileOptions>();
  auto* cmd =
      app.add_subcommand("compile", "Compile every feasible instance of a space for an arch (no device needed)");
  add_space_options(*cmd, *o);
  cmd->add_option("--arch", o->arch, "Compile target, e.g. gfx90a or sm_90a")->required();
  cmd->callback([o] { run(*o); });
}

KTUNE_VERB(20, setup);

}  // namespace
}  // namespace ktune::cli
