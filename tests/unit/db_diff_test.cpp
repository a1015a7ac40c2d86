// db::load_outcomes and db::diff: each key's winner or gap, and two sides compared key by key.
#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "db/diff.hpp"
#include "db/outcomes.hpp"
#include "unit/db_test_support.hpp"

namespace ktune::db {
namespace {

using ::testing::HasSubstr;

// test::timed(): p10 = 0.95 x median, p90 = 1.1 x median.
class DbDiff : public ::testing::Test {
 protected:
  test::TempDir dir;
  std::unique_ptr<Database> open(const std::string& name) { return Database::open(dir.file(name), true); }
  Filter mla() {
    Filter f;
    f.family = "mla_decode";
    return f;
  }
  static Gap measured_gap(int64_t run, Params key) {
    Gap g;
    g.family = "mla_decode";
    g.arch = "sm_90a";
    g.key = std::move(key);
    g.reason = GapReason::no_config;
    g.source = "measured";
    g.run_id = run;
    return g;
  }
  const KeyDiff& at(const Diff& d, const Params& key) {
    for (const auto& k : d.keys)
      if (k.key == key) return k;
    throw Error("no such key in the diff: " + key.canonical());
  }
};

TEST_F(DbDiff, OutcomesTakeTheNewestRunsWinnerAndGapsOfKeysWithoutOne) {
  auto db = open("a.db");
  const auto r1 = db->begin_run(test::sample_run());
  const auto r2 = db->begin_run(test::sample_run());
  db->record(test::timed(r1, test::key(16), test::config(64), 10));
  db->record(test::timed(r2, test::key(16), test::config(32), 20));  // newer: wins though slower
  db->record(test::timed(r2, test::key(16), test::config(16), 25));
  db->add_gap(measured_gap(r2, test::key(32)));
  const auto o = load_outcomes(*db, mla());
  ASSERT_EQ(o.keys.size(), 2u);
  ASSERT_TRUE(o.keys.at(test::key(16)).winner);
  EXPECT_EQ(o.keys.at(test::key(16)).winner->m.config, test::config(32));
  EXPECT_FALSE(o.keys.at(test::key(32)).winner);
  ASSERT_TRUE(o.keys.at(test::key(32)).gap);
  EXPECT_EQ(o.keys.at(test::key(32)).gap->reason, GapReason::no_config);
  // Only the winner's run's times are kept for lookups.
  EXPECT_EQ(o.ok_times.count({test::key(16), test::config(64)}), 0u);
  EXPECT_EQ(o.ok_times.at({test::key(16), test::config(16)}), 25);
}

TEST_F(DbDiff, OutcomesRefuseSeveralDevices) {
  auto db = open("a.db");
  db->record(test::timed(db->begin_run(test::sample_run()), test::key(16), test::config(64), 10));
  db->record(
      test::timed(db->begin_run(test::sample_run("mla_decode", "NVIDIA H100")), test::key(16), test::config(64), 10));
  try {
    load_outcomes(*db, mla());
    FAIL() << "two devices were mixed";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("several devices (NVIDIA H100, NVIDIA H200); name one with --device"));
  }
  auto f = mla();
  f.device_name = "NVIDIA H100";
  EXPECT_EQ(load_outcomes(*db, f).keys.size(), 1u);
}

TEST_F(DbDiff, VerdictsRatiosNoiseAndGaps) {
  auto a = open("a.db"), b = open("b.db");
  const auto ra = a->begin_run(test::sample_run()), rb = b->begin_run(test::sample_run());
  // heads 8: 100 -> 150, outside both bands (A's p90 110, B's p10 142.5): slower, config changed.
  a->record(test::timed(ra, test::key(8), test::config(64), 100));
  b->record(test::timed(rb, test::key(8), test::config(32), 150));
  b->record(test::timed(rb, test::key(8), test::config(64), 180));  // A's winner on B: 180 / 150
  // heads 12: 100 -> 105, inside A's band: same.
  a->record(test::timed(ra, test::key(12), test::config(64), 100));
  b->record(test::timed(rb, test::key(12), test::config(64), 105));
  // heads 16: 100 -> 50: faster.
  a->record(test::timed(ra, test::key(16), test::config(64), 100));
  b->record(test::timed(rb, test::key(16), test::config(64), 50));
  // heads 24: winner -> gap; heads 32: gap -> winner; heads 48: gap on both.
  a->record(test::timed(ra, test::key(24), test::config(64), 100));
  b->add_gap(measured_gap(rb, test::key(24)));
  a->add_gap(measured_gap(ra, test::key(32)));
  b->record(test::timed(rb, test::key(32), test::config(64), 100));
  a->add_gap(measured_gap(ra, test::key(48)));
  b->add_gap(measured_gap(rb, test::key(48)));
  // heads 64 in A only, heads 96 in B only.
  a->record(test::timed(ra, test::key(64), test::config(64), 100));
  b->record(test::timed(rb, test::key(96), test::config(64), 100));
  const auto oa = load_outcomes(*a, mla()), ob = load_outcomes(*b, mla());
  const Diff d = diff(oa, ob);
  ASSERT_EQ(d.keys.size(), 8u);
  const auto& slower = at(d, test::key(8));
  EXPECT_EQ(slower.verdict, Verdict::slower);
  EXPECT_DOUBLE_EQ(*slower.ratio, 1.5);
  EXPECT_TRUE(slower.config_changed);
  EXPECT_DOUBLE_EQ(*slower.a_winner_on_b, 1.2);
  EXPECT_EQ(at(d, test::key(12)).verdict, Verdict::same);
  EXPECT_FALSE(at(d, test::key(12)).config_changed);
  EXPECT_EQ(at(d, test::key(16)).verdict, Verdict::faster);
  EXPECT_EQ(at(d, test::key(24)).verdict, Verdict::gap_opened);
  EXPECT_EQ(at(d, test::key(32)).verdict, Verdict::gap_closed);
  EXPECT_EQ(at(d, test::key(48)).verdict, Verdict::gap_both);
  EXPECT_EQ(at(d, test::key(64)).verdict, Verdict::only_a);
  EXPECT_EQ(at(d, test::key(96)).verdict, Verdict::only_b);
  const auto& s = d.summary;
  EXPECT_EQ(s.keys_a, 7);
  EXPECT_EQ(s.keys_b, 7);
  EXPECT_EQ(s.both_timed, 3);
  EXPECT_NEAR(s.geomean_ratio, std::cbrt(1.5 * 1.05 * 0.5), 1e-12);
  EXPECT_DOUBLE_EQ(s.max_ratio, 1.5);
  EXPECT_DOUBLE_EQ(s.min_ratio, 0.5);
  EXPECT_EQ(s.configs_changed, 1);
  for (int v = 0; v < kVerdicts; ++v) EXPECT_EQ(s.counts[v], 1) << to_string(static_cast<Verdict>(v));
  ASSERT_EQ(worst_keys(d, 1).size(), 1u);
  EXPECT_EQ(worst_keys(d, 1).front()->key, test::key(8));
  // The gate: heads 8 (1.5) and the opened gap; at 1.6 only the gap.
  EXPECT_EQ(regressions(d, 1.05).size(), 2u);
  ASSERT_EQ(regressions(d, 1.6).size(), 1u);
  EXPECT_EQ(regressions(d, 1.6).front()->verdict, Verdict::gap_opened);
}

TEST_F(DbDiff, APairComparesTwoValuesOfAFieldOnTheOtherFields) {
  auto db = open("a.db");
  const auto r = db->begin_run(test::sample_run());
  db->record(test::timed(r, test::key(16, 1, 0, 0), test::config(64), 100));  // bf16
  db->record(test::timed(r, test::key(16, 1, 0, 1), test::config(64), 50));   // fp8_e4m3fn
  db->record(test::timed(r, test::key(16, 1, 0, 2), test::config(64), 70));   // fp8_e4m3fnuz: not compared
  db->record(test::timed(r, test::key(16, 2, 0, 0), test::config(64), 100));  // bf16 only
  const auto o = load_outcomes(*db, mla());
  const Diff d = diff(o, o, Pair{"kv_dtype", 0, 1});
  ASSERT_EQ(d.keys.size(), 2u);
  const Params shared{{"heads", 16}, {"block_len", 1}, {"causal", 0}, {"batch", 32}};
  EXPECT_EQ(at(d, shared).verdict, Verdict::faster);
  EXPECT_DOUBLE_EQ(*at(d, shared).ratio, 0.5);
  EXPECT_EQ(at(d, Params{{"heads", 16}, {"block_len", 2}, {"causal", 0}, {"batch", 32}}).verdict, Verdict::only_a);
}

TEST_F(DbDiff, RefusesTwoFamilies) {
  auto a = open("a.db"), b = open("b.db");
  a->record(test::timed(a->begin_run(test::sample_run()), test::key(16), test::config(64), 10));
  b->record(test::timed(b->begin_run(test::sample_run("qk_rope_cache")), test::key(16), test::config(64), 10));
  auto fb = mla();
  fb.family = "qk_rope_cache";
  try {
    diff(load_outcomes(*a, mla()), load_outcomes(*b, fb));
    FAIL() << "two families were compared";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("a diff compares one kernel family"));
  }
}

TEST_F(DbDiff, FractionOfTheBindingRoofIsTheLargerFraction) {
  Measurement m;
  EXPECT_FALSE(fraction_of_binding_roof(m));
  m.frac_copy_bw = 0.4;
  EXPECT_DOUBLE_EQ(*fraction_of_binding_roof(m), 0.4);
  m.frac_matrix = 0.7;
  EXPECT_DOUBLE_EQ(*fraction_of_binding_roof(m), 0.7);
}

}  // namespace
}  // namespace ktune::db
