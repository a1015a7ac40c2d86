// Two sweeps in two processes writing one database at once. Each sweep is its own run (see
// tuner/sweep/runner.hpp): both finish and every row of both is kept, whether their keys are
// disjoint or the same; winners() answers per run, and codegen serves a key from its newest run.
#include <map>

#include "sweep_child_support.hpp"

namespace ktune::sweep {
namespace {
using namespace std::chrono_literals;
using testing::ChildSweep;
using testing::damage_of;
using testing::exited_cleanly;
using testing::Rows;
using testing::wait_child;

struct SweepConcurrency : ::testing::Test, ChildSweep {
  const std::string path = tmp.path() + "/shared.db";

  // Both sweeps started at once; both must finish.
  void run_both(const Space& a, const Space& b, bool resume = false) {
    const pid_t pa = spawn(path, a, resume), pb = spawn(path, b, resume);
    const int sa = wait_child(pa, 60s), sb = wait_child(pb, 60s);
    ASSERT_TRUE(exited_cleanly(sa)) << "first sweep: status " << sa;
    ASSERT_TRUE(exited_cleanly(sb)) << "second sweep: status " << sb;
    ASSERT_EQ(damage_of(path), "");
  }
  // What one sweep of `s` records alone.
  std::pair<Rows, testing::Gaps> alone(const Space& s, const std::string& name) {
    const auto p = tmp.path() + "/" + name + ".db";
    run(p, s, false);
    auto db = db::Database::open(p, false);
    return {testing::rows_of(*db), testing::gaps_of(*db)};
  }
  // True when the runs' rows interleave (the run changes more than once in id order): the
  // sweeps did write at the same time.
  static bool overlapped(db::Database& db) {
    int changes = 0;
    int64_t last = 0;
    for (const auto& m : db.measurements()) {
      if (last != 0 && m.run_id != last) ++changes;
      last = m.run_id;
    }
    return changes > 1;
  }
};

TEST_F(SweepConcurrency, DisjointKeysLoseNothing) {
  run_both(space({32, 16, 12}), space({8, 4, 2}));
  auto db = db::Database::open(path, false);
  auto runs = db->runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_TRUE(overlapped(*db)) << "the sweeps ran one after the other: this test proves nothing then";

  const auto [want_rows, want_gaps] = alone(space({32, 16, 12, 8, 4, 2}), "reference");
  EXPECT_EQ(testing::rows_of(*db), want_rows);
  EXPECT_EQ(testing::gaps_of(*db), want_gaps);
  EXPECT_NE(testing::rows_of(*db, runs[0].id), testing::rows_of(*db, runs[1].id));
}

TEST_F(SweepConcurrency, SameKeysKeepBothRunsRows) {
  const auto s = space({32, 16, 12, 8, 4, 2});
  run_both(s, s);
  auto db = db::Database::open(path, false);
  auto runs = db->runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_TRUE(overlapped(*db)) << "the sweeps ran one after the other: this test proves nothing then";

  const auto [want_rows, want_gaps] = alone(s, "reference");
  for (const auto& r : runs) EXPECT_EQ(testing::rows_of(*db, r.id), want_rows) << "run " << r.id;
  EXPECT_EQ(testing::rows_of(*db).size(), 2 * want_rows.size()) << "both runs' rows are kept";
  EXPECT_EQ(testing::gaps_of(*db), want_gaps) << "a key has one measured gap, whichever run recorded it last";

  // The same winners in each run: per key the fastest verified config (rows=16).
  std::map<int64_t, std::vector<std::string>> winners;
  for (const auto& w : db->winners()) winners[w.run.id].push_back(w.m.key.canonical() + " " + w.m.config.canonical());
  ASSERT_EQ(winners.size(), 2u);
  EXPECT_EQ(winners[runs[0].id], winners[runs[1].id]);
  EXPECT_EQ(winners[runs[0].id].size(), 3u) << "heads=32, 16 and 8 have a verified config";
}

// Two --resume sweeps of the same keys at once continue the same run: a candidate both reach
// before either recorded it is measured twice, and both rows are kept. Nothing is lost, and
// winners() still names one config per key (the lowest median, then the lowest id).
TEST_F(SweepConcurrency, SameKeysResumedTogetherShareOneRun) {
  const auto s = space({32, 16, 12, 8, 4, 2});
  run(path, space({2}), false);  // the run both resume
  run_both(s, s, /*resume=*/true);
  auto db = db::Database::open(path, false);
  ASSERT_EQ(db->runs().size(), 1u);

  const auto [want_rows, want_gaps] = alone(s, "reference");
  const auto got_rows = testing::rows_of(*db);
  EXPECT_EQ(std::set(got_rows.begin(), got_rows.end()), std::set(want_rows.begin(), want_rows.end()));
  EXPECT_GE(got_rows.size(), want_rows.size());
  EXPECT_EQ(testing::gaps_of(*db), want_gaps);
  std::set<std::string> winner_keys;
  for (const auto& w : db->winners())
    EXPECT_TRUE(winner_keys.insert(w.m.key.canonical()).second) << w.m.key.canonical();
  EXPECT_EQ(winner_keys.size(), 3u);
  std::printf("[ resumed  ] %zu rows for %zu candidates\n", got_rows.size(), want_rows.size());
}

}  // namespace
}  // namespace ktune::sweep
