// `ktune query`: the measurements of a tuning database (or only the winners, or the kernels of
// compile-only runs with their resources), filtered, as a table, CSV or JSON, with keys and configs
// shown by field with their labels.
#include <iostream>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.hpp"
#include "db/database.hpp"
#include "db/tuning_gain.hpp"
#include "db_options.hpp"
#include "db_output.hpp"
#include "sweep/compile_run.hpp"
#include "verb.hpp"

namespace ktune::cli {
namespace {

struct QueryOptions {
  DbFilterOptions filter;
  std::string status;
  bool winners = false;
  bool compiled = false;
  bool gain = false;
  std::string gain_by;  // a key field: one gain per value of it (e.g. kv_dtype, whose values take different kernels)
};

// `brief` (the table format) leaves out what does not fit a terminal line.
Record measurement_record(const db::Measurement& m, const db::Run& run, bool brief) {
  const Family* fam = registered_family(run.family);
  const bool timed = m.samples > 0;
  auto timing = [&](double v) { return timed ? number(v) : Record(nullptr); };
  Record r;
  r["id"] = m.id;
  r["run"] = m.run_id;
  r["kernel"] = run.family;
  r["arch"] = run.arch;
  if (!brief) r["device"] = run.device_name;
  r["key"] = fields_record(m.key, fam ? &fam->key_fields() : nullptr);
  r["config"] = fields_record(m.config, fam ? &fam->config_fields() : nullptr);
  if (!brief) r["shape"] = fields_record(m.shape, fam ? &fam->shape_fields() : nullptr);
  r["median_us"] = timing(m.median_us);
  r["p10_us"] = timing(m.p10_us);
  r["p90_us"] = timing(m.p90_us);
  r["n"] = m.samples;
  r["gbps"] = timing(m.gbps);
  r["tflops"] = timing(m.tflops);
  auto fraction = [&](const std::optional<double>& v) { return timed && v ? number(*v) : Record(nullptr); };
  r["frac_copy_bw"] = fraction(m.frac_copy_bw);
  if (!brief) {
    r["frac_matrix"] = fraction(m.frac_matrix);
    // frac_matrix's denominator: which probe measured it (runs before schema version 2 did not say).
    r["matrix_probe"] = run.matrix_tflops > 0 ? Record(db::matrix_probe_of(run)) : Record(nullptr);
    r["max_abs_err"] = number(m.max_abs_err);
    r["rel_l2_err"] = number(m.rel_l2_err);
    r["measured_at"] = m.measured_at;
  }
  r["status"] = to_string(m.status);
  r["detail"] = m.detail;
  return r;
}

// A kernel of a compile-only run: what its code object says it uses. Never a measurement: the
// `measured` column says so on every row.
Record compiled_record(const db::CompiledKernel& k, const db::Run& run, bool brief) {
  const Family* fam = registered_family(run.family);
  auto figure = [](const std::optional<int64_t>& v) { return v ? Record(*v) : Record(nullptr); };
  Record r;
  r["id"] = k.id;
  r["run"] = k.run_id;
  r["kernel"] = run.family;
  r["arch"] = k.arch;
  r["measured"] = "no: compile-only";
  r["key"] = fields_record(k.key, fam ? &fam->key_fields() : nullptr);
  r["config"] = fields_record(k.config, fam ? &fam->config_fields() : nullptr);
  r["function"] = brief ? Record(sweep::kernel_kind(k.kernel)) : Record(k.kernel);
  if (!brief) r["symbol"] = k.symbol;
  r["vgprs"] = figure(k.resources.vgprs);
  r["agprs"] = figure(k.resources.agprs);
  r["sgprs"] = figure(k.resources.sgprs);
  r["scratch_bytes"] = figure(k.resources.scratch_bytes);
  r["lds_bytes"] = figure(k.resources.lds_bytes);
  r["waves_per_simd"] = figure(k.resources.waves_per_simd);
  r["compile_s"] = number(k.compile_seconds);
  if (!brief) {
    r["from_cache"] = k.from_cache;
    r["compiler"] = run.compiler_version;
    r["recorded_at"] = k.recorded_at;
  }
  r["status"] = to_string(k.status);
  r["detail"] = k.detail;
  return r;
}

// `group`: the --gain-by value the row is about ("kv_dtype=bf16"), empty without --gain-by.
Record gain_record(const db::TuningGain& g, const db::Run& run, const std::string& group) {
  const Family* fam = registered_family(run.family);
  Record r;
  r["run"] = g.run_id;
  r["kernel"] = run.family;
  r["arch"] = run.arch;
  if (!group.empty()) r["keys_with"] = group;
  r["keys"] = g.keys;
  r["configs"] = g.configs;
  r["configs_on_every_key"] = g.configs_on_every_key;
  if (g.best_single) {
    r["best_single_config"] = fields_record(*g.best_single, fam ? &fam->config_fields() : nullptr);
    r["gain_geomean"] = number(g.gain_geomean);
    r["gain_max"] = number(g.gain_max);
    r["gain_max_key"] = fields_record(g.worst_key, fam ? &fam->key_fields() : nullptr);
  } else {
    r["best_single_config"] = "none: no config was timed ok on every key";
    r["gain_geomean"] = nullptr;
    r["gain_max"] = nullptr;
    r["gain_max_key"] = nullptr;
  }
  return r;
}

// The key field that --gain-by names, in `family`'s key fields. Throws Error.
const FieldSpec& gain_by_field(const std::string& name, const std::string& family) {
  const Family* fam = registered_family(family);
  if (fam == nullptr)
    throw Error(fmt::format("--gain-by {}: the run's kernel family '{}' is not one this ktune knows", name, family));
  for (const auto& f : fam->key_fields())
    if (f.name == name) return f;
  std::vector<std::string> names;
  for (const auto& f : fam->key_fields()) names.push_back(f.name);
  throw Error(
      fmt::format("--gain-by {}: {} has no key field '{}' (it has {})", name, family, name, fmt::join(names, ", ")));
}

void run_query(const QueryOptions& o) {
  auto db = db::Database::open(o.filter.db, /*create=*/false, /*read_only=*/true);
  auto filter = to_filter(o.filter);
  if (o.gain) {
    std::vector<Record> rows;
    for (const auto& run : db->runs(filter)) {
      auto per_run = filter;
      per_run.run_id = run.id;
      const std::vector<db::Measurement> ms = db->measurements(per_run);
      if (o.gain_by.empty()) {
        rows.push_back(gain_record(db::tuning_gain(ms), run, ""));
        continue;
      }
      const FieldSpec& field = gain_by_field(o.gain_by, run.family);
      std::map<int64_t, std::vector<db::Measurement>> groups;
      for (const auto& m : ms)
        if (const auto v = m.key.find(field.name)) groups[*v].push_back(m);
      for (const auto& [value, group] : groups)
        rows.push_back(gain_record(db::tuning_gain(group), run, fmt::format("{}={}", field.name, field.format(value))));
    }
    print_records(std::cout, rows, o.filter.format);
    if (rows.empty()) note_absent_filter_values(*db, o.filter, std::cerr);
    return;
  }
  if (!o.status.empty()) filter.status = db::status_from_string(o.status);
  const bool brief = o.filter.format == "table";
  std::vector<Record> rows;
  if (o.compiled) {
    auto compile_runs = filter;
    compile_runs.run_kind = db::RunKind::compile;
    compile_runs.status.reset();
    compile_runs.key_equals.clear();
    std::map<int64_t, db::Run> runs;
    for (auto& r : db->runs(compile_runs)) runs.emplace(r.id, std::move(r));
    for (const auto& k : db->compiled_kernels(filter)) rows.push_back(compiled_record(k, runs.at(k.run_id), brief));
  } else if (o.winners) {
    for (const auto& w : db->winners(filter)) rows.push_back(measurement_record(w.m, w.run, brief));
  } else {
    std::map<int64_t, db::Run> runs;
    for (auto& r : db->runs()) runs.emplace(r.id, std::move(r));
    for (const auto& m : db->measurements(filter)) rows.push_back(measurement_record(m, runs.at(m.run_id), brief));
  }
  print_records(std::cout, rows, o.filter.format);
  if (rows.empty()) note_absent_filter_values(*db, o.filter, std::cerr);
}

void setup(CLI::App& app) {
  auto o = std::make_shared<QueryOptions>();
  auto* cmd = app.add_subcommand("query", "List the measurements (or the winners) of a tuning database");
  add_db_filter_options(*cmd, o->filter);
  auto* status = cmd->add_option("--status", o->status, "Only this status")
                     ->check(CLI::IsMember({"ok", "verify_failed", "compile_error", "fault", "timeout", "infeasible"}));
  auto* winners =
      cmd->add_flag("--winners", o->winners, "Only the best ok measurement (lowest median) of each key in each run")
          ->excludes(status);
  cmd->add_flag("--compiled", o->compiled,
                "The kernels of compile-only runs (ktune compile --db) and what their code objects say they use: "
                "registers, scratch, LDS, waves per SIMD; nothing measured")
      ->excludes(winners);
  auto* gain = cmd->add_flag("--gain", o->gain,
                             "Per run: the single config best on average over the keys, and how much faster the "
                             "per-key winners are (geometric mean and largest ratio)")
                   ->excludes(status)
                   ->excludes("--winners")
                   ->excludes("--compiled");
  cmd->add_option("--gain-by", o->gain_by,
                  "With --gain: one row per value of this key field, over the keys that have it (e.g. kv_dtype, "
                  "where each cache type has kernels of its own)")
      ->needs(gain);
  cmd->callback([o] { run_query(*o); });
}

KTUNE_VERB(50, setup);

}  // namespace
}  // namespace ktune::cli
