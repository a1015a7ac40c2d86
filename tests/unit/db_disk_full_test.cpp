// A result recorded on a full disk (db_full_disk.hpp: writes fail with SQLITE_FULL, as on
// ENOSPC): the error names the file and says the disk is full, the failed write leaves nothing
// behind, every row committed before is kept, and the file stays intact and writable once there
// is space again.
#include <SQLiteCpp/Database.h>
#include <gtest/gtest.h>

#include "db_full_disk.hpp"
#include "db_test_support.hpp"

namespace ktune::db {
namespace {
using test::key;
using test::timed;
using test::TempDir;

std::string integrity(const std::string& path) {
  SQLite::Database raw(path, SQLite::OPEN_READONLY);
  return raw.execAndGet("PRAGMA integrity_check").getString();
}

TEST(DbDiskFull, RecordSaysDiskFullAndKeepsEveryEarlierRow) {
  TempDir tmp;
  testing::FullDiskVfs disk;
  const auto path = tmp.file("tune.db");
  auto db = Database::open(path, /*create=*/true);
  const auto run = db->begin_run(test::sample_run());
  for (int64_t rows = 16; rows <= 160; rows += 16) db->record(timed(run, key(16), test::config(rows), 10.0 + rows));
  ASSERT_EQ(disk.refused(), 0) << "with space left every write succeeds";

  // Full at once, after a frame header, and half-way through the frames of one commit.
  for (int64_t left : {0, 100, 5000}) {
    disk.fill_after(left);
    try {
      db->record(timed(run, key(16), test::config(999), 5.0));
      FAIL() << "a record on a full disk must fail (" << left << " bytes left)";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(path), std::string::npos) << what;
      EXPECT_NE(what.find("disk full: no space left"), std::string::npos) << what;
      EXPECT_NE(what.find("record (run"), std::string::npos) << "the write that failed is named: " << what;
    }
  }
  EXPECT_GE(disk.refused(), 3);

  disk.fill_after(-1);  // space freed
  EXPECT_EQ(db->measurements().size(), 10u) << "the failed writes left nothing, the earlier rows are all there";
  db->record(timed(run, key(16), test::config(999), 5.0));
  db.reset();
  EXPECT_EQ(integrity(path), "ok");
  EXPECT_EQ(Database::open(path, /*create=*/false)->measurements().size(), 11u);
}

TEST(DbDiskFull, OpeningANewFileOnAFullDiskSaysDiskFull) {
  TempDir tmp;
  testing::FullDiskVfs disk;
  disk.fill_after(0);
  const auto path = tmp.file("new.db");
  try {
    Database::open(path, /*create=*/true);
    FAIL() << "creating the schema on a full disk must fail";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("full"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ktune::db
