// `ktune diff` and `ktune report` end to end, on databases written through the db API: the
// refusals (families, schema versions, arguments), the formats, the --fail-over gate, and the
// report's cells per key and diff section.
#include <filesystem>
#include <regex>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "unit/db_test_support.hpp"

namespace ktune::db {
namespace {

using ::ktune::testing::run_ktune_args;
using ::testing::HasSubstr;

class DiffReportCli : public ::testing::Test {
 protected:
  test::TempDir dir;
  // A: heads 8 at 100 µs, heads 16 at 100, heads 32 at 100. B: heads 8 at 150 (outside both
  // bands: slower, config changed), heads 16 at 102 (noise), heads 64 at 100 (B only).
  std::pair<std::string, std::string> two_dbs() {
    const auto pa = dir.file("a.db"), pb = dir.file("b.db");
    auto a = Database::open(pa, true);
    auto b = Database::open(pb, true);
    const auto ra = a->begin_run(test::sample_run()), rb = b->begin_run(test::sample_run());
    a->record(test::timed(ra, test::key(8), test::config(64), 100));
    a->record(test::timed(ra, test::key(16), test::config(64), 100));
    a->record(test::timed(ra, test::key(32), test::config(64), 100));
    b->record(test::timed(rb, test::key(8), test::config(32), 150));
    b->record(test::timed(rb, test::key(16), test::config(64), 102));
    b->record(test::timed(rb, test::key(64), test::config(64), 100));
    return {pa, pb};
  }
  std::string rope_db() {
    const auto p = dir.file("rope.db");
    auto db = Database::open(p, true);
    db->record(test::timed(db->begin_run(test::sample_run("qk_rope_cache")), test::key(16), test::config(64), 10));
    return p;
  }
};

TEST_F(DiffReportCli, DiffTableShowsVerdictsAndSummary) {
  const auto [a, b] = two_dbs();
  const auto r = run_ktune_args({"diff", "--db", a, "--db", b});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("slower"));
  EXPECT_THAT(r.out, HasSubstr("b: rows=32 warps=4"));
  EXPECT_THAT(r.out, HasSubstr("only_a"));
  EXPECT_THAT(r.out, HasSubstr("only_b"));
  EXPECT_THAT(r.out, HasSubstr("keys: 3 in A, 3 in B, 2 with a winner in both"));
  EXPECT_THAT(r.out, HasSubstr("verdicts: slower 1 same 1 only_a 1 only_b 1"));
  EXPECT_THAT(r.out, HasSubstr("geometric mean 1.2369"));  // sqrt(1.5 x 1.02)
}

TEST_F(DiffReportCli, DiffJsonAndCsv) {
  const auto [a, b] = two_dbs();
  const auto j = run_ktune_args({"diff", "--db", a, "--db", b, "--format", "json"});
  ASSERT_EQ(j.status, 0) << j.err;
  const auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc.at("kernel"), "mla_decode");
  EXPECT_EQ(doc.at("summary").at("verdicts").at("slower"), 1);
  EXPECT_EQ(doc.at("summary").at("worst").at(0).at("key").at("heads"), 8);
  ASSERT_EQ(doc.at("keys").size(), 4u);
  EXPECT_EQ(doc.at("keys").at(0).at("b_config"), "rows=32 warps=4");
  EXPECT_DOUBLE_EQ(doc.at("keys").at(0).at("a_p90_us").get<double>(), 110);
  const auto c = run_ktune_args({"diff", "--db", a, "--db", b, "--format", "csv"});
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_THAT(c.out, HasSubstr("key.heads,key.block_len,key.causal,key.kv_dtype,key.batch,a_us,b_us,b_over_a,verdict"));
  EXPECT_EQ(std::count(c.out.begin(), c.out.end(), '\n'), 5);
}

TEST_F(DiffReportCli, FailOverGatesRegressions) {
  const auto [a, b] = two_dbs();
  const auto fail = run_ktune_args({"diff", "--db", a, "--db", b, "--fail-over", "1.05"});
  EXPECT_EQ(fail.status, 1);
  EXPECT_THAT(fail.err, HasSubstr("1 keys regress beyond 1.05x (--fail-over), e.g. heads=8"));
  EXPECT_THAT(fail.out, HasSubstr("slower")) << "the diff is printed before the gate fails";
  const auto pass = run_ktune_args({"diff", "--db", a, "--db", b, "--fail-over", "1.6"});
  EXPECT_EQ(pass.status, 0) << pass.err;
}

TEST_F(DiffReportCli, DiffRefusesDifferentFamilies) {
  const auto [a, b] = two_dbs();
  const auto r = run_ktune_args({"diff", "--db", a, "--db", rope_db()});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("holds mla_decode results and"));
  EXPECT_THAT(r.err, HasSubstr("holds qk_rope_cache: a diff compares one kernel family"));
}

