// `ktune sweep`: tunes a space of one kernel family on one device, or on several at once
// (--devices), into a database (tuner/sweep/runner.hpp): every candidate verified and timed in a
// worker process, winners and gaps recorded as they are found, one run per device.
#include <unistd.h>

#include <map>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backend/backend.hpp"
#include "cache_options.hpp"
#include "common/error.hpp"
#include "db/database.hpp"
#include "device_choice.hpp"
#include "jit/templates.hpp"
#include "kernels/family.hpp"
#include "number_checks.hpp"
#include "provenance.hpp"
#include "space_options.hpp"
#include "sweep/device_list.hpp"
#include "sweep/process_compiler.hpp"
#include "sweep/runner.hpp"
#include "verb.hpp"

namespace ktune::cli {
namespace {

struct SweepCliOptions : SpaceOptions {
  std::string db;
  std::string backend;
  int device = 0;
  std::string devices;  // "all" or "0,2,3"; empty: --device alone
  bool mixed_devices = false;
  bool resume = false;
  double budget_s = 0;
  double timeout_s = 120;
};

void print_summary(const sweep::SweepSummary& s, const Family& fam, const db::Run& device, const std::string& db,
                   const jit::CodeCache* cache) {
  fmt::print("sweep: run {}{} of {} on {} ({}): {} ok, {} verify_failed, {} compile_error, {} fault, {} timeout; "
             "{} gaps; {} infeasible, {} pruned for their resources, {} done before{}; {} workers; {}; database {}\n",
             s.run_id, s.resumed ? " (resumed)" : "", fam.name(), device.device_name, device.arch, s.ok,
             s.verify_failed, s.compile_error, s.fault, s.timeout, s.gaps, s.infeasible, s.pruned, s.already_done,
             s.not_started ? fmt::format("; {} not started (budget)", s.not_started) : "", s.workers_started,
             sweep::Progress::format_duration(s.seconds), db);
  fmt::print("{}\n", sweep::describe_time(s));
  warn_failed_cache_writes(s.cache_writes_failed, cache);
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

std::string error_text(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  }
}

void run(const SweepCliOptions& o) {
  const Family& fam = family(o.kernel);
  backend::Backend& b = device_backend(
      o.backend, "sweep on",
      fmt::format("To check that the space compiles without a device, run: ktune compile --kernel {} --space {} "
                  "--arch gfx90a (or sm_90a)",
                  o.kernel, o.space));
  const auto ordinals =
      o.devices.empty() ? std::vector<int>{o.device} : sweep::parse_device_list(o.devices, b.device_count());
  std::vector<backend::DeviceInfo> infos;
  std::vector<sweep::DeviceModel> models;
  for (int d : ordinals) {
    infos.push_back(checked_device(b, d));
    target_limits(infos.back().arch);  // throws for an arch ktune has no limits for
    models.push_back({d, infos.back().name, infos.back().arch});
  }
  sweep::refuse_mixed_models(models, o.mixed_devices);
  const auto space = load_filtered_space(o);

  sweep::SweepOptions options;
  options.timeout = std::chrono::duration<double>(o.timeout_s);
  options.budget_s = o.budget_s;
  options.resume = o.resume;
  options.shard = shard_of(o);
  options.progress = sweep::Progress::mode_for(stderr, globals().quiet);

  auto cache = open_cache(o.cache);
  // One compiler per arch (--mixed-devices may mix them), shared by that arch's devices.
  std::map<std::string, std::unique_ptr<jit::Compiler>> compilers;
  for (const auto& info : infos)
    if (!compilers.contains(info.arch))
      compilers.emplace(info.arch, sweep::compiler_for(b, info.arch, compile_worker_command(b)));
  std::vector<std::unique_ptr<db::Database>> connections;  // one per device: each runs on its own thread
  std::vector<sweep::Device> devices;
  for (size_t i = 0; i < ordinals.size(); ++i) {
    const auto& info = infos[i];
    sweep::Device d;
    connections.push_back(db::Database::open(o.db, /*create=*/true));
    d.db = connections.back().get();
    d.provenance.family = std::string(fam.name());
    d.provenance.backend = std::string(b.name());
    d.provenance.device_name = info.name;
    d.provenance.arch = info.arch;
    d.provenance.compute_units = info.compute_units;
    d.provenance.driver_version = b.driver_version();
    d.provenance.compiler_version = b.compiler_version(info.arch);
    d.provenance.template_hash = jit::template_hash(fam.template_file());
    d.provenance.ktune_version = KTUNE_VERSION;
    d.provenance.host = host_name();
    d.provenance.command = command_line();
    d.worker_command = compile_worker_command(b);
    d.worker_command.insert(d.worker_command.end(),
                            {"--device", std::to_string(ordinals[i]), "--parent-pid", std::to_string(::getpid())});
    d.compiler = compilers.at(info.arch).get();
    d.compile = compile_settings(o, info.arch, cache.get());
    d.label = fmt::format("device {}", ordinals[i]);
    devices.push_back(std::move(d));
  }
  const auto node = sweep::run_node_sweep(space, devices, options);
  if (devices.size() == 1 && node.errors.front()) std::rethrow_exception(node.errors.front());
  std::vector<std::string> failed;
  for (size_t i = 0; i < devices.size(); ++i) {
    if (devices.size() > 1) fmt::print("{}:\n", devices[i].label);
    if (node.errors[i]) failed.push_back(fmt::format("{}: {}", devices[i].label, error_text(node.errors[i])));
    if (devices.size() > 1 && node.devices[i].run_id == 0) {
      if (!node.errors[i]) fmt::print("no key came to it: no run\n");
      continue;
    }
    print_summary(node.devices[i], fam, devices[i].provenance, o.db, cache.get());
  }
  if (!failed.empty())
    throw Error(fmt::format("{} of {} devices stopped (the others finished; continue with --resume):\n{}",
                            failed.size(), devices.size(), fmt::join(failed, "\n")));
}

void setup(CLI::App& app) {
  auto o = std::make_shared<SweepCliOptions>();
  auto* cmd = app.add_subcommand("sweep", "Verify and time every candidate of a space on a GPU into a database");
  add_space_options(*cmd, *o);
  cmd->add_option("--db", o->db, "Tuning database (SQLite; created when absent)")->required();
  cmd->add_option("--backend", o->backend, "cuda or hip (default: the first with a device)");
  auto* device =
      cmd->add_option("--device", o->device, "Device ordinal")->check(decimal_within(0, 1023))->capture_default_str();
  cmd->add_option("--devices", o->devices,
                  "Sweep on these devices at once (all, or ordinals like 0,2,3): one worker per device, keys handed "
                  "out as devices free up, one run per device, one database")
      ->excludes(device);
  cmd->add_flag("--mixed-devices", o->mixed_devices, "With --devices: accept devices of different models");
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
