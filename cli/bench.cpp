// `ktune bench`: verifies and times one config of one problem key on a device, and reports it
// against the copy bandwidth and the matrix-core throughput measured in the same run. The config
// is given (--config) or is the database's winner for the key (--db). Everything that can be
// checked without a device (fields, ranges, feasibility for --arch, the database's answer) is
// checked before one is looked for.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "backend/backend.hpp"
#include "bench/matrix_probe.hpp"
#include "bench/roofline.hpp"
#include "bench/stopping.hpp"
#include "cache_options.hpp"
#include "common/error.hpp"
#include "common/seed.hpp"
#include "common/watchdog.hpp"
#include "db/database.hpp"
#include "db_options.hpp"
#include "device_choice.hpp"
#include "dispatch/table.hpp"
#include "jit/compiler.hpp"
#include "jit/templates.hpp"
#include "kernels/family.hpp"
#include "number_checks.hpp"
#include "space_options.hpp"
#include "sweep/process_compiler.hpp"
#include "sweep/protocol.hpp"
#include "sweep/runner.hpp"
#include "sweep/space.hpp"
#include "sweep/worker.hpp"
#include "verb.hpp"

namespace ktune::cli {
namespace {
using json = nlohmann::json;

struct BenchOptions {
  std::string kernel;
  std::string key, shape, config;  // "name=value ..." texts
  std::string db;
  bool allow_stale = false;
  std::string arch;
  std::string backend;
  int device = 0;
  bool json = false;
  bool no_verify = false;
  bool force = false;
  double timeout_s = 300;
  CacheOptions cache;
  // One option per distinct key or shape field name of the registered families (--heads,
  // --block-len, --ctx, ...); a value applies to every field of that name (mla_decode's key and
  // shape both have a batch).
  std::map<std::string, std::string> field_values;
  std::vector<std::pair<std::string, const CLI::Option*>> field_options;
};

std::string option_of(std::string_view field) {
  std::string flag = "--" + std::string(field);
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

// Added after the verb's own options: a field whose option name is taken (by a verb option or
// by a field of another family) gets no option of its own and is set through --key / --shape.
void add_field_options(CLI::App& cmd, BenchOptions& o) {
  for (const Family* f : families())
    for (const auto* fields : {&f->key_fields(), &f->shape_fields()})
      for (const auto& spec : *fields) {
        const auto flag = option_of(spec.name);
        if (cmd.get_option_no_throw(flag)) continue;
        auto* opt = cmd.add_option(flag, o.field_values[spec.name], fmt::format("{} ({} field)", spec.help, f->name()));
        o.field_options.emplace_back(spec.name, opt);
      }
}

bool has_field(const std::vector<FieldSpec>& fields, std::string_view name) {
  return std::any_of(fields.begin(), fields.end(), [&](const FieldSpec& s) { return s.name == name; });
}

// The per-field options given, checked to be fields of `fam`.
std::vector<std::pair<std::string, std::string>> given_fields(const BenchOptions& o, const Family& fam) {
  std::vector<std::pair<std::string, std::string>> given;
  for (const auto& [name, opt] : o.field_options) {
    if (opt->count() == 0) continue;
    if (!has_field(fam.key_fields(), name) && !has_field(fam.shape_fields(), name))
      throw Error(fmt::format("{}: {} has no key or shape field '{}'", option_of(name), fam.name(), name));
    given.emplace_back(name, o.field_values.at(name));
  }
  return given;
}

// `text` plus the given per-field options that are fields of `fields`, read with those fields.
// Errors say how each field can be given.
Params user_params(const BenchOptions& o, std::string_view option, const std::string& text,
                   const std::vector<std::pair<std::string, std::string>>& given, const std::vector<FieldSpec>& fields,
                   std::string_view what, const Params& defaults = {}) {
  std::string all = text;
  for (const auto& [name, value] : given)
    if (has_field(fields, name)) all += fmt::format(" {}={}", name, value);
  try {
    return parse_user_params(all, fields, what, defaults);
  } catch (const Error& e) {
    std::vector<std::string> own;
    for (const auto& [name, opt] : o.field_options)
      if (has_field(fields, name)) own.push_back(option_of(name));
    throw Error(fmt::format("{} (set {} fields with {} \"name=value ...\"{})", e.what(), what, option,
                            own.empty() ? "" : fmt::format(" or with {}", fmt::join(own, ", "))));
  }
}

// Shape fields not given are those of the family's default space: what a sweep times on.
Params default_shape(const Family& fam) {
  const auto spaces = sweep::builtin_spaces(fam.name());
  if (std::find(spaces.begin(), spaces.end(), "default") == spaces.end()) return {};
  return sweep::load_space("default", fam).shape;
}

struct Chosen {
  Params config;
  std::string source;  // "--config", or the database measurement it comes from
};

// With --force a pruned config is timed anyway (the family's pruning includes rules about speed,
// which a measurement may want to question); the report's source says what was overridden.
void check_feasible(const BenchOptions& o, const Family& fam, const Params& key, Chosen& chosen,
                    const TargetLimits& target) {
  const auto why = fam.infeasible(key, chosen.config, target);
  if (!why) return;
  if (o.force) {
    chosen.source += fmt::format(" (forced past the family's pruning on {}: {})", target.arch, *why);
    return;
  }
  throw Error(fmt::format("config {} cannot serve key {} on {}: {} (--force times it anyway)",
                          chosen.config.pretty(fam.config_fields()), key.pretty(fam.key_fields()), target.arch, *why));
}

// The config the dispatch table (dispatch/table.hpp's rules) holds for exactly `key` on `arch`.
// Where the database timed it at another shape than `shape`, a note on stderr says that the two
// times do not compare.
Chosen tuned_config(const BenchOptions& o, const Family& fam, const Params& key, const Params& shape,
                    const std::string& arch) {
  const auto where = fmt::format("key {} on {}", key.pretty(fam.key_fields()), arch);
  dispatch::Table table;
  try {
    auto db = db::Database::open(o.db, /*create=*/false, /*read_only=*/true);
    dispatch::Request req;
    req.arch = arch;
    req.allow_stale = o.allow_stale;
    req.template_hash = jit::template_hash(fam.template_file());
    table = dispatch::build_table(*db, fam, req);
  } catch (const Error& e) {
    throw Error(fmt::format("--db {}: {}: {}", o.db, where, e.what()));
  }
  for (const auto& a : table.arches)
    for (const auto& e : a.entries) {
      if (e.key != key) continue;
      if (e.kernel) {
        const Params& there = e.kernel->shape;
        if (fam.effective_shape(key, there) != fam.effective_shape(key, shape))
          fmt::print(stderr,
                     "note: {} timed this config of {} at shape {} ({:.2f} us); this bench times shape {}, so the two "
                     "times do not compare\n",
                     o.db, where, there.pretty(fam.shape_fields()), e.kernel->median_us,
                     shape.pretty(fam.shape_fields()));
        return {e.kernel->config,
                fmt::format("{}: run {}, measurement {} ({:.2f} us there, at shape {})", o.db, e.kernel->run_id,
                            e.kernel->measurement_id, e.kernel->median_us, there.pretty(fam.shape_fields()))};
      }
      throw Error(fmt::format(
          "--db {}: {} is not tuned: it is a gap ({}: {}; {}){}", o.db, where, db::to_string(e.gap->reason),
          e.gap->detail, e.gap->source,
          e.gap->fallback ? fmt::format("; dispatch falls back to {}", e.gap->fallback->pretty(fam.key_fields()))
                          : ""));
    }
  throw Error(fmt::format("--db {}: {} is not tuned (bench takes the winner of exactly this key; `ktune query "
                          "--db {} --kernel {} --arch {}` lists the tuned keys)",
                          o.db, where, o.db, fam.name(), arch));
}

backend::CompileResult compile(const BenchOptions& o, const Family& fam, const backend::Backend& b, const Params& key,
                               const Params& config, const std::string& arch) {
  const auto cache = open_cache(o.cache);
  jit::CompileSettings settings;
  settings.arch = arch;
  settings.jobs = 1;
  settings.cache = cache.get();
  const auto compiler = sweep::compiler_for(b, arch, compile_worker_command(b));
  const jit::CompileJob job{key, config};
  const auto batch = jit::compile_candidates(fam, std::span(&job, 1), *compiler, settings);
  warn_failed_cache_writes(batch.stats.cache_writes_failed, cache.get());
  const auto& out = batch.outcomes.at(0);
  if (!out.ok())
    throw Error(
        fmt::format("config {} does not compile for {}: {}", config.pretty(fam.config_fields()), arch, out.error));
  return *out.result;
}

json fields_json(const Params& p, const std::vector<FieldSpec>& specs) {
  json j = json::object();
  for (const auto& [name, value] : p.items()) {
    const auto* spec = [&]() -> const FieldSpec* {
      for (const auto& s : specs)
        if (s.name == name) return &s;
      return nullptr;
    }();
    if (spec && spec->is_enum())
      j[name] = spec->format(value);
    else
      j[name] = value;
  }
  return j;
}

struct Report {
  const Family* family = nullptr;
  backend::DeviceInfo device;
  Params key, shape;
  Chosen chosen;
  bool verified = false;
  sweep::RunResult result;
  bench::CopyRoof copy;
  std::string matrix_probe;  // the matrix-core probe's instruction, e.g. "wgmma m64n256k16 bf16" (runs.matrix_probe's)
  bench::MatrixRoof matrix;
  bench::Rates rates;
};

json to_json(const Report& r) {
  const Family& f = *r.family;
  const auto& s = r.result.stats;
  const bool measured = r.matrix.tflops > 0;
  return {{"family", std::string(f.name())},
          {"device", {{"ordinal", r.device.ordinal}, {"name", r.device.name}, {"arch", r.device.arch}}},
          {"copy_gbps", r.copy.gbps()},
          {"copy_gbps_before", r.copy.before_gbps},
          {"copy_gbps_after", r.copy.after_error.empty() ? json(r.copy.after_gbps) : json(nullptr)},
          {"copy_after_error", r.copy.after_error.empty() ? json(nullptr) : json(r.copy.after_error)},
          {"key", fields_json(r.key, f.key_fields())},
          {"config", fields_json(r.chosen.config, f.config_fields())},
          {"config_source", r.chosen.source},
          {"shape", fields_json(r.shape, f.shape_fields())},
          {"verified", r.verified},
          {"max_abs_err", r.verified ? json(r.result.max_abs_err) : json(nullptr)},
          {"rel_l2_err", r.verified ? json(r.result.rel_l2_err) : json(nullptr)},
          {"median_us", s.median_us},
          {"p10_us", s.p10_us},
          {"p90_us", s.p90_us},
          {"samples", s.n},
          {"rel_ci", std::isfinite(s.rel_ci) ? json(s.rel_ci) : json(nullptr)},
          {"stop", bench::to_string(s.stop)},
          {"bytes", r.result.traffic.bytes},
          {"flops", r.result.traffic.flops},
          {"gbps", r.rates.gbps},
          {"tflops", r.rates.tflops},
          {"frac_copy_bw", r.rates.frac_copy_bw},
          {"matrix_probe", r.matrix_probe},
          {"matrix_tflops", measured ? json(r.matrix.tflops) : json(nullptr)},
          {"frac_matrix", measured ? json(r.rates.frac_matrix) : json(nullptr)},
          {"matrix_error", measured ? json(nullptr) : json(r.matrix.error)}};
}

void print_text(const Report& r) {
  const Family& f = *r.family;
  const auto& s = r.result.stats;
  fmt::print("bench: {} on {} ({}, device {})\n", f.name(), r.device.name, r.device.arch, r.device.ordinal);
  fmt::print("  key        {}\n", r.key.pretty(f.key_fields()));
  fmt::print("  config     {} (from {})\n", r.chosen.config.pretty(f.config_fields()), r.chosen.source);
  fmt::print("  shape      {}\n", r.shape.pretty(f.shape_fields()));
  if (r.verified)
    fmt::print("  verified   ok on every verification shape (max abs err {:.3g}, rel l2 err {:.3g})\n",
               r.result.max_abs_err, r.result.rel_l2_err);
  else
    fmt::print("  verified   no (--no-verify): these timings say nothing about correctness\n");
  fmt::print("  time       median {:.2f} us, p10 {:.2f} us, p90 {:.2f} us, n {}; {}\n", s.median_us, s.p10_us, s.p90_us,
             s.n, bench::precision(s));
  fmt::print("  traffic    {:.4g} MB, {:.4g} GFLOP per launch\n", r.result.traffic.bytes / 1e6,
             r.result.traffic.flops / 1e9);
  if (r.copy.after_error.empty())
    fmt::print(
        "  memory     {:.1f} GB/s = {:.1f}% of the copy bandwidth ({:.1f} GB/s, the better of two copy tests in this "
        "run: {:.1f} before the kernel, {:.1f} after)\n",
        r.rates.gbps, 100 * r.rates.frac_copy_bw, r.copy.gbps(), r.copy.before_gbps, r.copy.after_gbps);
  else
    fmt::print(
        "  memory     {:.1f} GB/s = {:.1f}% of the copy bandwidth ({:.1f} GB/s, the copy test before the kernel; the "
        "one after it failed: {})\n",
        r.rates.gbps, 100 * r.rates.frac_copy_bw, r.copy.gbps(), r.copy.after_error);
  if (r.matrix.tflops > 0)
    fmt::print("  compute    {:.2f} TFLOP/s = {:.1f}% of the {} peak ({:.1f} TFLOP/s, measured in this run)\n",
               r.rates.tflops, 100 * r.rates.frac_matrix, r.matrix_probe, r.matrix.tflops);
  else
    fmt::print("  compute    {:.2f} TFLOP/s; the {} peak was not measured: {}\n", r.rates.tflops, r.matrix_probe,
               r.matrix.error);
}

void run(const BenchOptions& o) {
  const Family& fam = family(o.kernel);
  const auto given = given_fields(o, fam);
  const Params key = user_params(o, "--key", o.key, given, fam.key_fields(), "key");
  const Params shape = user_params(o, "--shape", o.shape, given, fam.shape_fields(), "shape", default_shape(fam));
  if (auto why = fam.shape_unfit(key, shape))
    throw Error(
        fmt::format("shape {} for key {}: {}", shape.pretty(fam.shape_fields()), key.pretty(fam.key_fields()), *why));
  if (o.config.empty() == o.db.empty()) {
    std::vector<std::string> items;
    for (const auto& spec : fam.config_fields()) items.push_back(spec.name + "=...");
    throw Error(fmt::format("{}: give the config to time either with --config \"{}\" or with --db PATH (the "
                            "database's winner for the key)",
                            o.config.empty() ? "no config" : "--config and --db both given", fmt::join(items, " ")));
  }
  std::optional<Chosen> chosen;
  if (!o.config.empty())
    chosen = Chosen{user_params(o, "--config", o.config, {}, fam.config_fields(), "config"), "--config"};
  if (!o.arch.empty()) {
    const TargetLimits& target = target_limits(o.arch);
    if (!chosen) chosen = tuned_config(o, fam, key, shape, o.arch);
    check_feasible(o, fam, key, *chosen, target);
  }

  backend::Backend& b = device_backend(
      o.backend, "benchmark on",
      fmt::format("ktune bench times on a device; without one, `ktune compile --kernel {} --arch gfx90a` (or sm_90a) "
                  "checks that the templates compile",
                  fam.name()));
  const backend::DeviceInfo info = checked_device(b, o.device);
  if (!o.arch.empty() && o.arch != info.arch)
    throw Error(fmt::format("--arch {}: device {} ({}) is {}", o.arch, o.device, info.name, info.arch));
  const TargetLimits& target = target_limits(info.arch);
  if (!chosen) chosen = tuned_config(o, fam, key, shape, info.arch);
  if (o.arch.empty()) check_feasible(o, fam, key, *chosen, target);
  const auto code = compile(o, fam, b, key, chosen->config, info.arch);

  auto ctx = b.open(o.device);
  Report report;
  report.family = &fam;
  report.device = ctx->info();
  report.key = key;
  report.shape = shape;
  report.chosen = *chosen;
  report.verified = !o.no_verify;
  report.matrix_probe = bench::matrix_instruction(report.device.arch).name;
  sweep::RunRequest req;
  req.family = std::string(fam.name());
  req.key = key;
  req.config = chosen->config;
  req.shape = shape;
  req.code = code.code;
  req.symbols = code.lowered_names;
  req.seed = seed_of(key);
  req.verify = !o.no_verify;
  sweep::CandidateRunner runner(*ctx);
  const auto what =
      fmt::format("config {} for key {}", chosen->config.pretty(fam.config_fields()), key.pretty(fam.key_fields()));
  // A fault (the kernel's, or a probe's) says which step it ended; so does a hang, which only
  // ending the process can stop. The step is set after what the step before wrote, so that the
  // watchdog's thread may read the kernel's result once the step after it shows.
  static constexpr const char* kCopyAfter = "the copy test after the kernel";
  std::atomic<const char*> step = "the copy test before the kernel";
  try {
    const Watchdog watchdog(std::chrono::duration<double>(o.timeout_s), [&] {
      const char* hung = step.load();
      const auto& s = report.result.stats;
      return fmt::format("{}: {} did not finish within {} s (a hung device? --timeout sets the limit){}", what, hung,
                         o.timeout_s,
                         hung == kCopyAfter && report.result.status == sweep::RunStatus::ok
                             ? fmt::format("; the kernel was timed before it: median {:.2f} us, p10 {:.2f} us, p90 "
                                           "{:.2f} us, n {}",
                                           s.median_us, s.p10_us, s.p90_us, s.n)
                             : "");
    });
    report.copy = bench::measure_copy_around(*ctx, [&] {
      step = "the matrix-core probe";
      report.matrix = bench::try_measure_matrix_tflops(b, *ctx);
      step = o.no_verify ? "timing the kernel" : "verifying and timing the kernel";
      report.result = runner.run(fam, req);
      step = kCopyAfter;
    });
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {} failed: {} (no timing is reported)", what, step.load(), e.what()));
  }
  if (report.result.status != sweep::RunStatus::ok)
    throw Error(fmt::format("{}: {}: {} (no timing is reported for it)", what, sweep::to_string(report.result.status),
                            report.result.detail));
  if (const auto& st = report.result.stats; !bench::plausible(st))
    throw Error(
        fmt::format("{}: the device's timing is impossible ({} samples, p10 {} us, median {} us, p90 {} us): no "
                    "figure is reported",
                    what, st.n, st.p10_us, st.median_us, st.p90_us));
  const auto& t = report.result.traffic;
  report.rates =
      bench::rates_of(t.bytes, t.flops, report.result.stats.median_us, report.copy.gbps(), report.matrix.tflops);
  if (o.json)
    fmt::print("{}\n", to_json(report).dump());
  else
    print_text(report);
}

void setup(CLI::App& app) {
  auto o = std::make_shared<BenchOptions>();
  auto* cmd = app.add_subcommand(
      "bench",
      "Verify and time one config of one problem key on a GPU, against its measured copy bandwidth and matrix-core "
      "throughput");
  cmd->add_option("--kernel", o->kernel, "Kernel family, e.g. mla_decode")->required();
  cmd->add_option("--key", o->key, "Problem key as \"name=value ...\" (or one option per key field below)");
  cmd->add_option("--shape", o->shape,
                  "Timing shape as \"name=value ...\" (or one option per shape field below); fields not given take "
                  "the family's default space's values");
  cmd->add_option("--config", o->config,
                  "Config to time, e.g. \"rows=32 keys=32 threads=256 stages=2 split=2 math=simt\"");
  auto* db = cmd->add_option("--db", o->db,
                             "Time the database's winner for the key instead (exact key, dispatch table rules)");
  cmd->add_flag("--allow-stale", o->allow_stale, "With --db: accept a winner tuned with other templates")->needs(db);
  cmd->add_option("--arch", o->arch,
                  "Check the config against this target before looking for a device; must be the device's");
  cmd->add_option("--backend", o->backend, "cuda or hip (default: the first with a device)");
  cmd->add_option("--device", o->device, "Device ordinal")->check(decimal_within(0, 1023))->capture_default_str();
  cmd->add_flag("--json", o->json, "Print one JSON object");
  cmd->add_flag("--no-verify", o->no_verify, "Time without verifying first (the output says so)");
  cmd->add_option("--timeout", o->timeout_s,
                  "Seconds the measurement (copy tests, matrix probe, verification, timing) may take before ktune "
                  "gives up on the device and exits")
      ->check(seconds_within(0.001, 86400))
      ->capture_default_str();
  cmd->add_flag("--force", o->force,
                "Time a config the family prunes for the key (it may fail to compile or launch; the output says so)");
  add_cache_options(*cmd, o->cache);
  add_field_options(*cmd, *o);
  cmd->callback([o] { run(*o); });
}

KTUNE_VERB(35, setup);

}  // namespace
}  // namespace ktune::cli
