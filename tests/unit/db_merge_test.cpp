// Database::merge: the runs of shard databases, their measurements and gaps copied into one in a
// transaction; merging again adds nothing; refusals and failures leave every file as it was; and
// the run identity (runs.uid) that makes it idempotent, given to old runs by migration.
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "db_test_support.hpp"

namespace ktune::db {
namespace {

using ::testing::HasSubstr;

const Params kConfig{{"rows", 64}, {"warps", 4}};

// A shard's database: one run on `device` started at `started`, a timed row per key of `heads`
// (and a failed one for the first), a measured gap for `gap_heads` and the declared gap.
std::string shard(const test::TempDir& dir, const std::string& name, const std::string& started,
                  std::vector<int64_t> heads, int64_t gap_heads) {
  const auto path = dir.file(name);
  auto db = Database::open(path, true);
  auto r = test::sample_run();
  r.started_at = started;
  const auto run = db->begin_run(r);
  db->record(test::untimed(run, test::key(heads.front()), test::config(32), Status::verify_failed, "element 3"));
  for (auto h : heads) db->record(test::timed(run, test::key(h), kConfig, 10.0 + static_cast<double>(h)));
  Gap g;
  g.family = "mla_decode";
  g.arch = "sm_90a";
  g.key = test::key(gap_heads);
  g.reason = GapReason::fault;
  g.detail = "illegal address";
  g.source = "measured";
  g.run_id = run;
  g.fallback = "none";
  db->add_gap(g);
  db->add_gap(test::declared_gap("sm_90a", test::key(16, 2, 0, 1, 64)));
  return path;
}

// Everything of a database but its ids, uids and timestamps of insertion: what a merge must keep.
std::multiset<std::string> contents(Database& db) {
  std::multiset<std::string> out;
  for (const auto& r : db.runs()) out.insert(fmt::format("run {} {} {}", r.started_at, r.device_name, r.host));
  for (const auto& m : db.measurements())
    out.insert(fmt::format("m {} {} {} {} {} {}", db.run(m.run_id).started_at, m.key.canonical(), m.config.canonical(),
                           to_string(m.status), m.median_us, m.detail));
  for (const auto& g : db.gaps())
    out.insert(fmt::format("g {} {} {} {}", g.key.canonical(), to_string(g.reason), g.source,
                           g.run_id ? db.run(*g.run_id).started_at : "-"));
  return out;
}

struct DbMerge : ::testing::Test {
  test::TempDir dir;
  std::string a = shard(dir, "a.db", "2026-01-01T00:00:00Z", {16, 64}, 128);
  std::string b = shard(dir, "b.db", "2026-01-01T00:00:05Z", {32}, 8);
  std::string out = dir.file("out.db");
};

TEST_F(DbMerge, CopiesRunsRowsAndGapsKeepingTheRunsIdentity) {
  auto merged = Database::open(out, true);
  const auto counts = merged->merge({a, b});
  EXPECT_EQ(counts.runs, 2);
  EXPECT_EQ(counts.runs_known, 0);
  ASSERT_EQ(counts.rows.size(), 3u);
  EXPECT_EQ(counts.rows[0], (std::pair<std::string, size_t>("measurements", 5)));
  // Two measured gaps and the declared one, which b (written later) holds too and replaces.
  EXPECT_EQ(counts.rows[1], (std::pair<std::string, size_t>("gaps", 4)));

  std::multiset<std::string> want;
  for (const auto& path : {a, b}) {
    auto in = Database::open(path, false, true);
    want.merge(contents(*in));
  }
  auto got = contents(*merged);
  // The declared gap is in both shards and once in the merged database.
  want.erase(want.find("g heads=16,block_len=2,causal=0,kv_dtype=1,batch=64 declared " +
                       std::string(test::kAiterFoldSource) + " -"));
  EXPECT_EQ(got, want);

  const auto runs = merged->runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].uid, Database::open(a, false, true)->runs().front().uid);
  EXPECT_EQ(runs[1].uid, Database::open(b, false, true)->runs().front().uid);
  // Each measurement under its own run: a's keys under a's run.
  for (const auto& m : merged->measurements())
    EXPECT_EQ(m.run_id, m.key.at("heads") == 32 ? runs[1].id : runs[0].id) << m.key.canonical();
}

TEST_F(DbMerge, RunsAreCopiedOldestFirst) {
  auto merged = Database::open(out, true);
  merged->merge({b, a});
  const auto runs = merged->runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].started_at, "2026-01-01T00:00:00Z");
  EXPECT_EQ(runs[1].started_at, "2026-01-01T00:00:05Z");
}