TEST_F(DiffReportCli, DiffRefusesAnOlderSchemaVersion) {
  const auto [a, b] = two_dbs();
  const auto old = dir.file("v1.db");
  test::write_v1_by_hand(old);
  const auto before = test::fingerprint(old);
  const auto r = run_ktune_args({"diff", "--db", a, "--db", old});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("schema version 1 is older than"));
  EXPECT_THAT(r.err, HasSubstr("ktune migrate --db"));
  EXPECT_EQ(test::fingerprint(old), before) << "a refused file is left as it was";
}

TEST_F(DiffReportCli, DiffRefusesMixedFamiliesWithoutKernelAndBadArguments) {
  const auto [a, b] = two_dbs();
  {
    auto db = Database::open(a, false);
    db->record(test::timed(db->begin_run(test::sample_run("qk_rope_cache")), test::key(16), test::config(64), 10));
  }
  auto r = run_ktune_args({"diff", "--db", a, "--db", b});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("several kernel families (mla_decode, qk_rope_cache); name one with --kernel"));
  EXPECT_EQ(run_ktune_args({"diff", "--db", a, "--db", b, "--kernel", "mla_decode"}).status, 0);
  r = run_ktune_args({"diff", "--db", b});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("give two databases (--db A --db B), or one and --pair"));
  r = run_ktune_args({"diff", "--db", a, "--db", b, "--pair", "kv_dtype=bf16,fp8_e4m3fn"});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("--pair compares two values within one database"));
  r = run_ktune_args({"diff", "--db", b, "--pair", "dtype=bf16,fp8_e4m3fn"});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("mla_decode has no key field 'dtype'"));
}

TEST_F(DiffReportCli, DiffPairComparesTwoValuesOfOneDatabase) {
  const auto p = dir.file("pair.db");
  {
    auto db = Database::open(p, true);
    const auto run = db->begin_run(test::sample_run());
    db->record(test::timed(run, test::key(16, 1, 0, 0), test::config(64), 100));
    db->record(test::timed(run, test::key(16, 1, 0, 1), test::config(64), 50));
  }
  const auto r = run_ktune_args({"diff", "--db", p, "--pair", "kv_dtype=bf16,fp8_e4m3fn", "--format", "json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc.at("a").at("keys_with"), "kv_dtype=bf16");
  EXPECT_EQ(doc.at("b").at("keys_with"), "kv_dtype=fp8_e4m3fn");
  ASSERT_EQ(doc.at("keys").size(), 1u);
  EXPECT_FALSE(doc.at("keys").at(0).at("key").contains("kv_dtype"));
  EXPECT_DOUBLE_EQ(doc.at("keys").at(0).at("b_over_a").get<double>(), 0.5);
}

// The data-key of every cell of heatmap `id` in `html`.
std::vector<std::string> cells_of(const std::string& html, const std::string& id) {
  const auto start = html.find("id=\"" + id + "\"");
  if (start == std::string::npos) return {};
  const auto end = html.find("</div>", start);
  const std::string part = html.substr(start, end - start);
  static const std::regex cell("<g class=\"cell[^\"]*\" data-key=\"([^\"]*)\"");
  std::vector<std::string> keys;
  for (std::sregex_iterator it(part.begin(), part.end(), cell), e; it != e; ++it) keys.push_back((*it)[1]);
  return keys;
}

TEST_F(DiffReportCli, ReportHasACellPerKeyGapsAndTheDiffOfTwo) {
  const auto [a, b] = two_dbs();
  {
    auto db = Database::open(a, false);
    Gap g;
    g.family = "mla_decode";
    g.arch = "sm_90a";
    g.key = test::key(128);
    g.reason = GapReason::no_config;
    g.source = "measured";
    g.run_id = 1;
    db->add_gap(g);
  }
  const auto out = dir.file("r.html");
  const auto r = run_ktune_args({"report", "--db", a, "--db", b, "--out", out});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto html = test::read_file(out);
  EXPECT_EQ(cells_of(html, "keys-1-mla_decode").size(), 4u);  // 3 winners and the gap
  EXPECT_EQ(cells_of(html, "keys-2-mla_decode").size(), 3u);
  EXPECT_THAT(html,
              HasSubstr("<g class=\"cell gap\" data-key=\"heads=128,block_len=2,causal=0,kv_dtype=1,batch=32\">"));
  EXPECT_THAT(html, HasSubstr("gap: no_config"));
  EXPECT_EQ(cells_of(html, "diff-mla_decode-cells").size(), 5u);  // the union of the keys
  EXPECT_EQ(cells_of(html, "gain-1-mla_decode").size(), 3u);      // the keys with a winner
  EXPECT_THAT(html, HasSubstr("class=\"roofline\""));
  EXPECT_THAT(html, HasSubstr("Where the sweep's time went"));
}

TEST_F(DiffReportCli, ReportNeverReplacesADatabase) {
  const auto [a, b] = two_dbs();
  const auto before = test::fingerprint(b);
  const auto r = run_ktune_args({"report", "--db", a, "--out", b});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("is a SQLite database; not replacing it with a report"));
  EXPECT_EQ(test::fingerprint(b), before);
}

}  // namespace
}  // namespace ktune::db
