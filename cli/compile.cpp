// `ktune compile`: compiles every feasible instance of a space for one arch, without a device,
// through the code-object cache (tuner/sweep/compile_run.hpp). Proves that the templates generate
// code for a target (run.sh uses it on CPU-only machines), summarises what the kernels use of it
// (read from the code objects), and with --db records a compile-only run; exits non-zero when any
// program fails, printing its log.
#include <unistd.h>

#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "backend/backend.hpp"
#include "cache_options.hpp"
#include "common/error.hpp"
#include "db/database.hpp"
#include "jit/compiler.hpp"
#include "jit/templates.hpp"
#include "kernels/family.hpp"
#include "provenance.hpp"
#include "space_options.hpp"
#include "sweep/compile_run.hpp"
#include "sweep/process_compiler.hpp"
#include "sweep/progress.hpp"
#include "verb.hpp"

namespace ktune::cli {
namespace {

struct CompileOptions : SpaceOptions {
  std::string arch;
  std::string db;
  bool resume = false;
};

std::string optional_text(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : "?"; }

// One line per kernel kind: what its kernels use at most (registers, scratch) and at least
// (waves per SIMD), read from the code objects.
void print_resources(const sweep::CompileRunSummary& s) {
  for (const auto& k : s.kinds) {
    if (k.read == 0) continue;
    fmt::print("resources: {}: {} kernels: max {} VGPRs ({} AGPRs), {} spilling (max scratch {} bytes), min {} waves "
               "per SIMD\n",
               k.kind, k.read, optional_text(k.max_vgprs), optional_text(k.max_agprs), k.spilling,
               optional_text(k.max_scratch_bytes), optional_text(k.min_waves_per_simd));
  }
  if (s.resources_unread)
    fmt::print("resources: not read from {} candidates' code objects (the first: {})\n", s.resources_unread,
               s.first_unread);
}

void run(const CompileOptions& o) {
  const Family& fam = family(o.kernel);
  target_limits(o.arch);  // throws for an arch ktune has no limits for
  backend::Backend& b = backend::for_arch(o.arch);
  if (!b.compiler_available(o.arch))
    throw Unavailable(fmt::format("cannot compile for {}: {}", o.arch, b.compiler_unavailable_reason(o.arch)));
  const auto space = load_filtered_space(o);

  db::Run provenance;
  provenance.kind = db::RunKind::compile;
  provenance.family = std::string(fam.name());
  provenance.backend = std::string(b.name());
  provenance.arch = o.arch;
  provenance.compiler_version = b.compiler_version(o.arch);
  provenance.template_hash = jit::template_hash(fam.template_file());
  provenance.ktune_version = KTUNE_VERSION;
  provenance.host = host_name();
  provenance.command = command_line();

  const bool quiet = globals().quiet;
  auto cache = open_cache(o.cache);
  auto settings = compile_settings(o, o.arch, cache.get());
  const bool live = !quiet && ::isatty(STDERR_FILENO);
  if (live)
    settings.on_progress = [](size_t done, size_t total) {
      fmt::print(stderr, "\r\x1b[Kcompiling: {}/{} programs", done, total);
      if (done == total) fmt::print(stderr, "\r\x1b[K");
      std::fflush(stderr);
    };
  sweep::CompileRunOptions options;
  options.resume = o.resume;
  options.shard = shard_of(o);
  std::unique_ptr<db::Database> db;
  if (!o.db.empty()) db = db::Database::open(o.db, /*create=*/true);
  const auto compiler = sweep::compiler_for(b, o.arch, compile_worker_command(b));
  if (!quiet) {
    const auto plan = sweep::build_plan(space, target_limits(o.arch), {}, options.shard);
    fmt::print("compile: {} for {} with {}: {}; {} keys, {} candidates, {} infeasible\n", fam.name(), o.arch,
               b.compiler_version(o.arch), space.origin, plan.keys.size(), plan.candidates, plan.infeasible);
  }
  std::fflush(stdout);
  const auto s = sweep::run_compile(space, db.get(), provenance, *compiler, settings, options);

  // One report per failed program, naming every candidate that needs it.
  for (const auto& f : s.failures)
    fmt::print("FAILED: {} / {}{}\n{}\n\n", f.key.pretty(fam.key_fields()), f.config.pretty(fam.config_fields()),
               f.candidates > 1 ? fmt::format(" (and {} more candidates)", f.candidates - 1) : "", f.error);
  const auto& st = s.stats;
  if (!quiet || st.failed_programs) {
    fmt::print("compile: {} programs: {} compiled, {} from the cache{}, {} failed; {}\n", st.programs,
               st.programs - st.cache_hits - st.failed_programs, st.cache_hits,
               cache ? fmt::format(" ({})", cache->dir()) : "", st.failed_programs,
               sweep::Progress::format_duration(st.seconds));
    print_resources(s);
  }
  if (db)
    fmt::print("compile: run {}{} (compile-only: nothing was run or timed): {} rows recorded, {} candidates done "
               "before; database {}\n",
               s.run_id, s.resumed ? " (resumed)" : "", s.rows, s.already_done, o.db);
  warn_failed_cache_writes(st.cache_writes_failed, cache.get());
  if (st.failed_programs)
    throw Error(fmt::format("{} of {} programs failed to compile for {} (logs above{})", st.failed_programs,
                            st.programs, o.arch, db ? ", and recorded as compile_error rows" : ""));
}

void setup(CLI::App& app) {
  auto o = std::make_shared<CompileOptions>();
  auto* cmd =
      app.add_subcommand("compile", "Compile every feasible instance of a space for an arch (no device needed)");
  add_space_options(*cmd, *o);
  cmd->add_option("--arch", o->arch, "Compile target, e.g. gfx90a or sm_90a")->required();
  auto* db = cmd->add_option("--db", o->db,
                             "Record a compile-only run (kernels and their resources, no timings) in this "
                             "database (SQLite; created when absent)");
  cmd->add_flag("--resume", o->resume,
                "With --db: continue the latest compatible compile-only run, skipping what it recorded")
      ->needs(db);
  cmd->callback([o] { run(*o); });
}

KTUNE_VERB(20, setup);

}  // namespace
}  // namespace ktune::cli
