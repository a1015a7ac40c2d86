// Database over SQLiteCpp: one connection per Database object (open one per thread).
#include "db/database.hpp"

#include <cctype>
#include <cmath>
#include <limits>
#include <variant>

#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.hpp"
#include "db/connection.hpp"

namespace ktune::db {
namespace {

constexpr std::string_view run_columns =
    "r.id, r.started_at, r.family, r.backend, r.device_name, r.arch, r.compute_units, r.driver_version, "
    "r.compiler_version, r.template_hash, r.ktune_version, r.host, r.command, r.copy_gbps, r.matrix_tflops, "
    "r.matrix_probe, r.kind";
constexpr int run_column_count = 17;
// A fraction of a roof its run did not measure is none, whatever the row holds: earlier builds of
// ktune (and other tools) stored 0 there.
constexpr std::string_view measurement_columns =
    "m.id, m.run_id, m.key, m.config, m.shape, m.status, m.median_us, m.p10_us, m.p90_us, m.samples, m.gbps, "
    "m.tflops, "
    "CASE WHEN (SELECT roof.copy_gbps FROM runs AS roof WHERE roof.id = m.run_id) > 0 THEN m.frac_copy_bw END, "
    "CASE WHEN (SELECT roof.matrix_tflops FROM runs AS roof WHERE roof.id = m.run_id) > 0 THEN m.frac_matrix END, "
    "m.max_abs_err, m.rel_l2_err, m.detail, m.measured_at";
constexpr std::string_view compiled_columns =
    "k.id, k.run_id, k.key, k.config, k.kernel, k.symbol, k.arch, k.status, k.compile_seconds, k.from_cache, k.vgprs, "
    "k.agprs, k.sgprs, k.scratch_bytes, k.lds_bytes, k.waves_per_simd, k.detail, k.recorded_at";
constexpr std::string_view gap_columns =
    "g.id, g.family, g.arch, g.key, g.reason, g.detail, g.source, g.run_id, g.fallback, g.fallback_note, "
    "g.created_at";

// Untimed rows store NULL timing; NaN errors are stored as NULL by SQLite itself.
double zero_if_null(const SQLite::Column& c) { return c.isNull() ? 0.0 : c.getDouble(); }
double nan_if_null(const SQLite::Column& c) {
  return c.isNull() ? std::numeric_limits<double>::quiet_NaN() : c.getDouble();
}

Run read_run(SQLite::Statement& q, int i) {
  Run r;
  r.id = q.getColumn(i++).getInt64();
  r.started_at = q.getColumn(i++).getString();
  r.family = q.getColumn(i++).getString();
  r.backend = q.getColumn(i++).getString();
  r.device_name = q.getColumn(i++).getString();
  r.arch = q.getColumn(i++).getString();
  r.compute_units = q.getColumn(i++).getInt();
  r.driver_version = q.getColumn(i++).getString();
  r.compiler_version = q.getColumn(i++).getString();
  r.template_hash = q.getColumn(i++).getString();
  r.ktune_version = q.getColumn(i++).getString();
  r.host = q.getColumn(i++).getString();
  r.command = q.getColumn(i++).getString();
  r.copy_gbps = q.getColumn(i++).getDouble();
  r.matrix_tflops = q.getColumn(i++).getDouble();
  r.matrix_probe = q.getColumn(i++).getString();
  r.kind = run_kind_from_string(q.getColumn(i++).getString());
  return r;
}

// Stored text that does not parse (another tool wrote it): guard() adds the file and operation.
struct MalformedRow : Error {
  using Error::Error;
};

// A stored parameter set, or MalformedRow naming where it is (a row, or the runs it is of).
Params stored_text(const std::string& text, std::string_view table, std::string_view where, std::string_view column) {
  try {
    return Params::parse_canonical(text);
  } catch (const Error& e) {
    throw MalformedRow(fmt::format("{} {}, column {}: {}", table, where, column, e.what()));
  }
}

Params stored_params(SQLite::Statement& q, int column, std::string_view table, int64_t id) {
  return stored_text(q.getColumn(column).getString(), table, fmt::format("row {}", id), q.getColumnName(column));
}

Measurement read_measurement(SQLite::Statement& q, int i) {
  Measurement m;
  m.id = q.getColumn(i++).getInt64();
  m.run_id = q.getColumn(i++).getInt64();
  m.key = stored_params(q, i++, "measurements", m.id);
  m.config = stored_params(q, i++, "measurements", m.id);
  m.shape = stored_params(q, i++, "measurements", m.id);
  m.status = status_from_string(q.getColumn(i++).getString());
  m.median_us = zero_if_null(q.getColumn(i++));
  m.p10_us = zero_if_null(q.getColumn(i++));
  m.p90_us = zero_if_null(q.getColumn(i++));
  m.samples = q.getColumn(i++).getInt();
  m.gbps = zero_if_null(q.getColumn(i++));
  m.tflops = zero_if_null(q.getColumn(i++));
  for (auto* fraction : {&m.frac_copy_bw, &m.frac_matrix})
    if (const auto c = q.getColumn(i++); !c.isNull()) *fraction = c.getDouble();
  m.max_abs_err = nan_if_null(q.getColumn(i++));
  m.rel_l2_err = nan_if_null(q.getColumn(i++));
  m.detail = q.getColumn(i++).getString();
  m.measured_at = q.getColumn(i++).getString();
  return m;
}

std::optional<int64_t> optional_int(const SQLite::Column& c) {
  return c.isNull() ? std::nullopt : std::optional<int64_t>(c.getInt64());
}

CompiledKernel read_compiled(SQLite::Statement& q, int i) {
  CompiledKernel k;
  k.id = q.getColumn(i++).getInt64();
  k.run_id = q.getColumn(i++).getInt64();
  k.key = stored_params(q, i++, "compiled_kernels", k.id);
  k.config = stored_params(q, i++, "compiled_kernels", k.id);
  k.kernel = q.getColumn(i++).getString();
  k.symbol = q.getColumn(i++).getString();
  k.arch = q.getColumn(i++).getString();
  k.status = status_from_string(q.getColumn(i++).getString());
  k.compile_seconds = q.getColumn(i++).getDouble();
  k.from_cache = q.getColumn(i++).getInt() != 0;
  auto& r = k.resources;
  for (auto* v : {&r.vgprs, &r.agprs, &r.sgprs, &r.scratch_bytes, &r.lds_bytes, &r.waves_per_simd})
    *v = optional_int(q.getColumn(i++));
  k.detail = q.getColumn(i++).getString();
  k.recorded_at = q.getColumn(i++).getString();
  return k;
}

Gap read_gap(SQLite::Statement& q, int i) {
  Gap g;
  g.id = q.getColumn(i++).getInt64();
  g.family = q.getColumn(i++).getString();
  g.arch = q.getColumn(i++).getString();
  g.key = stored_params(q, i++, "gaps", g.id);
  g.reason = gap_reason_from_string(q.getColumn(i++).getString());
  g.detail = q.getColumn(i++).getString();
  g.source = q.getColumn(i++).getString();
  if (auto c = q.getColumn(i++); !c.isNull()) g.run_id = c.getInt64();
  g.fallback = q.getColumn(i++).getString();
  g.fallback_note = q.getColumn(i++).getString();
  g.created_at = q.getColumn(i++).getString();
  return g;
}

using Arg = std::variant<int64_t, std::string>;

// One WHERE condition and the values of its placeholders.
struct Condition {
  std::string sql;
  std::vector<Arg> args;
};

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (unsigned char ch : s)
    if (!std::isalnum(ch) && ch != '_') return false;
  return true;
}

// Conditions on a row's run (alias r).
std::vector<Condition> run_conditions(const Filter& f) {
  std::vector<Condition> c = {{"r.kind = ?", {std::string(to_string(f.run_kind))}}};
  if (f.family) c.push_back({"r.family = ?", {*f.family}});
  if (f.arch) c.push_back({"r.arch = ?", {*f.arch}});
  if (f.device_name) c.push_back({"r.device_name = ?", {*f.device_name}});
  if (f.run_id) c.push_back({"r.id = ?", {*f.run_id}});
  return c;
}

std::vector<Condition> key_conditions(const Filter& f, std::string_view json_column) {
  std::vector<Condition> c;
  for (const auto& [name, value] : f.key_equals) {
    if (!is_identifier(name)) throw Error(fmt::format("key field '{}' is not a field name", name));
    c.push_back({fmt::format("json_extract({}, ?) = ?", json_column), {"$." + name, value}});
  }
  return c;
}

// Conditions on a measurement row (alias m).
std::vector<Condition> measurement_conditions(const Filter& f) {
  auto c = key_conditions(f, "m.key_json");
  if (f.status) c.push_back({"m.status = ?", {std::string(to_string(*f.status))}});
  return c;
}

void append(std::vector<Condition>& to, std::vector<Condition> more) {
  for (auto& c : more) to.push_back(std::move(c));
}

// All conditions as one (for an EXISTS subquery).
Condition conjunction(const std::vector<Condition>& cs) {
  Condition all;
  for (const auto& c : cs) {
    all.sql += all.sql.empty() ? "" : " AND ";
    all.sql += c.sql;
    all.args.insert(all.args.end(), c.args.begin(), c.args.end());
  }
  return all;
}

SQLite::Statement select(SQLite::Database& db, std::string_view head, const std::vector<Condition>& where,
                         std::string_view tail) {
  const auto all = conjunction(where);
  SQLite::Statement q(db, fmt::format("{}{}{} {}", head, all.sql.empty() ? "" : " WHERE ", all.sql, tail));
  int i = 1;
  for (const auto& a : all.args) std::visit([&](const auto& v) { q.bind(i++, v); }, a);
  return q;
}

class SqliteDatabase final : public Database {
 public:
  SqliteDatabase(std::string path, Access access)
      : path_(std::move(path)), c_(open_connection(path_, access, migrations())) {}

