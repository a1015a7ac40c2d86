// Schema versions: the step list, migrating files built by hand at older versions, a failing
// step that must leave the file as it was, and concurrent first opens.
#include <filesystem>
#include <thread>
#include <vector>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "db/connection.hpp"
#include "db/migrations.hpp"
#include "db/schema_sql.hpp"
#include "db_test_support.hpp"

namespace ktune::db {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

int64_t count(SQLite::Database& c, const std::string& table) {
  SQLite::Statement q(c, "SELECT count(*) FROM " + table);
  q.executeStep();
  return q.getColumn(0).getInt64();
}

// ktune's steps followed by `extra`, as a later ktune would have them.
std::vector<Migration> steps_plus(std::initializer_list<Migration> extra) {
  std::vector<Migration> steps(migrations().begin(), migrations().end());
  steps.insert(steps.end(), extra);
  return steps;
}

const Migration add_note_column = {Database::current_schema_version() + 1, "runs.note",
                                   "ALTER TABLE runs ADD COLUMN note TEXT NOT NULL DEFAULT '';"
                                   "UPDATE runs SET note = 'migrated';"};

TEST(DbMigration, StepsAreNumberedFromOne) {
  const auto steps = migrations();
  ASSERT_FALSE(steps.empty());
  for (size_t i = 0; i < steps.size(); ++i) {
    EXPECT_EQ(steps[i].version, static_cast<int>(i + 1));
    EXPECT_FALSE(steps[i].sql.empty());
  }
  EXPECT_EQ(Database::current_schema_version(), steps.back().version);
  EXPECT_EQ(steps.front().sql, schema_sql) << "schema.sql is the first step";
}

TEST(DbMigration, EmptyFileIsVersionZeroAndMigrates) {
  test::TempDir dir;
  const auto path = dir.file("empty.db");
  test::write_file(path, "");
  EXPECT_THAT(test::open_error(path, false, true), HasSubstr("an empty database, without ktune's tables"));
  auto db = Database::open(path, false);
  EXPECT_EQ(db->schema_version(), Database::current_schema_version());
  EXPECT_EQ(db->begin_run(test::sample_run()), 1);
}

TEST(DbMigration, HandBuiltOlderFileMigratesKeepingItsRows) {
  test::TempDir dir;
  const auto path = dir.file("v1.db");
  test::write_v1_by_hand(path);
  const auto steps = steps_plus({add_note_column});

  auto c = open_connection(path, Access::read_write, steps);
  EXPECT_EQ(read_schema_version(c, path), add_note_column.version);
  EXPECT_EQ(count(c, "measurements"), 2);
  SQLite::Statement q(c, "SELECT id, device_name, note FROM runs");
  ASSERT_TRUE(q.executeStep());
  EXPECT_EQ(q.getColumn(0).getInt64(), 7);
  EXPECT_EQ(q.getColumn(1).getString(), "AMD Instinct MI300X");
  EXPECT_EQ(q.getColumn(2).getString(), "migrated");
}

// A step that rebuilds a table the usual SQLite way (a new one, the rows copied, the old one
// dropped, the new one renamed) keeps the rows that refer to it: foreign keys, whose ON DELETE
// CASCADE would follow the drop, are switched on only after migrating. (Such a step must drop the
// views and the triggers naming the table, on it or on other tables, and make them again: this one
// does, and the trigger of version 2 still refuses a roof without its probe.)
TEST(DbMigration, AStepThatRebuildsRunsKeepsTheRowsReferringToThem) {
  test::TempDir dir;
  const auto path = dir.file("v1.db");
  test::write_v1_by_hand(path);
  open_connection(path, Access::read_write, migrations());  // the runs table of today's version
  std::string create, drop_views, create_again;             // (views and triggers name runs: dropped and made again)
  {
    SQLite::Database raw(path, SQLite::OPEN_READONLY);
    create = raw.execAndGet("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'runs'").getString();
    SQLite::Statement named(raw, "SELECT type, name, sql FROM sqlite_master WHERE type IN ('view', 'trigger') "
                                 "ORDER BY type DESC");  // views first
    while (named.executeStep()) {
      drop_views += fmt::format("DROP {} {}; ", named.getColumn(0).getString() == "view" ? "VIEW" : "TRIGGER",
                                named.getColumn(1).getString());
      create_again += named.getColumn(2).getString() + "; ";
    }
  }
  ASSERT_NE(create_again.find("CREATE TRIGGER"), std::string::npos) << create_again;
  const std::string head = "CREATE TABLE runs";
  ASSERT_EQ(create.rfind(head, 0), 0u) << create;
  const std::string rebuild = drop_views + "CREATE TABLE runs_new" + create.substr(head.size()) +
                              "; INSERT INTO runs_new SELECT * FROM runs; DROP TABLE runs; "
                              "ALTER TABLE runs_new RENAME TO runs; " +
                              create_again;
  const Migration rebuild_runs = {Database::current_schema_version() + 1, "runs rebuilt", rebuild};
  auto c = open_connection(path, Access::read_write, steps_plus({rebuild_runs}));
  EXPECT_EQ(read_schema_version(c, path), rebuild_runs.version);
  EXPECT_EQ(count(c, "runs"), 2);
  EXPECT_EQ(count(c, "measurements"), 2) << "the drop of the old runs cascaded";
  EXPECT_THROW(c.exec("INSERT INTO runs (started_at, family, backend, device_name, arch, compute_units, driver_version,"
                      " compiler_version, template_hash, ktune_version, host, command, copy_gbps, matrix_tflops) VALUES"
                      " ('t', 'mla_decode', 'cuda', 'd', 'sm_90a', 1, '', '', '', '', '', '', 1, 640)"),
               SQLite::Exception);
}

// Version 2 names the probe of each run's matrix roof: a version 1 run keeps its roof with no name
// (it was not recorded), and from then on a roof must come with its probe's name.
TEST(DbMigration, Version1RunsKeepTheirRoofsWithTheProbeNotRecorded) {
  test::TempDir dir;
  const auto path = dir.file("v1.db");
  test::write_v1_by_hand(path);
  EXPECT_EQ(Database::migrate_file(path), 1);
  auto db = Database::open(path, false, /*read_only=*/true);
  EXPECT_EQ(db->schema_version(), Database::current_schema_version());
  const auto runs = db->runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_DOUBLE_EQ(runs[1].matrix_tflops, 631.8);
  EXPECT_EQ(runs[1].matrix_probe, "") << "not recorded, and not guessed";
  EXPECT_EQ(runs[0].matrix_probe, "");
  db.reset();
  auto writer = Database::open(path, false);
  auto unnamed = test::sample_run();
  unnamed.matrix_tflops = 640;
  EXPECT_THROW(writer->begin_run(unnamed), Error);
  EXPECT_EQ(Database::migrate_file(path), Database::current_schema_version())
      << "at the current version: nothing to do";
}

TEST(DbMigration, FileMigratedByANewerKtuneIsRefusedByThisOne) {
  test::TempDir dir;
  const auto path = dir.file("v2.db");
  test::write_v1_by_hand(path);
  open_connection(path, Access::read_write, steps_plus({add_note_column}));
  EXPECT_THAT(test::open_error(path, false, false),
              AllOf(HasSubstr(path), HasSubstr(fmt::format("schema version {}", add_note_column.version)),
                    HasSubstr("upgrade ktune")));
}

TEST(DbMigration, ReadOnlyOpenDoesNotMigrate) {
  test::TempDir dir;
  const auto path = dir.file("v1.db");
  test::write_v1_by_hand(path);
  const auto before = test::fingerprint(path);
  try {
    open_connection(path, Access::read_only, steps_plus({add_note_column}));
    ADD_FAILURE() << "a read-only open accepted a file that needs migrating";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr(path), HasSubstr("older than"), HasSubstr("ktune migrate --db " + path)));
  }
  EXPECT_EQ(test::fingerprint(path), before);
  // The command it names is one a shell takes as it is, whatever the path holds.
  const auto odd = dir.file("it's v1.db");
  test::write_v1_by_hand(odd);
  EXPECT_THAT(test::open_error(odd, false, true),
              HasSubstr("`ktune migrate --db '" + dir.path() + "/it'\\''s v1.db'`"));
}

