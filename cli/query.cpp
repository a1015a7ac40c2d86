// `ktune query`: the measurements of a tuning database (or only the winners), filtered, as a
// table, CSV or JSON, with keys and configs shown by field with their labels.
#include <iostream>
#include <map>
#include <memory>

#include "db/database.hpp"
#include "db_options.hpp"
#include "db_output.hpp"
#include "verb.hpp"

namespace ktune::cli {
namespace {

struct QueryOptions {
  DbFilterOptions filter;
  std::string status;
  bool winners = false;
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
  r["frac_copy_bw"] = timing(m.frac_copy_bw);
  if (!brief) {
    r["frac_matrix"] = timing(m.frac_matrix);
    r["max_abs_err"] = number(m.max_abs_err);
    r["rel_l2_err"] = number(m.rel_l2_err);
    r["measured_at"] = m.measured_at;
  }
  r["status"] = to_string(m.status);
  r["detail"] = m.detail;
  return r;
}

void run_query(const QueryOptions& o) {
  auto db = db::Database::open(o.filter.db, /*create=*/false, /*read_only=*/true);
  auto filter = to_filter(o.filter);
  if (!o.status.empty()) filter.status = db::status_from_string(o.status);
  const bool brief = o.filter.format == "table";
  std::vector<Record> rows;
  if (o.winners) {
    for (const auto& w : db->winners(filter)) rows.push_back(measurement_record(w.m, w.run, brief));
  } else {
    std::map<int64_t, db::Run> runs;
    for (auto& r : db->runs()) runs.emplace(r.id, std::move(r));
    for (const auto& m : db->measurements(filter)) rows.push_back(measurement_record(m, runs.at(m.run_id), brief));
  }
  print_records(std::cout, rows, o.filter.format);
}

void setup(CLI::App& app) {
  auto o = std::make_shared<QueryOptions>();
  auto* cmd = app.add_subcommand("query", "List the measurements (or the winners) of a tuning database");
  add_db_filter_options(*cmd, o->filter);
  auto* status = cmd->add_option("--status", o->status, "Only this status")
                     ->check(CLI::IsMember({"ok", "verify_failed", "compile_error", "fault", "timeout", "infeasible"}));
  cmd->add_flag("--winners", o->winners, "Only the best ok measurement (lowest median) of each key in each run")
      ->excludes(status);
  cmd->callback([o] { run_query(*o); });
}

KTUNE_VERB(50, setup);

}  // namespace
}  // namespace ktune::cli
