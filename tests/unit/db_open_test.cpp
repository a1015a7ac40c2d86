// Opening database files: creation, reopening, PRAGMAs, and every file Database::open must
// reject without changing a byte of it.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "db_test_support.hpp"

namespace ktune::db {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

// A database with one run and `n` measurements (each with a long detail, to fill pages).
void fill(const std::string& path, int n) {
  auto db = Database::open(path, true);
  const auto run = db->begin_run(test::sample_run());
  for (int i = 0; i < n; ++i) {
    auto m = test::timed(run, test::key(16), test::config(i), 10 + i);
    m.detail = std::string(300, char('a' + i % 26));
    db->record(m);
  }
}

std::string raw_text(const std::string& path, const std::string& sql) {
  SQLite::Database raw(path, SQLite::OPEN_READONLY);
  SQLite::Statement q(raw, sql);
  return q.executeStep() ? q.getColumn(0).getString() : "";
}

TEST(DbOpen, CreatesReopensAndSetsWal) {
  test::TempDir dir;
  const auto path = dir.file("ktune.db");
  {
    auto db = Database::open(path, true);
    EXPECT_EQ(db->schema_version(), Database::current_schema_version());
    EXPECT_EQ(db->path(), path);
    db->begin_run(test::sample_run());
  }
  EXPECT_EQ(raw_text(path, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(raw_text(path, "SELECT created_by FROM meta"), std::string("ktune ") + KTUNE_VERSION);
  auto db = Database::open(path, false);
  EXPECT_EQ(db->runs().size(), 1u);
  auto reader = Database::open(path, false, true);
  EXPECT_EQ(reader->runs().size(), 1u);
}

TEST(DbOpen, MissingFileIsAnErrorUnlessCreating) {
  test::TempDir dir;
  const auto path = dir.file("absent.db");
  EXPECT_THAT(test::open_error(path, false, false), AllOf(HasSubstr(path), HasSubstr("no such database file")));
  EXPECT_THAT(test::open_error(path, true, true), AllOf(HasSubstr(path), HasSubstr("no such database file")));
  EXPECT_FALSE(fs::exists(path));
  EXPECT_EQ(test::open_error(path, true, false), "");
  EXPECT_TRUE(fs::exists(path));
}

TEST(DbOpen, ReadOnlyConnectionRefusesWrites) {
  test::TempDir dir;
  const auto path = dir.file("ktune.db");
  fill(path, 1);
  const auto before = test::fingerprint(path);
  auto db = Database::open(path, false, true);
  try {
    db->begin_run(test::sample_run());
    ADD_FAILURE() << "a read-only connection wrote a run";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr(path), HasSubstr("readonly")));
  }
  db.reset();
  EXPECT_EQ(test::fingerprint(path), before);
}

TEST(DbOpen, NotASqliteFileIsRejectedUnchanged) {
  test::TempDir dir;
  for (std::string contents : {std::string(4096, 'x'), std::string("id,median\n1,2\n"), std::string("S")}) {
    const auto path = dir.file("results.csv");
    test::write_file(path, contents);
    const auto before = test::fingerprint(path);
    for (bool read_only : {false, true})
      EXPECT_THAT(test::open_error(path, true, read_only), AllOf(HasSubstr(path), HasSubstr("file is not a database")));
    EXPECT_EQ(test::fingerprint(path), before);
    EXPECT_FALSE(fs::exists(path + "-wal"));
  }
}

TEST(DbOpen, TruncatedFileIsRejectedUnchanged) {
  test::TempDir dir;
  const auto good = dir.file("good.db");
  fill(good, 200);
  const auto bytes = test::read_file(good);
  ASSERT_GT(bytes.size(), 16u * 4096) << "the sample database is too small to truncate meaningfully";
  for (size_t size : {bytes.size() / 2, size_t(4096), bytes.size() - 4096}) {
    const auto path = dir.file("truncated.db");
    test::write_file(path, std::string_view(bytes).substr(0, size));
    const auto before = test::fingerprint(path);
    for (bool read_only : {false, true})
      EXPECT_THAT(
          test::open_error(path, false, read_only),
          AllOf(HasSubstr(path), HasSubstr("truncated"), HasSubstr(fmt::format("the file has {} bytes", size))));
    EXPECT_EQ(test::fingerprint(path), before);
  }
  // Cut inside the 100-byte header, after SQLite's magic: truncated, not "not a database".
  const auto path = dir.file("header.db");
  test::write_file(path, std::string_view(bytes).substr(0, 50));
  for (bool read_only : {false, true})
    EXPECT_THAT(test::open_error(path, false, read_only),
                AllOf(HasSubstr(path), HasSubstr("truncated: 50 bytes, shorter than the 100-byte SQLite header")));
  EXPECT_EQ(test::open_error(good, false, true), "") << "the untruncated original must open";
}

TEST(DbOpen, CorruptPagesAreRejectedForWritingAndReportedWhenRead) {
  test::TempDir dir;
  const auto path = dir.file("corrupt.db");
  fill(path, 200);
  auto bytes = test::read_file(path);
  const size_t pages = bytes.size() / 4096;
  for (size_t i = pages / 2 * 4096; i < bytes.size(); ++i) bytes[i] = char(0xA5);
  test::write_file(path, bytes);
  const auto before = test::fingerprint(path);

  EXPECT_THAT(test::open_error(path, false, false), AllOf(HasSubstr(path), HasSubstr("corrupt")));
  EXPECT_EQ(test::fingerprint(path), before);
  try {
    Database::open(path, false, true)->measurements();
    ADD_FAILURE() << "reading a corrupt file succeeded";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr(path), HasSubstr("malformed")));
  }
  EXPECT_EQ(test::fingerprint(path), before);
}

