// A sweep killed with SIGKILL at random moments, again and again, and resumed each time, ends
// with exactly what an uninterrupted sweep records: the same (key, config, status) rows, none
// lost and none twice, one run, and the same gaps; the database is intact after every kill.
#include <filesystem>
#include <fstream>
#include <random>

#include "sweep_child_support.hpp"

namespace ktune::sweep {
namespace {
using namespace std::chrono_literals;
using testing::ChildSweep;
using testing::damage_of;
using testing::exited_cleanly;
using testing::wait_child;

struct SweepKillResume : ::testing::Test, ChildSweep {
  const Space all = space({32, 16, 12, 8, 4, 2});
};

TEST_F(SweepKillResume, DamageCheckSeesACorruptFile) {
  const auto path = tmp.path() + "/whole.db";
  run(path, space({8}), false);
  EXPECT_EQ(damage_of(path), "");
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE);
    raw.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  }
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(0, std::ios::end);
  const auto size = static_cast<size_t>(f.tellg());
  f.seekp(100);  // past the file header: the schema and every table are junk now
  const std::string junk(size - 100, '\x5a');
  f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  f.close();
  EXPECT_NE(damage_of(path), "");
}

TEST_F(SweepKillResume, KilledAtRandomAndResumedEndsAsAnUninterruptedSweep) {
  const auto reference_path = tmp.path() + "/reference.db";
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(exited_cleanly(wait_child(spawn(reference_path, all, false), 60s)));
  const auto whole = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  auto reference = db::Database::open(reference_path, false);
  const auto want_rows = testing::rows_of(*reference);
  const auto want_gaps = testing::gaps_of(*reference);
  ASSERT_EQ(want_rows.size(), 32u) << "the space's feasible candidates";
  ASSERT_EQ(want_gaps.size(), 3u) << "heads=4 (verify_failed), heads=12 (fault), heads=2 (no_config)";

  // Kills land anywhere from before the run exists to between a key's last row and its gap;
  // a delay of up to a tenth of a whole sweep lets most attempts make some progress first.
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE(fmt::format("seed {}, uninterrupted sweep {} ms", seed, whole.count()));
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> delay_ms(0, std::max<int>(10, static_cast<int>(whole.count() / 10)));
  // A round kills and resumes one database until an attempt finishes unkilled, and is then
  // compared with the reference. A round can finish after few kills (an attempt left little to do
  // outlives its delay; more so on a loaded machine), so rounds are added until the kills mean
  // something: at least 10, at least 5 of them mid-sweep.
  constexpr int kMaxKills = 40, kMaxRounds = 6;
  int kills = 0, kills_mid_sweep = 0, attempts = 0, rounds = 0;
  while ((kills < 10 || kills_mid_sweep < 5) && rounds < kMaxRounds) {
    const auto path = fmt::format("{}/killed-{}.db", tmp.path(), ++rounds);
    SCOPED_TRACE(fmt::format("round {}", rounds));
    int round_kills = 0;
    for (bool finished = false; !finished;) {
      ++attempts;
      const pid_t pid = spawn(path, all, /*resume=*/true);
      if (round_kills < kMaxKills) {
        std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng)));
        int status = 0;
        if (::waitpid(pid, &status, WNOHANG) == 0) {
          ::kill(pid, SIGKILL);
          ::waitpid(pid, &status, 0);
          ++kills;
          ++round_kills;
          ASSERT_EQ(damage_of(path), "") << "after kill " << kills;
          // A kill before the sweep created the database leaves no file: no rows yet.
          const auto rows =
              std::filesystem::exists(path) ? testing::rows_of(*db::Database::open(path, false)).size() : 0;
          if (rows > 0 && rows < want_rows.size()) ++kills_mid_sweep;
          continue;
        }
        ASSERT_TRUE(exited_cleanly(status)) << "attempt " << attempts << " ended with status " << status;
        finished = true;
      } else {
        ASSERT_TRUE(exited_cleanly(wait_child(pid, 60s))) << "the last, unkilled attempt";
        finished = true;
      }
    }
    auto killed = db::Database::open(path, false);
    EXPECT_EQ(killed->runs().size(), 1u) << "every attempt resumed the one run";
    const auto got_rows = testing::rows_of(*killed);
    EXPECT_EQ(std::set(got_rows.begin(), got_rows.end()).size(), got_rows.size()) << "a candidate recorded twice";
    EXPECT_EQ(got_rows, want_rows);
    EXPECT_EQ(testing::gaps_of(*killed), want_gaps);
  }
  std::printf("[ kills    ] %d kills survived (%d mid-sweep) in %d attempts over %d rounds; %zu rows and %zu gaps "
              "compared each round\n",
              kills, kills_mid_sweep, attempts, rounds, want_rows.size(), want_gaps.size());
  EXPECT_GE(kills, 10) << "too few kills to mean anything";
  EXPECT_GE(kills_mid_sweep, 5) << "the kills must hit sweeps that had started recording";
}

// The case a random kill hits least often, made certain: every candidate was recorded, but the
// sweep died before it recorded the key's gap. The resumed sweep has nothing left to run and
// must still record the gap (and clear a stale one of a key that now has a kernel).
TEST_F(SweepKillResume, ResumeClosesKeysTheKilledSweepLeftOpen) {
  const auto path = tmp.path() + "/open.db";
  run(path, space({8, 4}), false);
  auto db = db::Database::open(path, false);
  ASSERT_EQ(db->gaps().size(), 1u);
  auto gap = db->gaps()[0];
  ASSERT_EQ(gap.key.at("heads"), 4);
  ASSERT_TRUE(db->remove_gap(gap.family, gap.arch, gap.key, gap.source));  // as if killed before add_gap
  auto stale = gap;
  stale.key = Params{{"heads", 8}, {"kv_dtype", 0}};
  db->add_gap(stale);  // as if killed before remove_gap after an earlier run's gap

  auto resumed = run(path, space({8, 4}), true);
  EXPECT_TRUE(resumed.resumed);
  EXPECT_EQ(resumed.candidates, 0u);
  auto gaps = db->gaps();
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(gaps[0].key.at("heads"), 4);
  EXPECT_EQ(gaps[0].reason, db::GapReason::verify_failed);
  EXPECT_EQ(gaps[0].detail, gap.detail);
}

}  // namespace
}  // namespace ktune::sweep
