// `ktune sweep`: tunes a space of one kernel family on one device into a database
// (tuner/sweep/runner.hpp): every candidate verified and timed in a worker process, winners and
// gaps recorded as they are found.
#include <unistd.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "backend/backend.hpp"
#include "cache_options.hpp"
#include "common/error.hpp"
#include "db/database.hpp"
#include "device_choice.hpp"
#include "jit/templates.hpp"
#include "kernels/family.hpp"
#include "number_checks.hpp"
#include "space_options.hpp"
#include "sweep/process_compiler.hpp"
#include "sweep/runner.hpp"
#include "verb.hpp"

namespace ktune::cli {
namespace {

struct SweepCliOptions : SpaceOptions {
  std::string db;
  std::string backend;
  int device = 0;
  bool resume = false;
  double budget_s = 0;
  double timeout_s = 120;
};

// The command line as started, for the run's provenance.
std::string command_line() {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>()), out;
  for (char c : raw) out += c == '\0' ? ' ' : c;
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string host_name() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

void run(const SweepCliOptions& o) {
  const Family& fam = family(o.kernel);
  backend::Backend& b = device_backend(
      o.backend, "sweep on",
      fmt::format("To check that the space compiles without a device, run: ktune compile --kernel {} --space {} "
                  "--arch gfx90a (or sm_90a)",
                  o.kernel, o.space));
  const backend::DeviceInfo info = checked_device(b, o.device);
  target_limits(info.arch);  // throws for an arch ktune has no limits for
  const auto space = load_filtered_space(o);

  db::Run provenance;
  provenance.family = std::string(fam.name());
  provenance.backend = std::string(b.name());
  provenance.device_name = info.name;
  provenance.arch = info.arch;
  provenance.compute_units = info.compute_units;
  provenance.driver_version = b.driver_version();
  provenance.compiler_version = b.compiler_version(info.arch);
  provenance.template_hash = jit::template_hash(fam.template_file());
  provenance.ktune_version = KTUNE_VERSION;
  provenance.host = host_name();
  provenance.command = command_line();

  sweep::SweepOptions options;
  options.worker_command = compile_worker_command(b);
  options.worker_command.insert(options.worker_command.end(),
                                {"--device", std::to_string(o.device), "--parent-pid", std::to_string(::getpid())});
  options.timeout = std::chrono::duration<double>(o.timeout_s);
  options.budget_s = o.budget_s;
  options.resume = o.resume;
  options.shard = shard_of(o);
  options.progress = sweep::Progress::mode_for(stderr, globals().quiet);

  auto cache = open_cache(o.cache);
  const auto compiler = sweep::compiler_for(b, info.arch, compile_worker_command(b));
  auto db = db::Database::open(o.db, /*create=*/true);
  const auto s =
      sweep::run_sweep(space, *db, provenance, *compiler, compile_settings(o, info.arch, cache.get()), options);
  fmt::print("sweep: run {}{} of {} on {} ({}): {} ok, {} verify_failed, {} compile_error, {} fault, {} timeout; "
             "{} gaps; {} infeasible, {} done before{}; {} workers; {}; database {}\n",
             s.run_id, s.resumed ? " (resumed)" : "", fam.name(), info.name, info.arch, s.ok, s.verify_failed,
             s.compile_error, s.fault, s.timeout, s.gaps, s.infeasible, s.already_done,
             s.not_started ? fmt::format("; {} not started (budget)", s.not_started) : "", s.workers_started,
             sweep::Progress::format_duration(s.seconds), o.db);
  fmt::print("{}\n", sweep::describe_time(s));
  warn_failed_cache_writes(s.cache_writes_failed, cache.get());
  // Shown as the run started, unless the progress was quiet: a warning is not progress.
  if (globals().quiet && !s.roof_warning.empty()) fmt::print(stderr, "{}\n", s.roof_warning);
  if (s.memory_start.rss_bytes > 0) {
    const auto mib = [](int64_t bytes) { return static_cast<double>(bytes) / (1 << 20); };
    const auto &a = s.memory_start, &b = s.memory_end;
    fmt::print("memory (after the first -> after the last candidate): sweep process {:.0f} -> {:.0f} MiB resident "
               "(peak {:.0f}); worker {:.0f} -> {:.0f} MiB resident; device {:.0f} -> {:.0f} MiB in use\n",
               mib(a.rss_bytes), mib(b.rss_bytes), mib(s.peak_rss_bytes), mib(a.worker_rss_bytes),
               mib(b.worker_rss_bytes), mib(a.device_used_bytes), mib(b.device_used_bytes));
  }
}

void setup(CLI::App& app) {
  auto o = std::make_shared<SweepCliOptions>();
  auto* cmd = app.add_subcommand("sweep", "Verify and time every candidate of a space on a GPU into a database");
  add_space_options(*cmd, *o);
  cmd->add_option("--db", o->db, "Tuning database (SQLite; created when absent)")->required();
  cmd->add_option("--backend", o->backend, "cuda or hip (default: the first with a device)");
  cmd->add_option("--device", o->device, "Device ordinal")->check(decimal_within(0, 1023))->capture_default_str();
  cmd->add_flag("--resume", o->resume, "Continue the latest compatible run in the database, skipping what it did");
  cmd->add_option("--budget", o->budget_s, "Start no candidate after this many seconds (0: no limit)")
      ->check(seconds_within(0, 1e7));
  cmd->add_option("--timeout", o->timeout_s, "Seconds a candidate may take before its worker is killed")
      ->check(seconds_within(0.001, 86400))
      ->capture_default_str();
  cmd->callback([o] { run(*o); });
}

KTUNE_VERB(30, setup);

}  // namespace
}  // namespace ktune::cli
