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

// A run's identity beyond its file: `ktune merge` copies runs between databases, where ids differ,
// and recognises a run it copied before by its uid (so merging an input again adds nothing). Every
// run gets one: those recorded before this step at migration, new ones as they are inserted.
constexpr std::string_view run_uid_sql = R"sql(
ALTER TABLE runs ADD COLUMN uid TEXT NOT NULL DEFAULT '';
UPDATE runs SET uid = lower(hex(randomblob(16)));
CREATE UNIQUE INDEX runs_by_uid ON runs (uid);
CREATE TRIGGER runs_get_a_uid AFTER INSERT ON runs WHEN NEW.uid = ''
BEGIN
  UPDATE runs SET uid = lower(hex(randomblob(16))) WHERE id = NEW.id;
END;
)sql";

}  // namespace

std::span<const Migration> migrations() noexcept {
  static const Migration steps[] = {
      {1, "runs, measurements, gaps, the winners view", schema_sql},
      {2, "runs.matrix_probe", matrix_probe_sql},
      {3, "runs.uid", run_uid_sql},
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