TEST(DbOpen, NewerSchemaIsRefusedUnchanged) {
  test::TempDir dir;
  const auto path = dir.file("future.db");
  fill(path, 3);
  const int newer = Database::current_schema_version() + 1;
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE);
    raw.exec(fmt::format("UPDATE meta SET schema_version = {}", newer));
  }
  const auto before = test::fingerprint(path);
  for (bool read_only : {false, true})
    EXPECT_THAT(test::open_error(path, false, read_only),
                AllOf(HasSubstr(path),
                      HasSubstr(fmt::format("schema version {} is newer than version {}", newer,
                                            Database::current_schema_version())),
                      HasSubstr("upgrade ktune")));
  EXPECT_EQ(test::fingerprint(path), before);
}

// (A table named like SQLite's own, sqlite3_cache, is still another tool's: LIKE's '_' matches
// any character, so SQLite's prefix must be matched escaped. So is a table named meta without
// ktune's columns: it read "no such column: schema_version".)
TEST(DbOpen, ForeignSqliteDatabaseIsRejectedUnchanged) {
  test::TempDir dir;
  for (const std::string table : {"users", "sqlite3_cache", "meta"}) {  // meta: not ktune's columns
    const auto path = dir.file(table + ".db");
    {
      SQLite::Database raw(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
      raw.exec(fmt::format("CREATE TABLE {} (name TEXT); INSERT INTO {} VALUES ('ada')", table, table));
    }
    const auto before = test::fingerprint(path);
    for (bool read_only : {false, true})
      EXPECT_THAT(test::open_error(path, false, read_only),
                  AllOf(HasSubstr(path), HasSubstr("not a ktune one"), HasSubstr(table)));
    EXPECT_EQ(test::fingerprint(path), before) << table;
  }
}

// A version past int's range is read whole, not cut to its low 32 bits (2^32 + 1 is not 1).
TEST(DbOpen, SchemaVersionsKtuneNeverWritesAreRefusedUnchanged) {
  test::TempDir dir;
  const auto path = dir.file("odd.db");
  fill(path, 1);
  for (const int64_t odd : {int64_t{4294967297}, int64_t{0}, int64_t{-1}}) {
    {
      SQLite::Database raw(path, SQLite::OPEN_READWRITE);
      raw.exec(fmt::format("UPDATE meta SET schema_version = {}", odd));
    }
    const auto before = test::fingerprint(path);
    for (bool read_only : {false, true})
      EXPECT_THAT(test::open_error(path, false, read_only),
                  AllOf(HasSubstr(path), HasSubstr(fmt::format("schema version {}", odd))))
          << odd;
    EXPECT_EQ(test::fingerprint(path), before) << odd;
  }
}

TEST(DbOpen, ReadOnlyFileIsRejectedForWritingUnchanged) {
  test::TempDir dir;
  const auto path = dir.file("ro.db");
  fill(path, 3);
  fs::permissions(dir.path(), fs::perms(0755));
  fs::permissions(path, fs::perms(0444));
  const auto before = test::fingerprint(path);

  auto writing = test::run_unprivileged([&] { return test::open_error(path, false, false); });
  if (!writing.ran) GTEST_SKIP() << writing.text;
  EXPECT_THAT(writing.text,
              AllOf(HasSubstr(path), HasSubstr("cannot open for writing"), HasSubstr("Permission denied")));
  auto reading =
      test::run_unprivileged([&] { return std::to_string(Database::open(path, false, true)->measurements().size()); });
  EXPECT_EQ(reading.text, "3") << "a read-only file must still serve queries";
  EXPECT_EQ(test::fingerprint(path), before);
}

TEST(DbOpen, ReadOnlyDirectoryIsRejectedForWritingButReadable) {
  test::TempDir dir;
  const auto path = dir.file("ro.db");
  fill(path, 3);
  ASSERT_FALSE(fs::exists(path + "-wal")) << "closing the last connection should have removed the WAL";
  fs::permissions(path, fs::perms(0666));
  fs::permissions(dir.path(), fs::perms(0555));
  const auto before = test::fingerprint(path);

  auto writing = test::run_unprivileged([&] { return test::open_error(path, false, false); });
  if (!writing.ran) GTEST_SKIP() << writing.text;
  EXPECT_THAT(writing.text, AllOf(HasSubstr(path), HasSubstr("cannot write in directory " + dir.path()),
                                  HasSubstr("Permission denied")));
  auto creating = test::run_unprivileged([&] { return test::open_error(dir.file("new.db"), true, false); });
  EXPECT_THAT(creating.text, HasSubstr("cannot write in directory"));
  auto reading =
      test::run_unprivileged([&] { return std::to_string(Database::open(path, false, true)->measurements().size()); });
  EXPECT_EQ(reading.text, "3");
  EXPECT_EQ(test::fingerprint(path), before);
  EXPECT_FALSE(fs::exists(dir.file("new.db")));
}

// Another tool's write in rollback-journal mode, killed half-way (in a child that exits without
// committing): the file holds some of its pages, PATH-journal the ones they replaced.
void interrupt_a_rollback_journal_write(const std::string& path) {
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE);
    raw.exec("PRAGMA journal_mode = DELETE");
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    try {
      SQLite::Database raw(path, SQLite::OPEN_READWRITE);
      raw.exec("BEGIN");
      raw.exec("DELETE FROM measurements");
      raw.exec("CREATE TABLE junk (x)");
      raw.exec("INSERT INTO junk VALUES (randomblob(20000))");
      // The changed pages into the file (their old contents into the journal first).
      ::_exit(sqlite3_db_cacheflush(raw.getHandle()) == SQLITE_OK ? 0 : 2);
    } catch (...) {
      ::_exit(3);
    }
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST(DbOpen, AnInterruptedWritesJournalIsPlayedBackNotIgnored) {
  test::TempDir dir;
  const auto path = dir.file("hot.db");
  fill(path, 3);
  ASSERT_NO_FATAL_FAILURE(interrupt_a_rollback_journal_write(path));
  ASSERT_GT(fs::file_size(path + "-journal"), 0u);
  const auto before = test::fingerprint(path);

  // Read-only where SQLite could write the journal back, and where it could not even make a -shm
  // (read as immutable, which ignores journals: it read the half-written file).
  EXPECT_THAT(test::open_error(path, false, true),
              AllOf(HasSubstr(path), HasSubstr("interrupted write"), HasSubstr(path + "-journal")));
  fs::permissions(dir.path(), fs::perms(0555));
  auto reading = test::run_unprivileged([&] { return test::open_error(path, false, true); });
  fs::permissions(dir.path(), fs::perms(0755));
  if (!reading.ran) GTEST_SKIP() << reading.text;
  EXPECT_THAT(reading.text, AllOf(HasSubstr("interrupted write"), HasSubstr(path + "-journal")));
  EXPECT_EQ(test::fingerprint(path), before);

  // Twin: an open for writing plays the journal back; every committed row is there.
  EXPECT_EQ(Database::open(path, false)->measurements().size(), 3u);
  EXPECT_EQ(Database::open(path, false, true)->measurements().size(), 3u);
}

TEST(DbOpen, ForeignKeysAreEnforced) {
  test::TempDir dir;
  auto db = Database::open(dir.file("fk.db"), true);
  Gap g;
  g.family = "mla_decode";
  g.arch = "sm_90a";
  g.key = test::key(16);
  g.reason = GapReason::fault;
  g.source = "measured";
  g.run_id = 4242;  // no such run
  EXPECT_THROW(db->add_gap(g), Error);
  g.run_id = db->begin_run(test::sample_run());
  EXPECT_NO_THROW(db->add_gap(g));
}

}  // namespace
}  // namespace ktune::db
