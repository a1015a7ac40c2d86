// `ktune merge` end to end: codegen of the merged shards equals codegen of one database that the
// shards' sweeps had written in turn, byte for byte; merging again adds nothing; a refused input
// leaves every file as it was (and creates no output).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>

#include <SQLiteCpp/Database.h>

#include "jit/templates.hpp"
#include "kernels/family.hpp"
#include "unit/db_test_support.hpp"

namespace ktune::db {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

struct Output {
  int code = -1;
  std::string out;  // stdout and stderr
};

Output ktune(const test::TempDir& dir, const std::string& args) {
  const auto out = dir.file("output.txt");
  const int raw = std::system(fmt::format("'{}' {} >'{}' 2>&1", KTUNE_EXE, args, out).c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, test::read_file(out)};
}

// What shard `i` of a sweep of mla_decode records: its run, timed rows, a failed row, a measured
// gap; the declared gap is in the first shard's database.
void write_shard(Database& db, int i) {
  auto r =
      test::sample_run("mla_decode", "NVIDIA H200", "sm_90a", jit::template_hash(family("mla_decode").template_file()));
  r.started_at = fmt::format("2026-03-0{}T10:00:00Z", i + 1);
  r.command = fmt::format("ktune sweep --kernel mla_decode --shard {}/2", i);
  const auto run = db.begin_run(r);
  const Params fast{{"rows", 32}, {"keys", 32}, {"threads", 128}, {"stages", 2}, {"split", 2}, {"math", 0}};
  const Params slow{{"rows", 64}, {"keys", 32}, {"threads", 256}, {"stages", 2}, {"split", 1}, {"math", 0}};
  for (int64_t heads : {16 << i, 64 << i}) {
    db.record(test::timed(run, test::key(heads, 1, i, 0, 32), slow, 30.0 + static_cast<double>(heads)));
    db.record(test::timed(run, test::key(heads, 1, i, 0, 32), fast, 10.0 + static_cast<double>(heads)));
  }
  db.record(test::untimed(run, test::key(8, 2, i, 1, 32), fast, Status::fault, "illegal address"));
  Gap g;
  g.family = "mla_decode";
  g.arch = "sm_90a";
  g.key = test::key(8, 2, i, 1, 32);
  g.reason = GapReason::fault;
  g.detail = "1 configs failed (1 fault)";
  g.source = "measured";
  g.run_id = run;
  g.fallback = "none";
  db.add_gap(g);
  if (i == 0)
    db.add_gap(test::declared_gap("sm_90a", test::key(16, 2, 0, 1, 32), test::key(16, 4, 0, 1, 32).canonical(),
                                  "pad the block to 4 tokens"));
}

struct MergeCli : ::testing::Test {
  test::TempDir dir;
  std::string shard0 = dir.file("shard0.db"), shard1 = dir.file("shard1.db"), merged = dir.file("merged.db");

  MergeCli() {
    write_shard(*Database::open(shard0, true), 0);
    write_shard(*Database::open(shard1, true), 1);
  }
  std::string codegen(const std::string& db, const std::string& name) {
    const auto out = dir.file(name);
    const auto r = ktune(dir, fmt::format("codegen --db '{}' --kernel mla_decode --out '{}'", db, out));
    EXPECT_EQ(r.code, 0) << r.out;
    return test::read_file(out);
  }
};

TEST_F(MergeCli, CodegenOfTheMergedShardsEqualsCodegenOfOneDatabaseOfThemAll) {
  const auto one = dir.file("one.db");
  {
    auto db = Database::open(one, true);
    write_shard(*db, 0);
    write_shard(*db, 1);
  }
  const auto r = ktune(dir, fmt::format("merge --db '{}' '{}' '{}'", merged, shard0, shard1));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("2 run(s) added, 0 already there, 10 measurements, 3 gaps"));
  const auto header = codegen(merged, "merged.hpp");
  EXPECT_THAT(header, HasSubstr("kTableSize = 7;"));
  EXPECT_EQ(header, codegen(one, "one.hpp"));
}

TEST_F(MergeCli, MergingAnInputAgainAddsNothing) {
  ASSERT_EQ(ktune(dir, fmt::format("merge --db '{}' '{}'", merged, shard0)).code, 0);
  const auto header = codegen(merged, "first.hpp");
  const auto again = ktune(dir, fmt::format("merge --db '{}' '{}' '{}'", merged, shard0, shard0));
  ASSERT_EQ(again.code, 0) << again.out;
  EXPECT_THAT(again.out, HasSubstr("0 run(s) added, 2 already there, 0 measurements, 0 gaps"));
  EXPECT_EQ(codegen(merged, "again.hpp"), header);
}

TEST_F(MergeCli, AnInputOfAnOlderVersionIsRefusedNamingMigrateAndNothingIsWritten) {
  const auto old = dir.file("old.db");
  test::write_v1_by_hand(old);
  const auto before = std::vector{test::fingerprint(shard0), test::fingerprint(old)};
  const auto r = ktune(dir, fmt::format("merge --db '{}' '{}' '{}'", merged, shard0, old));
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.out, AllOf(HasSubstr(old), HasSubstr("ktune migrate")));
  EXPECT_FALSE(fs::exists(merged)) << "no output is created for a refused merge";
  EXPECT_EQ((std::vector{test::fingerprint(shard0), test::fingerprint(old)}), before);

  // Nor is an output of an older version migrated to be merged into.
  const auto r2 = ktune(dir, fmt::format("merge --db '{}' '{}'", old, shard0));
  EXPECT_EQ(r2.code, 1);
  EXPECT_THAT(r2.out, HasSubstr("ktune migrate"));
  EXPECT_EQ((std::vector{test::fingerprint(shard0), test::fingerprint(old)}), before);
}

TEST_F(MergeCli, AMergeThatFailsHalfWayCreatesNoOutput) {
  {  // a row naming a run its file does not hold (written with foreign keys off)
    SQLite::Database raw(shard1, SQLite::OPEN_READWRITE);
    raw.exec("PRAGMA foreign_keys = OFF");
    raw.exec("UPDATE measurements SET run_id = 42 WHERE status = 'fault'");
  }
  const auto r = ktune(dir, fmt::format("merge --db '{}' '{}' '{}'", merged, shard0, shard1));
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.out, HasSubstr("names run 42, which the file does not hold"));
  EXPECT_FALSE(fs::exists(merged));
}

TEST_F(MergeCli, AFileThatIsNoKtuneDatabaseIsRefused) {
  const auto text = dir.file("notes.txt");
  test::write_file(text, "not a database\n");
  ASSERT_EQ(ktune(dir, fmt::format("merge --db '{}' '{}'", merged, shard0)).code, 0);
  const auto before = test::fingerprint(merged);
  const auto r = ktune(dir, fmt::format("merge --db '{}' '{}' '{}'", merged, shard1, text));
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.out, AllOf(HasSubstr(text), HasSubstr("not a database")));
  EXPECT_EQ(test::fingerprint(merged), before);
  EXPECT_EQ(Database::open(merged, false, true)->runs().size(), 1u);
}

}  // namespace
}  // namespace ktune::db