TEST_F(DbMerge, MergingAgainAddsNothingAndAGrownInputAddsItsNewRows) {
  auto merged = Database::open(out, true);
  merged->merge({a, b});
  const auto before = contents(*merged);
  const auto again = merged->merge({a, b, a});
  EXPECT_EQ(again.runs, 0);
  EXPECT_EQ(again.runs_known, 3);
  for (const auto& [table, n] : again.rows) EXPECT_EQ(n, 0u) << table;
  EXPECT_EQ(contents(*merged), before);

  {  // the shard's sweep resumed after the first merge: one more row
    auto grown = Database::open(a, false);
    grown->record(test::timed(grown->runs().front().id, test::key(256), kConfig, 99.0));
  }
  const auto more = merged->merge({a});
  EXPECT_EQ(more.runs, 0);
  EXPECT_EQ(more.rows[0].second, 1u);
  EXPECT_EQ(merged->measurements().size(), 6u);
}

TEST_F(DbMerge, TheLaterOfTwoGapsOfOneKeyStays) {
  // Both shards measured a gap of heads=8 (as two sweeps of one key into one database would).
  const auto c = shard(dir, "c.db", "2026-01-01T00:00:09Z", {512}, 8);
  {
    SQLite::Database raw(c, SQLite::OPEN_READWRITE);
    raw.exec("UPDATE gaps SET created_at = '2099-01-01T00:00:00.000Z', detail = 'later' WHERE source = 'measured'");
  }
  auto merged = Database::open(out, true);
  merged->merge({c, b});
  Filter f;
  f.key_equals = {{"heads", 8}};
  const auto gaps = merged->gaps(f);
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(gaps[0].detail, "later");
  EXPECT_EQ(merged->run(*gaps[0].run_id).started_at, "2026-01-01T00:00:09Z");
}

TEST_F(DbMerge, AnInputOfAnotherVersionOrNoKtuneDatabaseIsRefusedAndNothingChanges) {
  const auto old = dir.file("old.db");
  test::write_v1_by_hand(old);
  const auto alien = dir.file("alien.db");
  SQLite::Database(alien, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE).exec("CREATE TABLE t (x)");
  auto merged = Database::open(out, true);
  merged->merge({a});
  for (const auto& [input, says] : {std::pair{old, std::string("ktune migrate")}, {alien, "not a ktune one"}}) {
    const auto before = std::vector{test::fingerprint(out), test::fingerprint(input), test::fingerprint(b)};
    try {
      merged->merge({b, input});
      ADD_FAILURE() << input << " was merged";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr(says));
      EXPECT_THAT(e.what(), HasSubstr(input));
    }
    EXPECT_EQ((std::vector{test::fingerprint(out), test::fingerprint(input), test::fingerprint(b)}), before);
  }
  EXPECT_EQ(merged->runs().size(), 1u);
}

TEST_F(DbMerge, AFailureHalfWayLeavesTheOutputAsItWas) {
  // A row naming a run its file does not hold (written with foreign keys off): b's rows are
  // copied before it is met, and must go with the rest.
  const auto broken = shard(dir, "broken.db", "2026-01-01T00:00:07Z", {1024}, 4);
  {
    SQLite::Database raw(broken, SQLite::OPEN_READWRITE);
    raw.exec("PRAGMA foreign_keys = OFF");
    raw.exec("UPDATE measurements SET run_id = 42 WHERE key LIKE 'heads=1024,%' AND status = 'ok'");
  }
  auto merged = Database::open(out, true);
  merged->merge({a});
  const auto before = contents(*merged);
  try {
    merged->merge({b, broken});
    ADD_FAILURE() << "merged";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("names run 42, which the file does not hold"));
  }
  EXPECT_EQ(contents(*merged), before);
  EXPECT_EQ(merged->runs().size(), 1u);
}

TEST_F(DbMerge, ItsOwnFileIsNoInput) {
  auto merged = Database::open(a, false);
  try {
    merged->merge({b, a});
    ADD_FAILURE() << "merged into itself";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("is the database merged into"));
  }
  EXPECT_EQ(merged->runs().size(), 1u);
}

TEST(DbRunUid, EveryRunHasItsOwnAndMigrationGivesOldRunsOne) {
  test::TempDir dir;
  const auto path = dir.file("v1.db");
  test::write_v1_by_hand(path);
  auto db = Database::open(path, false);
  const auto added = db->begin_run(test::sample_run());
  std::set<std::string> uids;
  for (const auto& r : db->runs()) {
    EXPECT_TRUE(std::regex_match(r.uid, std::regex("[0-9a-f]{32}"))) << "run " << r.id << ": '" << r.uid << "'";
    uids.insert(r.uid);
  }
  EXPECT_EQ(uids.size(), 3u);
  EXPECT_EQ(db->run(added).uid.size(), 32u);
}

}  // namespace
}  // namespace ktune::db