  const std::string& path() const noexcept override { return path_; }

  int schema_version() override { return read_schema_version(c_, path_); }

  int64_t begin_run(const Run& r) override {
    return write("begin_run", [&] {
      SQLite::Statement q(c_,
                          "INSERT INTO runs (started_at, family, backend, device_name, arch, compute_units, "
                          "driver_version, compiler_version, template_hash, ktune_version, host, command, copy_gbps, "
                          "matrix_tflops, matrix_probe, kind) "
                          "VALUES (coalesce(nullif(?, ''), strftime('%Y-%m-%dT%H:%M:%SZ', 'now')), "
                          "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
      int i = 1;
      for (const auto* s : {&r.started_at, &r.family, &r.backend, &r.device_name, &r.arch}) q.bind(i++, *s);
      q.bind(i++, r.compute_units);
      for (const auto* s :
           {&r.driver_version, &r.compiler_version, &r.template_hash, &r.ktune_version, &r.host, &r.command})
        q.bind(i++, *s);
      q.bind(i++, r.copy_gbps);
      q.bind(i++, r.matrix_tflops);
      q.bind(i++, r.matrix_probe);
      q.bind(i++, std::string(to_string(r.kind)));
      q.exec();
      return c_.getLastInsertRowid();
    });
  }

  Run run(int64_t id) override {
    return guard("reading a run", [&] {
      SQLite::Statement q(c_, fmt::format("SELECT {} FROM runs AS r WHERE r.id = ?", run_columns));
      q.bind(1, id);
      if (!q.executeStep()) throw Error(fmt::format("{}: no run {}", path_, id));
      return read_run(q, 0);
    });
  }

  std::vector<Run> runs(const Filter& f) override {
    return guard("reading runs", [&] {
      auto where = run_conditions(f);
      if (auto m = conjunction(measurement_conditions(f)); !m.sql.empty())
        where.push_back({"EXISTS (SELECT 1 FROM measurements AS m WHERE m.run_id = r.id AND " + m.sql + ")", m.args});
      auto q = select(c_, fmt::format("SELECT {} FROM runs AS r", run_columns), where, "ORDER BY r.id");
      std::vector<Run> out;
      while (q.executeStep()) out.push_back(read_run(q, 0));
      return out;
    });
  }

  std::vector<Run> compatible_runs(const Run& like) override {
    return guard("reading compatible runs", [&] {
      std::vector<Condition> where = {{"r.kind = ?", {std::string(to_string(like.kind))}},
                                      {"r.family = ?", {like.family}},
                                      {"r.backend = ?", {like.backend}},
                                      {"r.device_name = ?", {like.device_name}},
                                      {"r.arch = ?", {like.arch}},
                                      {"r.compiler_version = ?", {like.compiler_version}},
                                      {"r.template_hash = ?", {like.template_hash}}};
      auto q = select(c_, fmt::format("SELECT {} FROM runs AS r", run_columns), where, "ORDER BY r.id");
      std::vector<Run> out;
      while (q.executeStep()) out.push_back(read_run(q, 0));
      return out;
    });
  }

  int64_t record(const Measurement& m) override {
    const auto what =
        fmt::format("record (run {}, key {}, config {})", m.run_id, m.key.canonical(), m.config.canonical());
    // SQLite stores a NaN as NULL, which the schema's checks let through and the winners view
    // sorts first: an ok result with a NaN time would win its key.
    if (m.status == Status::ok)
      for (double v : {m.median_us, m.p10_us, m.p90_us})
        if (!std::isfinite(v))
          throw Error(fmt::format("{}: {}: an ok result needs finite times (median {}, p10 {}, p90 {})", path_, what,
                                  m.median_us, m.p10_us, m.p90_us));
    return write(what, [&] {
      SQLite::Statement family(c_, "SELECT family FROM runs WHERE id = ?");
      family.bind(1, m.run_id);
      if (!family.executeStep()) throw Error(fmt::format("{}: {}: no run {}", path_, what, m.run_id));
      SQLite::Statement q(c_,
                          "INSERT INTO measurements (run_id, family, key, config, shape, status, median_us, p10_us, "
                          "p90_us, samples, gbps, tflops, frac_copy_bw, frac_matrix, max_abs_err, rel_l2_err, detail) "
                          "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
      int i = 1;
      q.bind(i++, m.run_id);
      q.bind(i++, family.getColumn(0).getString());
      q.bind(i++, m.key.canonical());
      q.bind(i++, m.config.canonical());
      q.bind(i++, m.shape.canonical());
      q.bind(i++, std::string(to_string(m.status)));
      const bool timed = m.samples > 0;
      auto bind_timing = [&](double v) {
        if (timed)
          q.bind(i++, v);
        else
          q.bind(i++);  // NULL
      };
      for (double v : {m.median_us, m.p10_us, m.p90_us}) bind_timing(v);
      q.bind(i++, m.samples);
      for (double v : {m.gbps, m.tflops}) bind_timing(v);
      for (const auto& fraction : {m.frac_copy_bw, m.frac_matrix})
        if (timed && fraction)
          q.bind(i++, *fraction);
        else
          q.bind(i++);  // NULL
      q.bind(i++, m.max_abs_err);
      q.bind(i++, m.rel_l2_err);
      q.bind(i++, m.detail);
      q.exec();
      return c_.getLastInsertRowid();
    });
  }

  std::vector<Measurement> measurements(const Filter& f) override {
    return guard("reading measurements", [&] {
      auto where = run_conditions(f);
      append(where, measurement_conditions(f));
      auto q = select(
          c_, fmt::format("SELECT {} FROM measurements AS m JOIN runs AS r ON r.id = m.run_id", measurement_columns),
          where, "ORDER BY m.id");
      std::vector<Measurement> out;
      while (q.executeStep()) out.push_back(read_measurement(q, 0));
      return out;
    });
  }

  std::vector<std::pair<Params, Params>> done(const std::vector<int64_t>& run_ids) override {
    return pairs_of("measurements", run_ids);
  }

  size_t record_compiled(const std::vector<CompiledKernel>& kernels) override {
    if (kernels.empty()) return 0;
    for (const auto& k : kernels)
      if (k.status != Status::ok && k.status != Status::compile_error)
        throw Error(fmt::format("{}: record_compiled (run {}, key {}, config {}): status {} is no compile outcome "
                                "(ok or compile_error)",
                                path_, k.run_id, k.key.canonical(), k.config.canonical(), to_string(k.status)));
    const auto what = fmt::format("record_compiled (run {}, {} rows)", kernels.front().run_id, kernels.size());
    return write(what, [&] {
      SQLite::Statement run(c_, "SELECT family, arch FROM runs WHERE id = ?");
      SQLite::Statement q(c_,
                          "INSERT INTO compiled_kernels (run_id, family, key, config, kernel, symbol, arch, status, "
                          "compile_seconds, from_cache, vgprs, agprs, sgprs, scratch_bytes, lds_bytes, waves_per_simd, "
                          "detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
      for (const auto& k : kernels) {
        run.bind(1, k.run_id);
        if (!run.executeStep()) throw Error(fmt::format("{}: {}: no run {}", path_, what, k.run_id));
        const std::string family = run.getColumn(0).getString(), arch = run.getColumn(1).getString();
        run.reset();
        int i = 1;
        q.bind(i++, k.run_id);
        q.bind(i++, family);
        q.bind(i++, k.key.canonical());
        q.bind(i++, k.config.canonical());
        q.bind(i++, k.kernel);
        q.bind(i++, k.symbol);
        q.bind(i++, arch);
        q.bind(i++, std::string(to_string(k.status)));
        q.bind(i++, k.compile_seconds);
        q.bind(i++, k.from_cache ? 1 : 0);
        const auto& r = k.resources;
        for (const auto* v : {&r.vgprs, &r.agprs, &r.sgprs, &r.scratch_bytes, &r.lds_bytes, &r.waves_per_simd})
          if (*v)
            q.bind(i++, **v);
          else
            q.bind(i++);  // NULL: the code object does not say
        q.bind(i++, k.detail);
        q.exec();
        q.reset();
      }
      return kernels.size();
    });
  }

  std::vector<CompiledKernel> compiled_kernels(const Filter& f) override {
    return guard("reading compiled kernels", [&] {
      auto compile_runs = f;
      compile_runs.run_kind = RunKind::compile;
      auto where = run_conditions(compile_runs);
      append(where, key_conditions(f, "k.key_json"));
      if (f.status) where.push_back({"k.status = ?", {std::string(to_string(*f.status))}});
      auto q = select(
          c_, fmt::format("SELECT {} FROM compiled_kernels AS k JOIN runs AS r ON r.id = k.run_id", compiled_columns),
          where, "ORDER BY k.id");
      std::vector<CompiledKernel> out;
      while (q.executeStep()) out.push_back(read_compiled(q, 0));
      return out;
    });
  }

  std::vector<std::pair<Params, Params>> compiled(const std::vector<int64_t>& run_ids) override {
    return pairs_of("compiled_kernels", run_ids);
  }

  int64_t add_gap(const Gap& g) override {
    const auto what = fmt::format("add_gap ({} {} {}, source '{}')", g.family, g.arch, g.key.canonical(), g.source);
    // Only canonical text is stored, so that every reader can parse every fallback.
    const std::string fallback = g.fallback.empty() ? "none" : g.fallback;
    if (fallback != "none") {
      try {
        Params::parse_canonical(fallback);
      } catch (const Error& e) {
        throw Error(fmt::format("{}: {}: fallback: {}", path_, what, e.what()));
      }
    }
    return write(what, [&] {
      SQLite::Statement q(c_, "INSERT INTO gaps (family, arch, key, reason, detail, source, run_id, fallback, "
                              "fallback_note) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) "
                              "ON CONFLICT (family, arch, key, source) DO UPDATE SET reason = excluded.reason, "
                              "detail = excluded.detail, run_id = excluded.run_id, fallback = excluded.fallback, "
                              "fallback_note = excluded.fallback_note, created_at = excluded.created_at");
      q.bind(1, g.family);
      q.bind(2, g.arch);
      q.bind(3, g.key.canonical());
      q.bind(4, std::string(to_string(g.reason)));
      q.bind(5, g.detail);
      q.bind(6, g.source);
      if (g.run_id)
        q.bind(7, *g.run_id);
      else
        q.bind(7);  // NULL
      q.bind(8, fallback);
      q.bind(9, g.fallback_note);
      q.exec();
      SQLite::Statement id(c_, "SELECT id FROM gaps WHERE family = ? AND arch = ? AND key = ? AND source = ?");
      id.bind(1, g.family);
      id.bind(2, g.arch);
      id.bind(3, g.key.canonical());
      id.bind(4, g.source);
      id.executeStep();
      return id.getColumn(0).getInt64();
    });
  }

  bool remove_gap(const std::string& family, const std::string& arch, const Params& key,
                  const std::string& source) override {
    return guard("remove_gap", [&] {
      SQLite::Statement q(c_, "DELETE FROM gaps WHERE family = ? AND arch = ? AND key = ? AND source = ?");
      q.bind(1, family);
      q.bind(2, arch);
      q.bind(3, key.canonical());
      q.bind(4, source);
      return q.exec() > 0;
    });
  }

  std::vector<Gap> gaps(const Filter& f) override {
    return guard("reading gaps", [&] {
      std::vector<Condition> where;
      if (f.family) where.push_back({"g.family = ?", {*f.family}});
      if (f.arch) where.push_back({"g.arch = ?", {*f.arch}});
      if (f.device_name) where.push_back({"(g.run_id IS NULL OR r.device_name = ?)", {*f.device_name}});
      if (f.run_id) where.push_back({"g.run_id = ?", {*f.run_id}});
      append(where, key_conditions(f, "g.key_json"));
      auto q = select(c_, fmt::format("SELECT {} FROM gaps AS g LEFT JOIN runs AS r ON r.id = g.run_id", gap_columns),
                      where, "ORDER BY g.family, g.arch, g.key, g.source");
      std::vector<Gap> out;
      while (q.executeStep()) out.push_back(read_gap(q, 0));
      return out;
    });
  }

  std::vector<std::string> arches(const std::string& family) override {
    return guard("reading arches", [&] {
      SQLite::Statement q(c_, "SELECT arch FROM runs WHERE family = ?1 AND kind = 'sweep' "
                              "UNION SELECT arch FROM gaps WHERE family = ?1 ORDER BY arch");
      q.bind(1, family);
      std::vector<std::string> out;
      while (q.executeStep()) out.push_back(q.getColumn(0).getString());
      return out;
    });
  }

  std::vector<Winner> winners(const Filter& f) override {
    return guard("reading winners", [&] {
      auto where = run_conditions(f);
      append(where, measurement_conditions(f));
      auto q = select(c_,
                      fmt::format("SELECT {}, {} FROM winners AS m JOIN runs AS r ON r.id = m.run_id", run_columns,
                                  measurement_columns),
                      where, "ORDER BY r.id, m.key");
      std::vector<Winner> out;
      while (q.executeStep()) out.push_back({read_run(q, 0), read_measurement(q, run_column_count)});
      return out;
    });
  }

  std::vector<int> adopt_template_hashes(const std::vector<HashAdoption>& adoptions) override {
    return write("adopt_template_hashes", [&] {
      SQLite::Statement q(c_, "UPDATE runs SET template_hash = ?3 WHERE family = ?1 AND template_hash = ?2");
      std::vector<int> changed;
      for (const auto& a : adoptions) {
        q.bind(1, a.family);
        q.bind(2, a.from);
        q.bind(3, a.to);
        changed.push_back(q.exec());
        q.reset();
      }
      return changed;
    });
  }

 private:
  // The distinct (key, config) pairs of `table` in `run_ids`, sorted by canonical text.
  std::vector<std::pair<Params, Params>> pairs_of(std::string_view table, const std::vector<int64_t>& run_ids) {
    if (run_ids.empty()) return {};
    return guard(fmt::format("reading the candidates of {}", table), [&] {
      std::string placeholders;
      for (size_t i = 0; i < run_ids.size(); ++i) placeholders += i ? ", ?" : "?";
      SQLite::Statement q(c_, fmt::format("SELECT DISTINCT key, config FROM {} WHERE run_id IN ({}) "
                                          "ORDER BY key, config",
                                          table, placeholders));
      int i = 1;
      for (auto id : run_ids) q.bind(i++, id);
      std::vector<std::pair<Params, Params>> out;
      while (q.executeStep()) {
        const auto where = fmt::format("run {}", fmt::join(run_ids, ", "));
        out.emplace_back(stored_text(q.getColumn(0).getString(), table, where, "key"),
                         stored_text(q.getColumn(1).getString(), table, where, "config"));
      }
      return out;
    });
  }

  // Runs `body`, turning SQLite's exceptions into Errors that name the file and the operation.
  template <class Body>
  auto guard(std::string_view what, Body&& body) -> decltype(body()) {
    try {
      return body();
    } catch (const SQLite::Exception& e) {
      throw Error(fmt::format("{}: {}: {}", path_, what, describe(e)));
    } catch (const MalformedRow& e) {
      throw Error(fmt::format("{}: {}: {}", path_, what, e.what()));
    }
  }

  // `body` as one committed transaction. IMMEDIATE takes the write lock up front, so that a
  // concurrent writer makes us wait (busy timeout) instead of failing half-way.
  template <class Body>
  auto write(std::string_view what, Body&& body) -> decltype(body()) {
    return guard(what, [&] {
      SQLite::Transaction tx(c_, SQLite::TransactionBehavior::IMMEDIATE);
      auto result = body();
      tx.commit();
      return result;
    });
  }

  std::string path_;
  SQLite::Database c_;
};

}  // namespace

std::string matrix_probe_of(const Run& r) {
  return r.matrix_probe.empty() ? "not recorded (a run before schema version 2)" : r.matrix_probe;
}

int Database::current_schema_version() noexcept { return migrations().back().version; }

std::unique_ptr<Database> Database::open(const std::string& path, bool create, bool read_only) {
  const auto access = read_only ? Access::read_only : create ? Access::create : Access::read_write;
  return std::make_unique<SqliteDatabase>(path, access);
}

int Database::migrate_file(const std::string& path) {
  int found = 0;
  open_connection(path, Access::read_write, migrations(), &found);
  return found;
}

}  // namespace ktune::db
