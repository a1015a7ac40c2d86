// `ktune diff`: two databases (or two values of one key field of one database) compared key by
// key: winning configs, B's time over A's against the rows' noise bands, gaps opened and closed,
// keys of one side only, and a summary; optionally a gate that fails on regressions.
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.hpp"
#include "db/diff.hpp"
#include "db_options.hpp"
#include "db_output.hpp"
#include "verb.hpp"

namespace ktune::cli {
namespace {

constexpr size_t kWorstShown = 5;

struct DiffOptions {
  std::vector<std::string> dbs;
  std::string pair;  // FIELD=V1,V2
  std::string kernel, arch, device;
  std::string format = "table";
  double fail_over = 0;  // 0: no gate
};

db::Filter filter_of(const DiffOptions& o) {
  db::Filter f;
  if (!o.arch.empty()) f.arch = o.arch;
  if (!o.device.empty()) f.device_name = o.device;
  return f;
}

// The one family `db` holds under the filter (or --kernel, which it must hold). Throws Error.
std::string family_of(db::Database& db, const DiffOptions& o) {
  const auto names = db::families_in(db, filter_of(o));
  if (!o.kernel.empty()) {
    if (std::find(names.begin(), names.end(), o.kernel) == names.end())
      throw Error(fmt::format("{} holds no {} results (it holds {})", db.path(), o.kernel,
                              names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "))));
    return o.kernel;
  }
  if (names.empty()) throw Error(fmt::format("{} holds no results to compare", db.path()));
  if (names.size() > 1)
    throw Error(fmt::format("{} holds results of several kernel families ({}); name one with --kernel", db.path(),
                            fmt::join(names, ", ")));
  return names.front();
}

std::unique_ptr<db::Database> open_side(const std::string& path) {
  // A file of an older schema is refused here (naming `ktune migrate`), so that both sides are
  // read with the same schema; a newer one too ("upgrade ktune").
  return db::Database::open(path, /*create=*/false, /*read_only=*/true);
}

db::Pair parse_pair(const std::string& text, const Family& fam) {
  const auto eq = text.find('=');
  const auto comma = text.find(',', eq == std::string::npos ? 0 : eq);
  if (eq == std::string::npos || eq == 0 || comma == std::string::npos ||
      text.find(',', comma + 1) != std::string::npos)
    throw Error(fmt::format("--pair {}: expected FIELD=V1,V2, e.g. kv_dtype=bf16,fp8_e4m3fn", text));
  const std::string field = text.substr(0, eq);
  for (const auto& spec : fam.key_fields())
    if (spec.name == field) {
      db::Pair p{field, spec.parse(text.substr(eq + 1, comma - eq - 1)), spec.parse(text.substr(comma + 1))};
      if (p.a == p.b) throw Error(fmt::format("--pair {}: the two values are the same", text));
      return p;
    }
  std::vector<std::string> names;
  for (const auto& spec : fam.key_fields()) names.push_back(spec.name);
  throw Error(
      fmt::format("--pair {}: {} has no key field '{}' (it has {})", text, fam.name(), field, fmt::join(names, ", ")));
}

// One side, for the summary: the database, its device, arch and template hashes.
Record side_record(const db::Outcomes& o, const std::string& pair_value) {
  Record r;
  r["db"] = o.path;
  if (!pair_value.empty()) r["keys_with"] = pair_value;
  std::vector<std::string> devices, arches, hashes;
  auto add = [](std::vector<std::string>& v, const std::string& s) {
    if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
  };
  for (const auto& run : o.runs) {
    add(devices, run.device_name);
    add(arches, run.arch);
    add(hashes, run.template_hash);
  }
  r["device"] = fmt::format("{}", fmt::join(devices, ", "));
  r["arch"] = fmt::format("{}", fmt::join(arches, ", "));
  r["template_hash"] = fmt::format("{}", fmt::join(hashes, ", "));
  r["runs"] = o.runs.size();
  return r;
}

Record key_record(const db::KeyDiff& k, const Family& fam, bool brief) {
  auto time = [](const db::KeyOutcome* o) { return o && o->winner ? number(o->winner->m.median_us) : Record(nullptr); };
  auto ratio = [](const std::optional<double>& v) { return v ? number(*v) : Record(nullptr); };
  auto gap = [](const db::KeyOutcome* o) {
    return o && o->gap ? Record(std::string(to_string(o->gap->reason))) : Record(nullptr);
  };
  auto config = [&](const db::KeyOutcome* o) {
    return o && o->winner ? Record(o->winner->m.config.pretty(fam.config_fields())) : Record(nullptr);
  };
  Record r;
  r["key"] = fields_record(k.key, &fam.key_fields());
  r["a_us"] = time(k.a);
  r["b_us"] = time(k.b);
  r["b_over_a"] = ratio(k.ratio);
  r["verdict"] = to_string(k.verdict);
  r["config"] = k.ratio ? Record(k.config_changed ? "changed" : "same") : Record(nullptr);
  r["a_winner_on_b"] = ratio(k.a_winner_on_b);
  if (brief) {
    // One column of what a terminal reader needs next: B's new config, or the gap's reason.
    std::string note;
    if (k.config_changed) note = "b: " + k.b->winner->m.config.pretty(fam.config_fields());
    if (k.a && k.a->gap) note = fmt::format("a: {}", to_string(k.a->gap->reason));
    if (k.b && k.b->gap) note += fmt::format("{}b: {}", note.empty() ? "" : ", ", to_string(k.b->gap->reason));
    r["note"] = note;
    return r;
  }
  auto band = [](const db::KeyOutcome* o, bool high) {
    return o && o->winner ? number(high ? o->winner->m.p90_us : o->winner->m.p10_us) : Record(nullptr);
  };
  r["a_p10_us"] = band(k.a, false);
  r["a_p90_us"] = band(k.a, true);
  r["b_p10_us"] = band(k.b, false);
  r["b_p90_us"] = band(k.b, true);
  r["a_config"] = config(k.a);
  r["b_config"] = config(k.b);
  r["a_gap"] = gap(k.a);
  r["b_gap"] = gap(k.b);
  return r;
}

Record summary_record(const db::Diff& d, const Family& fam) {
  const auto& s = d.summary;
  Record r;
  r["keys_a"] = s.keys_a;
  r["keys_b"] = s.keys_b;
  r["both_timed"] = s.both_timed;
  Record counts = Record::object();
  for (int v = 0; v < db::kVerdicts; ++v) counts[std::string(to_string(static_cast<db::Verdict>(v)))] = s.counts[v];
  r["verdicts"] = counts;
  r["configs_changed"] = s.configs_changed;
  r["geomean_b_over_a"] = s.both_timed ? number(s.geomean_ratio) : Record(nullptr);
  r["min_b_over_a"] = s.both_timed ? number(s.min_ratio) : Record(nullptr);
  r["max_b_over_a"] = s.both_timed ? number(s.max_ratio) : Record(nullptr);
  r["a_winner_on_b_keys"] = s.a_winner_on_b_keys;
  r["a_winner_on_b_geomean"] = s.a_winner_on_b_keys ? number(s.a_winner_on_b_geomean) : Record(nullptr);
  r["a_winner_on_b_max"] = s.a_winner_on_b_keys ? number(s.a_winner_on_b_max) : Record(nullptr);
  Record worst = Record::array();
  for (const auto* k : db::worst_keys(d, kWorstShown))
    worst.push_back({{"key", fields_record(k->key, &fam.key_fields())}, {"b_over_a", number(*k->ratio)}});
  r["worst"] = worst;
  return r;
}

void print_summary_text(std::ostream& out, const Record& a, const Record& b, const db::Diff& d, const Family& fam) {
  const auto& s = d.summary;
  auto side = [](const Record& r) {
    return fmt::format("{}{} ({}, {}, templates {})", r["db"].get<std::string>(),
                       r.contains("keys_with") ? " " + r["keys_with"].get<std::string>() : "",
                       r["device"].get<std::string>(), r["arch"].get<std::string>(),
                       r["template_hash"].get<std::string>());
  };
  out << fmt::format("\nA: {}\nB: {}\n", side(a), side(b));
  out << fmt::format("keys: {} in A, {} in B, {} with a winner in both\nverdicts:", s.keys_a, s.keys_b, s.both_timed);
  for (int v = 0; v < db::kVerdicts; ++v)
    if (s.counts[v] > 0) out << fmt::format(" {} {}", to_string(static_cast<db::Verdict>(v)), s.counts[v]);
  out << '\n';
  if (s.both_timed > 0)
    out << fmt::format("B / A: geometric mean {:.4f}, min {:.3f}, max {:.3f}; winning config changed on {} keys\n",
                       s.geomean_ratio, s.min_ratio, s.max_ratio, s.configs_changed);
  if (s.a_winner_on_b_keys > 0)
    out << fmt::format("A's winner timed on B over B's winner: {} keys, geometric mean {:.4f}, max {:.3f}\n",
                       s.a_winner_on_b_keys, s.a_winner_on_b_geomean, s.a_winner_on_b_max);
  const auto worst = db::worst_keys(d, kWorstShown);
  if (!worst.empty()) out << "largest B / A:\n";
  for (const auto* k : worst) out << fmt::format("  {:.3f}  {}\n", *k->ratio, k->key.pretty(fam.key_fields()));
}

void run_diff(const DiffOptions& o) {
  if (o.dbs.size() == 1 && o.pair.empty())
    throw Error("diff: give two databases (--db A --db B), or one and --pair FIELD=V1,V2");
  if (o.dbs.size() == 2 && !o.pair.empty())
    throw Error("diff: --pair compares two values within one database; give one --db");
  auto db_a = open_side(o.dbs.front());
  auto db_b = o.dbs.size() == 2 ? open_side(o.dbs.back()) : nullptr;
  const std::string family_a = family_of(*db_a, o);
  const std::string family_b = db_b ? family_of(*db_b, o) : family_a;
  if (family_a != family_b)
    throw Error(fmt::format("{} holds {} results and {} holds {}: a diff compares one kernel family", db_a->path(),
                            family_a, db_b->path(), family_b));
  const Family& fam = family(family_a);
  auto filter = filter_of(o);
  filter.family = family_a;
  const db::Outcomes a = db::load_outcomes(*db_a, filter);
  const db::Outcomes b = db_b ? db::load_outcomes(*db_b, filter) : a;
  std::optional<db::Pair> pair;
  std::string a_value, b_value;
  if (!o.pair.empty()) {
    pair = parse_pair(o.pair, fam);
    for (const auto& spec : fam.key_fields())
      if (spec.name == pair->field) {
        a_value = pair->field + "=" + spec.format(pair->a);
        b_value = pair->field + "=" + spec.format(pair->b);
      }
  }
  const db::Diff d = db::diff(a, b, pair);
  const bool brief = o.format == "table";
  std::vector<Record> rows;
  for (const auto& k : d.keys) rows.push_back(key_record(k, fam, brief));
  const Record side_a = side_record(a, a_value), side_b = side_record(b, b_value);
  if (o.format == "json") {
    Record doc;
    doc["kernel"] = family_a;
    doc["a"] = side_a;
    doc["b"] = side_b;
    doc["summary"] = summary_record(d, fam);
    doc["keys"] = rows;
    std::cout << doc.dump(2, ' ', false, Record::error_handler_t::replace) << '\n';
  } else {
    print_records(std::cout, rows, o.format);
    if (brief) print_summary_text(std::cout, side_a, side_b, d, fam);
  }
  std::cout.flush();
  if (o.fail_over > 0) {
    const auto bad = db::regressions(d, o.fail_over);
    if (!bad.empty())
      throw Error(
          fmt::format("{} keys regress beyond {}x (--fail-over), e.g. {} ({})", bad.size(), o.fail_over,
                      bad.front()->key.pretty(fam.key_fields()),
                      bad.front()->ratio ? fmt::format("{:.3f}x", *bad.front()->ratio) : std::string("gap opened")));
  }
}

void setup(CLI::App& app) {
  auto o = std::make_shared<DiffOptions>();
  auto* cmd = app.add_subcommand("diff", "Compare two tuning databases (or two values of a key field) key by key");
  cmd->add_option("--db", o->dbs, "Tuning database: A, then B (or one with --pair)")->required()->expected(1, 2);
  cmd->add_option("--pair", o->pair,
                  "Compare two values of one key field of one database, A then B, e.g. kv_dtype=bf16,fp8_e4m3fn");
  cmd->add_option("--kernel", o->kernel, "The kernel family (needed where a database holds several)");
  cmd->add_option("--arch", o->arch, "Only results of this arch");
  cmd->add_option("--device", o->device, "Only results of this device name");
  cmd->add_option("--format", o->format, "Output format")->check(CLI::IsMember({"table", "csv", "json"}));
  cmd->add_option("--fail-over", o->fail_over,
                  "Exit with status 1 when a key regresses beyond this ratio (B slower outside noise, or a gap "
                  "opened), e.g. 1.05")
      ->check(CLI::PositiveNumber);
  cmd->callback([o] { run_diff(*o); });
}

KTUNE_VERB(57, setup);

}  // namespace
}  // namespace ktune::cli
