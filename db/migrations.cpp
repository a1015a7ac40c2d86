#include "db/migrations.hpp"

#include <cstdint>
#include <limits>

#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <fmt/format.h>

#include "common/error.hpp"
#include "db/schema_sql.hpp"

namespace ktune::db {
namespace {

// A run's matrix roof is a fraction's denominator only with the instruction its probe issued: on
// sm_90a the probe issued mma.sync before it issued wgmma, whose peak is well above mma.sync's.
// Runs recorded before this step keep '' (not recorded); from it on, a run names the probe exactly
// when it measured a roof. The trigger guards inserts: ktune writes a run once (begin_run) and
// never updates it.
constexpr std::string_view matrix_probe_sql = R"sql(
ALTER TABLE runs ADD COLUMN matrix_probe TEXT NOT NULL DEFAULT '';
CREATE TRIGGER runs_name_their_matrix_probe BEFORE INSERT ON runs
WHEN (NEW.matrix_probe = '') <> (NEW.matrix_tflops = 0)
BEGIN
  SELECT RAISE(ABORT, 'runs.matrix_probe must name the probe of a measured matrix_tflops, and only then');
END;
)sql";

// A compile-only run (`ktune compile --db`): no device, no roofs, no timings. runs.kind tells it
// from a sweep, and the triggers keep the two apart: a measurement belongs to a sweep run, a
// compiled kernel to a compile run, so no reader of measurements or winners can take a compile
// for a timing. One row per kernel of each candidate compiled (a candidate's program may hold
// several kernels: mla_decode's main kernel and its combine), or one per candidate whose program
// failed. Resource columns are what the code object's metadata says, NULL where it says nothing
// (a target whose objects ktune does not read).
constexpr std::string_view compiled_kernels_sql = R"sql(
ALTER TABLE runs ADD COLUMN kind TEXT NOT NULL DEFAULT 'sweep' CHECK (kind IN ('sweep', 'compile'));
CREATE TRIGGER compile_runs_have_no_roofs BEFORE INSERT ON runs
WHEN NEW.kind = 'compile' AND (NEW.copy_gbps <> 0 OR NEW.matrix_tflops <> 0)
BEGIN
  SELECT RAISE(ABORT, 'a compile-only run measures no roofs');
END;
CREATE TRIGGER measurements_belong_to_sweeps BEFORE INSERT ON measurements
WHEN (SELECT kind FROM runs WHERE id = NEW.run_id) <> 'sweep'
BEGIN
  SELECT RAISE(ABORT, 'measurements belong to sweep runs, not to a compile-only run');
END;
CREATE TABLE compiled_kernels (
  id              INTEGER PRIMARY KEY,
  run_id          INTEGER NOT NULL,
  family          TEXT NOT NULL,
  key             TEXT NOT NULL,
  config          TEXT NOT NULL,
  kernel          TEXT NOT NULL,            -- the name expression; '' where the program failed
  symbol          TEXT NOT NULL,            -- the lowered (mangled) name; '' where the program failed
  arch            TEXT NOT NULL CHECK (arch <> ''),
  status          TEXT NOT NULL CHECK (status IN ('ok', 'compile_error')),
  compile_seconds REAL NOT NULL CHECK (compile_seconds >= 0),
  from_cache      INTEGER NOT NULL CHECK (from_cache IN (0, 1)),
  vgprs           INTEGER CHECK (vgprs >= 0),
  agprs           INTEGER CHECK (agprs >= 0),
  sgprs           INTEGER CHECK (sgprs >= 0),
  scratch_bytes   INTEGER CHECK (scratch_bytes >= 0),
  lds_bytes       INTEGER CHECK (lds_bytes >= 0),
  waves_per_simd  INTEGER CHECK (waves_per_simd >= 0),
  detail          TEXT NOT NULL,
  recorded_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  key_json        TEXT GENERATED ALWAYS AS (CASE key WHEN '' THEN '{}'
                    ELSE '{"' || replace(replace(key, '=', '":'), ',', ',"') || '}' END) VIRTUAL,
  config_json     TEXT GENERATED ALWAYS AS (CASE config WHEN '' THEN '{}'
                    ELSE '{"' || replace(replace(config, '=', '":'), ',', ',"') || '}' END) VIRTUAL,
  FOREIGN KEY (run_id, family) REFERENCES runs (id, family) ON DELETE CASCADE,
  CHECK ((status = 'ok') = (symbol <> ''))
);
CREATE INDEX compiled_kernels_by_run_key ON compiled_kernels (run_id, key, config);
CREATE TRIGGER compiled_kernels_belong_to_compile_runs BEFORE INSERT ON compiled_kernels
WHEN (SELECT kind FROM runs WHERE id = NEW.run_id) <> 'compile'
BEGIN
  SELECT RAISE(ABORT, 'compiled kernels belong to compile-only runs');
END;
)sql";

}  // namespace

