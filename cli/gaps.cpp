// `ktune gaps` lists the problem keys without a kernel; `ktune gap add|rm` declares or withdraws
// a known gap (a key some library lacks, with the fallback a dispatcher should take).
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.hpp"
#include "db/database.hpp"
#include "db_options.hpp"
#include "db_output.hpp"
#include "dispatch/table.hpp"
#include "verb.hpp"

namespace ktune::cli {
namespace {

// "none" or the key with labels; a stored text another tool wrote malformed is shown as it is,
// with why, so that the listing still shows the gap to remove.
std::string fallback_text(const std::string& fallback, const std::vector<FieldSpec>& fields) {
  if (fallback == "none") return fallback;
  try {
    return Params::parse_canonical(fallback).pretty(fields);
  } catch (const Error& e) {
    return fmt::format("{} (malformed: {})", fallback, e.what());
  }
}

const std::vector<FieldSpec>& key_fields_or_none(const std::string& family) {
  static const std::vector<FieldSpec> none;
  const Family* fam = registered_family(family);
  return fam ? fam->key_fields() : none;
}

Record gap_record(const db::Gap& g, bool brief) {
  const auto& fields = key_fields_or_none(g.family);
  Record r;
  r["id"] = g.id;
  r["kernel"] = g.family;
  r["arch"] = g.arch;
  r["key"] = fields_record(g.key, &fields);
  r["reason"] = to_string(g.reason);
  r["run"] = g.run_id ? Record(*g.run_id) : Record(nullptr);
  r["fallback"] = fallback_text(g.fallback, fields);
  r["fallback_note"] = g.fallback_note;
  r["source"] = g.source;
  if (!brief) r["created_at"] = g.created_at;
  r["detail"] = g.detail;
  return r;
}

void list_gaps(const DbFilterOptions& o) {
  auto db = db::Database::open(o.db, /*create=*/false, /*read_only=*/true);
  std::vector<Record> rows;
  for (const auto& g : db->gaps(to_filter(o))) rows.push_back(gap_record(g, o.format == "table"));
  print_records(std::cout, rows, o.format);
  if (rows.empty()) note_absent_filter_values(*db, o, std::cerr);
}

// parse_user_key, naming the option in errors.
Params key_option(std::string_view option, const std::string& text, const std::vector<FieldSpec>& fields) {
  try {
    return parse_user_key(text, fields);
  } catch (const Error& e) {
    throw Error(fmt::format("{} \"{}\": {}", option, text, e.what()));
  }
}

struct GapOptions {
  std::string db, kernel, arch, key, source;
  std::string fallback = "none";
  std::string note;
};

// A fallback that leads back to the gap, directly or through other gaps, as codegen would
// select each fallback: callers that follow fallbacks would go round for ever, and codegen would
// refuse the database. Checked before the database is opened for writing (a refused gap on a new
// path leaves no file).
void refuse_fallback_loop(const GapOptions& o, const db::Gap& g) {
  if (g.fallback == "none") return;
  std::vector<db::Winner> winners;
  std::vector<db::Gap> gaps;
  if (std::filesystem::exists(o.db)) {
    auto db = db::Database::open(o.db, /*create=*/false, /*read_only=*/true);
    db::Filter filter;
    filter.family = g.family;
    filter.arch = g.arch;
    winners = db->winners(filter);
    gaps = db->gaps(filter);
  }
  const auto& fam = family(g.family);
  const auto loop = dispatch::declared_fallback_loop(fam, winners, gaps, g);
  if (loop.empty()) return;
  std::vector<std::string> steps;
  for (const auto& k : loop) steps.push_back("{" + k.pretty(fam.key_fields()) + "}");
  steps.push_back(steps.front());
  throw Error(fmt::format("--fallback \"{}\" closes a loop of fallbacks of {} on {}: {}; a caller that follows "
                          "fallbacks would never stop (fall back to a key with a kernel, or to none)",
                          o.fallback, g.family, g.arch, fmt::join(steps, " -> ")));
}

void add_gap(const GapOptions& o) {
  const auto& fields = family(o.kernel).key_fields();
  target_limits(o.arch);  // throws for an arch ktune does not know, listing those it does
  if (o.source == "measured")
    throw Error("--source 'measured' is reserved for gaps a sweep found; say where this gap is known from");
  db::Gap g;
  g.family = o.kernel;
  g.arch = o.arch;
  g.key = key_option("--key", o.key, fields);
  g.reason = db::GapReason::declared;
  g.source = o.source;
  g.fallback = o.fallback == "none" ? o.fallback : key_option("--fallback", o.fallback, fields).canonical();
  g.fallback_note = o.note;
  refuse_fallback_loop(o, g);
  auto db = db::Database::open(o.db, /*create=*/true);
  const auto id = db->add_gap(g);
  if (!globals().quiet)
    fmt::print("gap {}: {} {} {} declared ({}); fallback: {}\n", id, g.family, g.arch, g.key.pretty(fields), g.source,
               fallback_text(g.fallback, fields));
}

void remove_gap(const GapOptions& o) {
  // Gaps of a family this ktune no longer has can still be removed, by integer values.
  const auto& fields = key_fields_or_none(o.kernel);
  const auto key = key_option("--key", o.key, fields);
  auto db = db::Database::open(o.db, /*create=*/false);
  if (!db->remove_gap(o.kernel, o.arch, key, o.source))
    throw Error(
        fmt::format("{}: no gap of {} {} {} with source '{}'", o.db, o.kernel, o.arch, key.pretty(fields), o.source));
  if (!globals().quiet) fmt::print("removed gap: {} {} {} ({})\n", o.kernel, o.arch, key.pretty(fields), o.source);
}

void add_gap_identity(CLI::App& cmd, GapOptions& o) {
  cmd.add_option("--db", o.db, "Tuning database (SQLite)")->required();
  cmd.add_option("--kernel", o.kernel, "Kernel family, e.g. mla_decode")->required();
  cmd.add_option("--arch", o.arch, "Arch, e.g. gfx942")->required();
  cmd.add_option("--key", o.key, "Problem key, e.g. \"heads=16 block_len=2 causal=0 kv_dtype=fp8_e4m3fn batch=32\"")
      ->required();
  cmd.add_option("--source", o.source, "Where the gap is known from, e.g. \"aiter 0.1.19 has no fp8 2-token fold\"")
      ->required();
}

void setup_gaps(CLI::App& app) {
  auto o = std::make_shared<DbFilterOptions>();
  auto* cmd = app.add_subcommand("gaps", "List the problem keys without a kernel (measured and declared)");
  add_db_filter_options(*cmd, *o);
  cmd->callback([o] { list_gaps(*o); });
}

void setup_gap(CLI::App& app) {
  auto* gap = app.add_subcommand("gap", "Declare or withdraw a known gap");
  gap->require_subcommand(1);
  auto add = std::make_shared<GapOptions>();
  auto* add_cmd = gap->add_subcommand("add", "Declare a gap (replaces one of the same kernel, arch, key and source)");
  add_gap_identity(*add_cmd, *add);
  add_cmd->add_option("--fallback", add->fallback, "Key a dispatcher should use instead, or none")
      ->capture_default_str();
  add_cmd->add_option("--note", add->note, "Why the fallback is valid");
  add_cmd->callback([add] { add_gap(*add); });
  auto rm = std::make_shared<GapOptions>();
  auto* rm_cmd = gap->add_subcommand("rm", "Withdraw a gap");
  add_gap_identity(*rm_cmd, *rm);
  rm_cmd->callback([rm] { remove_gap(*rm); });
}

KTUNE_VERB(55, setup_gaps);
KTUNE_VERB(56, setup_gap);

}  // namespace
}  // namespace ktune::cli