TEST(DbMigration, FailingStepLeavesTheFileByteIdentical) {
  test::TempDir dir;
  const auto path = dir.file("v1.db");
  test::write_v1_by_hand(path);
  const auto before = test::fingerprint(path);
  const Migration broken = {add_note_column.version + 1, "a clashing table", "CREATE TABLE runs (x);"};
  try {
    open_connection(path, Access::read_write, steps_plus({add_note_column, broken}));
    ADD_FAILURE() << "a failing migration step went unnoticed";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(),
                AllOf(HasSubstr(path), HasSubstr(fmt::format("failed at step {}", broken.version)),
                      HasSubstr("a clashing table"), HasSubstr("already exists"), HasSubstr("the file is unchanged")));
  }
  EXPECT_EQ(test::fingerprint(path), before);
  auto c = open_connection(path, Access::read_only, migrations().first(1));  // still version 1, with its rows
  EXPECT_EQ(count(c, "measurements"), 2);
}

TEST(DbMigration, ConcurrentFirstOpensMigrateOnce) {
  // The race (several first opens entering WAL at once) is short: many rounds make it likely.
  test::TempDir dir;
  for (int round = 0; round < 60; ++round) {
    const auto path = dir.file(fmt::format("shared-{}.db", round));
    std::vector<std::string> errors(8);
    std::vector<std::thread> threads;
    for (auto& error : errors) threads.emplace_back([&] { error = test::open_error(path, true, false); });
    for (auto& t : threads) t.join();
    for (const auto& error : errors) ASSERT_EQ(error, "") << "round " << round;
    SQLite::Database raw(path, SQLite::OPEN_READONLY);
    ASSERT_EQ(count(raw, "meta"), 1);
  }
}

}  // namespace
}  // namespace ktune::db