std::span<const Migration> migrations() noexcept {
  static const Migration steps[] = {
      {1, "runs, measurements, gaps, the winners view", schema_sql},
      {2, "runs.matrix_probe", matrix_probe_sql},
      {3, "runs.kind, compiled_kernels", compiled_kernels_sql},
  };
  return steps;
}

int read_schema_version(SQLite::Database& c, const std::string& path) {
  try {
    // One statement, so one snapshot: outside a transaction, two statements could straddle
    // another process's migration and see no meta table but the tables created with it.
    SQLite::Statement objects(
        c, "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'), "
           "(SELECT group_concat(name, ', ') FROM (SELECT name FROM sqlite_master "
           "WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name LIMIT 6)), "
           "(SELECT group_concat(name, ', ') FROM pragma_table_info('meta')), "
           "(SELECT count(*) FROM pragma_table_info('meta') WHERE name IN ('id', 'schema_version'))");
    objects.executeStep();
    if (objects.getColumn(0).getInt() == 0) {
      if (!objects.getColumn(1).isNull())
        throw Error(fmt::format("{}: a SQLite database but not a ktune one: no meta table, but {}", path,
                                objects.getColumn(1).getString()));
      return 0;
    }
    if (objects.getColumn(3).getInt() != 2)  // another tool's table of that name
      throw Error(fmt::format("{}: a SQLite database but not a ktune one: its meta table has the columns {}, not "
                              "ktune's id and schema_version",
                              path, objects.getColumn(2).getString()));
    SQLite::Statement q(c, "SELECT schema_version FROM meta WHERE id = 1");
    if (!q.executeStep()) throw Error(fmt::format("{}: the meta table has no row; not a ktune database", path));
    const int64_t version = q.getColumn(0).getInt64();
    if (version < 1 || version > std::numeric_limits<int>::max())
      throw Error(fmt::format("{}: schema version {} is none that ktune writes; not a ktune database", path, version));
    return static_cast<int>(version);
  } catch (const SQLite::Exception& e) {
    throw Error(fmt::format("{}: cannot read the schema version: {}", path, e.what()));
  }
}

void refuse_newer(const std::string& path, int found, int latest) {
  if (found > latest)
    throw Error(fmt::format("{}: schema version {} is newer than version {}, the newest this ktune ({}) knows; "
                            "upgrade ktune to use this file",
                            path, found, latest, KTUNE_VERSION));
}

int migrate(SQLite::Database& c, const std::string& path, std::span<const Migration> steps) {
  const int latest = steps.back().version;
  try {
    SQLite::Transaction tx(c, SQLite::TransactionBehavior::IMMEDIATE);
    const int found = read_schema_version(c, path);
    refuse_newer(path, found, latest);
    if (found == latest) return found;  // another process migrated it while we waited for the lock
    for (const auto& step : steps) {
      if (step.version <= found) continue;
      try {
        c.exec(std::string(step.sql));
      } catch (const SQLite::Exception& e) {
        throw Error(
            fmt::format("{}: migrating schema version {} to {} failed at step {} ({}): {}; the file is unchanged", path,
                        found, latest, step.version, step.what, e.what()));
      }
    }
    SQLite::Statement record(c, "INSERT INTO meta (id, schema_version, created_by) VALUES (1, ?1, ?2) "
                                "ON CONFLICT (id) DO UPDATE SET schema_version = excluded.schema_version");
    record.bind(1, latest);
    record.bind(2, std::string("ktune ") + KTUNE_VERSION);
    record.exec();
    tx.commit();
    return found;
  } catch (const SQLite::Exception& e) {
    throw Error(fmt::format("{}: migrating to schema version {} failed: {}", path, latest, e.what()));
  }
}

}  // namespace ktune::db
