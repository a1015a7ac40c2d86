// Every Database method on a fresh file: runs, measurements, done(), gaps, winners, filters.
#include <cmath>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "db_test_support.hpp"

namespace ktune::db {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class DbRecords : public ::testing::Test {
 protected:
  test::TempDir dir;
  std::string path = dir.file("ktune.db");
  std::unique_ptr<Database> db = Database::open(path, true);

  // What a ktune::Error thrown by `f` says.
  template <class F>
  std::string error_of(F&& f) {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  }
};

std::vector<int64_t> ids_of(const std::vector<Run>& runs) {
  std::vector<int64_t> ids;
  for (const auto& r : runs) ids.push_back(r.id);
  return ids;
}

TEST(DbEnums, NamesRoundTripAndUnknownNamesAreErrors) {
  for (auto s :
       {Status::ok, Status::verify_failed, Status::compile_error, Status::fault, Status::timeout, Status::infeasible})
    EXPECT_EQ(status_from_string(to_string(s)), s);
  for (auto r : {GapReason::no_config, GapReason::compile_error, GapReason::verify_failed, GapReason::fault,
                 GapReason::timeout, GapReason::declared})
    EXPECT_EQ(gap_reason_from_string(to_string(r)), r);
  try {
    status_from_string("crashed");
    ADD_FAILURE() << "an unknown status was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("crashed"), HasSubstr("verify_failed")));
  }
  EXPECT_THROW(gap_reason_from_string("ok"), Error);
}

TEST_F(DbRecords, RunRoundTripsWithEveryField) {
  auto r = test::sample_run();
  r.started_at = "2025-06-01T12:00:00Z";
  r.matrix_tflops = 900.5;
  r.matrix_probe = "wgmma m64n256k16 bf16";
  r.id = db->begin_run(r);
  const auto back = db->run(r.id);
  EXPECT_EQ(back.id, r.id);
  for (auto field : {&Run::started_at, &Run::family, &Run::backend, &Run::device_name, &Run::arch, &Run::driver_version,
                     &Run::compiler_version, &Run::template_hash, &Run::ktune_version, &Run::host, &Run::command})
    EXPECT_EQ(back.*field, r.*field);
  EXPECT_EQ(back.compute_units, 132);
  EXPECT_EQ(back.copy_gbps, 4100);
  EXPECT_EQ(back.matrix_tflops, 900.5);
  EXPECT_EQ(back.matrix_probe, "wgmma m64n256k16 bf16");

  const auto now = db->run(db->begin_run(test::sample_run()));
  EXPECT_THAT(now.started_at, ::testing::MatchesRegex("20[0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-9:]+Z"));
  EXPECT_THAT(error_of([&] { db->run(999); }), AllOf(HasSubstr(path), HasSubstr("no run 999")));
}

// A roof's fractions mean something only with the probe that measured it: a run names one exactly
// when it measured a roof, and a refused run leaves no row.
TEST_F(DbRecords, ARunNamesItsMatrixProbeExactlyWhenItMeasuredARoof) {
  auto unnamed = test::sample_run();
  unnamed.matrix_tflops = 640;
  EXPECT_THAT(error_of([&] { db->begin_run(unnamed); }), AllOf(HasSubstr(path), HasSubstr("matrix_probe")));
  auto named_without_roof = test::sample_run();
  named_without_roof.matrix_probe = "mma.sync m16n8k16 bf16";
  EXPECT_THAT(error_of([&] { db->begin_run(named_without_roof); }), HasSubstr("matrix_probe"));
  EXPECT_TRUE(db->runs().empty());
  unnamed.matrix_probe = named_without_roof.matrix_probe;
  EXPECT_EQ(db->run(db->begin_run(unnamed)).matrix_probe, "mma.sync m16n8k16 bf16");
  EXPECT_EQ(db->run(db->begin_run(test::sample_run())).matrix_probe, "") << "no roof, no probe";
}

TEST_F(DbRecords, RunsFilterByEveryField) {
  const auto h200 = db->begin_run(test::sample_run());
  const auto mi300 = db->begin_run(test::sample_run("mla_decode", "AMD Instinct MI300X", "gfx942"));
  const auto rope = db->begin_run(test::sample_run("qk_rope_cache"));
  db->record(test::timed(h200, test::key(16), test::config(64), 10));
  db->record(test::untimed(mi300, test::key(128), test::config(64), Status::fault, "illegal address"));

  EXPECT_THAT(ids_of(db->runs()), ElementsAre(h200, mi300, rope));
  Filter f;
  f.family = "mla_decode";
  EXPECT_THAT(ids_of(db->runs(f)), ElementsAre(h200, mi300));
  f.arch = "gfx942";
  EXPECT_THAT(ids_of(db->runs(f)), ElementsAre(mi300));
  f = {};
  f.device_name = "NVIDIA H200";
  EXPECT_THAT(ids_of(db->runs(f)), ElementsAre(h200, rope));
  f = {};
  f.key_equals = {{"heads", 128}};
  EXPECT_THAT(ids_of(db->runs(f)), ElementsAre(mi300));
  f = {};
  f.status = Status::ok;
  EXPECT_THAT(ids_of(db->runs(f)), ElementsAre(h200));
  f = {};
  f.run_id = rope;
  EXPECT_THAT(ids_of(db->runs(f)), ElementsAre(rope));
}

TEST_F(DbRecords, CompatibleRunsShareEveryValidator) {
  const auto like = test::sample_run();
  const auto a = db->begin_run(like);
  const auto b = db->begin_run(like);
  // One run differing in each validator: none of them may be resumed.
  auto other = like;
  other.family = "qk_rope_cache";
  db->begin_run(other);
  other = like;
  other.backend = "hip";
  db->begin_run(other);
  other = like;
  other.device_name = "NVIDIA H100";
  db->begin_run(other);
  other = like;
  other.arch = "sm_90";
  db->begin_run(other);
  other = like;
  other.template_hash = "fedcba9876543210";
  db->begin_run(other);
  other = like;
  other.compiler_version = "nvrtc 12.4";  // codegen's compiler validator would refuse the mix
  db->begin_run(other);
  // Provenance that is not a validator does not matter.
  other = like;
  other.host = "node99";
  other.ktune_version = "0.1.1";
  const auto c = db->begin_run(other);
  EXPECT_THAT(ids_of(db->compatible_runs(like)), ElementsAre(a, b, c));
}

// ktune migrate's step for the template hash: only the given family's runs under the given hashes
// change, each adoption counted apart, and a run of it is resumable under the new hash afterwards.
TEST_F(DbRecords, AdoptTemplateHashesChangesOnlyThatFamilysRunsUnderThoseHashes) {
  const auto old_hash = test::sample_run("mla_decode", "NVIDIA H200", "sm_90a", "aaaaaaaaaaaaaaaa");
  const auto a = db->begin_run(old_hash);
  const auto b = db->begin_run(old_hash);
  db->begin_run(test::sample_run("qk_rope_cache", "NVIDIA H200", "sm_90a", "aaaaaaaaaaaaaaaa"));
  db->begin_run(test::sample_run("mla_decode", "NVIDIA H200", "sm_90a", "bbbbbbbbbbbbbbbb"));
  db->begin_run(test::sample_run("mla_decode", "NVIDIA H200", "sm_90a", "dddddddddddddddd"));
  const std::vector<HashAdoption> steps = {{"mla_decode", "aaaaaaaaaaaaaaaa", "cccccccccccccccc"},
                                           {"mla_decode", "dddddddddddddddd", "cccccccccccccccc"},
                                           {"mla_decode", "eeeeeeeeeeeeeeee", "cccccccccccccccc"}};
  EXPECT_THAT(db->adopt_template_hashes(steps), ElementsAre(2, 1, 0));
  std::vector<std::string> hashes;
  for (const auto& r : db->runs()) hashes.push_back(r.family + " " + r.template_hash);
  EXPECT_THAT(hashes, ElementsAre("mla_decode cccccccccccccccc", "mla_decode cccccccccccccccc",
                                  "qk_rope_cache aaaaaaaaaaaaaaaa", "mla_decode bbbbbbbbbbbbbbbb",
                                  "mla_decode cccccccccccccccc"));
  auto like = old_hash;
  like.template_hash = "cccccccccccccccc";
  EXPECT_THAT(ids_of(db->compatible_runs(like)), ElementsAre(a, b, 5));
  EXPECT_THAT(db->adopt_template_hashes(steps), ElementsAre(0, 0, 0));  // none left
}

TEST_F(DbRecords, MeasurementRoundTripsWithEveryField) {
  auto with_roofs = test::sample_run();
  with_roofs.matrix_tflops = 500;
  with_roofs.matrix_probe = "mma.sync m16n8k16 bf16";
  const auto run = db->begin_run(with_roofs);
  auto m = test::timed(run, test::key(16), test::config(64), 12.5);
  m.frac_matrix = 0.25;
  m.detail = "line 1, \"quoted\"\nline 2";
  m.id = db->record(m);
  const auto all = db->measurements();
  ASSERT_EQ(all.size(), 1u);
  const auto& back = all[0];
  EXPECT_EQ(back.id, m.id);
  EXPECT_EQ(back.run_id, run);
  EXPECT_EQ(back.key, m.key);
  EXPECT_EQ(back.config, m.config);
  EXPECT_EQ(back.shape, m.shape);
  EXPECT_EQ(back.status, Status::ok);
  for (auto field : {&Measurement::median_us, &Measurement::p10_us, &Measurement::p90_us, &Measurement::gbps,
                     &Measurement::tflops, &Measurement::max_abs_err, &Measurement::rel_l2_err})
    EXPECT_EQ(back.*field, m.*field);
  EXPECT_EQ(back.frac_copy_bw, m.frac_copy_bw);
  EXPECT_EQ(back.frac_matrix, std::optional<double>(0.25));
  EXPECT_EQ(back.samples, 50);
  EXPECT_EQ(back.detail, m.detail);
  EXPECT_FALSE(back.measured_at.empty());
}

// A roof the run did not measure gives no fraction: NULL, not a 0 that reads as "no use of it".
TEST_F(DbRecords, AFractionOfARoofNotMeasuredIsNull) {
  const auto run = db->begin_run(test::sample_run());
  auto m = test::timed(run, test::key(16), test::config(64), 12.5);
  m.frac_matrix.reset();
  db->record(m);
  const auto back = db->measurements().at(0);
  EXPECT_FALSE(back.frac_matrix.has_value());
  EXPECT_TRUE(back.frac_copy_bw.has_value());
  SQLite::Database raw(path, SQLite::OPEN_READWRITE);
  EXPECT_EQ(raw.execAndGet("SELECT count(*) FROM measurements WHERE frac_matrix IS NULL AND frac_copy_bw IS NOT NULL")
                .getInt(),
            1);
  // Rows that hold 0 for it (earlier ktune, other tools) read as none too; the copy roof was measured.
  raw.exec("UPDATE measurements SET frac_matrix = 0");
  EXPECT_FALSE(db->measurements().at(0).frac_matrix.has_value());
  EXPECT_FALSE(db->winners().at(0).m.frac_matrix.has_value());
  EXPECT_TRUE(db->winners().at(0).m.frac_copy_bw.has_value());
}

TEST_F(DbRecords, UntimedRowsStoreNullTimingAndNanErrorsSurvive) {
  const auto run = db->begin_run(test::sample_run());
  auto m = test::untimed(run, test::key(16), test::config(64), Status::verify_failed, "NaN at o[0,0,3,17]");
  m.median_us = 99;  // ignored: nothing was timed (samples == 0)
  m.max_abs_err = std::nan("");
  m.rel_l2_err = INFINITY;
  db->record(m);
  const auto back = db->measurements().at(0);
  EXPECT_EQ(back.median_us, 0);
  EXPECT_TRUE(std::isnan(back.max_abs_err));
  EXPECT_EQ(back.rel_l2_err, INFINITY);
  SQLite::Database raw(path, SQLite::OPEN_READONLY);
  SQLite::Statement q(raw, "SELECT median_us IS NULL, gbps IS NULL, family FROM measurements");
  ASSERT_TRUE(q.executeStep());
  EXPECT_EQ(q.getColumn(0).getInt(), 1);
  EXPECT_EQ(q.getColumn(1).getInt(), 1);
  EXPECT_EQ(q.getColumn(2).getString(), "mla_decode") << "the family is the run's";
}

TEST_F(DbRecords, EveryStatusIsAcceptedByTheSchema) {
  const auto run = db->begin_run(test::sample_run());
  for (auto s : {Status::verify_failed, Status::compile_error, Status::fault, Status::timeout, Status::infeasible})
    db->record(test::untimed(run, test::key(16), test::config(static_cast<int>(s)), s, ""));
  db->record(test::timed(run, test::key(16), test::config(64), 10));
  Filter f;
  for (auto s :
       {Status::ok, Status::verify_failed, Status::compile_error, Status::fault, Status::timeout, Status::infeasible}) {
    f.status = s;
    ASSERT_EQ(db->measurements(f).size(), 1u) << to_string(s);
    EXPECT_EQ(db->measurements(f)[0].status, s);
  }
  SQLite::Database raw(path, SQLite::OPEN_READWRITE);
  EXPECT_THROW(raw.exec("INSERT INTO measurements (run_id, family, key, config, shape, status, samples, detail) "
                        "VALUES (1, 'mla_decode', '', '', '', 'crashed', 0, '')"),
               SQLite::Exception)
      << "the CHECK constraint must reject statuses ktune does not know";
}

TEST_F(DbRecords, RecordRejectsUntimedOkRowsAndUnknownRuns) {
  const auto run = db->begin_run(test::sample_run());
  EXPECT_THAT(error_of([&] { db->record(test::untimed(run, test::key(16), test::config(64), Status::ok, "")); }),
              AllOf(HasSubstr(path), HasSubstr("record (run 1, key heads=16"), HasSubstr("CHECK constraint failed")));
  auto inverted = test::timed(run, test::key(16), test::config(64), 10);
  inverted.p10_us = 11;
  EXPECT_THROW(db->record(inverted), Error) << "p10 above the median";
  EXPECT_THAT(error_of([&] { db->record(test::timed(77, test::key(16), test::config(64), 10)); }),
              AllOf(HasSubstr(path), HasSubstr("no run 77")));
  // A NaN would be stored as NULL, which the checks let through and the winners view sorts first.
  for (double bad : {std::nan(""), double{INFINITY}}) {
    auto m = test::timed(run, test::key(16), test::config(64), 10);
    m.median_us = bad;
    EXPECT_THAT(error_of([&] { db->record(m); }), AllOf(HasSubstr(path), HasSubstr("an ok result needs finite times")));
    m = test::timed(run, test::key(16), test::config(64), 10);
    m.p90_us = bad;
    EXPECT_THROW(db->record(m), Error) << "p90 " << bad;
  }
  EXPECT_TRUE(db->measurements().empty());
}

// Key text that another tool wrote (no CHECK covers its form) is reported with the file, the
// operation, the table, the row and the column.
TEST_F(DbRecords, MalformedStoredKeysNameTheirRow) {
  const auto run = db->begin_run(test::sample_run());
  db->record(test::timed(run, test::key(16), test::config(64), 10));
  db->add_gap(test::declared_gap("gfx942", test::key(32)));
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE);
    raw.exec("UPDATE measurements SET config = 'rows=64 ' WHERE id = 1");
    raw.exec("UPDATE gaps SET key = 'heads==32' WHERE id = 1");
  }
  EXPECT_THAT(error_of([&] { db->measurements(); }),
              AllOf(HasSubstr(path), HasSubstr("reading measurements"), HasSubstr("measurements row 1, column config"),
                    HasSubstr("rows=64 ")));
  EXPECT_THAT(error_of([&] { db->gaps(); }),
              AllOf(HasSubstr(path), HasSubstr("gaps row 1, column key"), HasSubstr("heads==32")));
}

// Text that parses but is not canonical would be a second key wherever keys are compared as
// text: the winners view would give "heads=016" a winner of its own beside heads=16's.
TEST_F(DbRecords, NonCanonicalStoredTextNamesItsRow) {
  const auto run = db->begin_run(test::sample_run());
  db->record(test::timed(run, test::key(16), test::config(64), 10));
  ASSERT_NO_THROW(db->measurements());
  ASSERT_NO_THROW(db->done({run}));
  const std::string canonical = test::key(16).canonical();
  std::string padded = canonical;
  padded.replace(padded.find("=16"), 3, "=016");
  SQLite::Database raw(path, SQLite::OPEN_READWRITE);
  raw.exec(fmt::format("UPDATE measurements SET key = '{}'", padded));
  EXPECT_THAT(error_of([&] { db->measurements(); }), AllOf(HasSubstr("measurements row 1, column key"),
                                                           HasSubstr("not in canonical form"), HasSubstr(canonical)));
  EXPECT_THAT(error_of([&] { db->done({run}); }),
              AllOf(HasSubstr(path), HasSubstr("measurements run 1, column key"), HasSubstr("not in canonical form")));
}

// The arches of a family come from runs and gaps without reading their keys.
TEST_F(DbRecords, ArchesOfAFamilyReadNoKeys) {
  db->begin_run(test::sample_run("mla_decode", "NVIDIA H200", "sm_90a"));
  db->add_gap(test::declared_gap("gfx942", test::key(32)));
  db->begin_run(test::sample_run("qk_rope_cache", "NVIDIA H200", "sm_80"));
  SQLite::Database(path, SQLite::OPEN_READWRITE).exec("UPDATE gaps SET key = 'heads==32'");
  EXPECT_EQ(db->arches("mla_decode"), (std::vector<std::string>{"gfx942", "sm_90a"}));
  EXPECT_EQ(db->arches("qk_rope_cache"), (std::vector<std::string>{"sm_80"}));
  EXPECT_TRUE(db->arches("other").empty());
}

TEST_F(DbRecords, MeasurementsFilterByKeyFieldsRunAndDevice) {
  const auto h200 = db->begin_run(test::sample_run());
  const auto mi300 = db->begin_run(test::sample_run("mla_decode", "AMD Instinct MI300X", "gfx942"));
  const auto a = db->record(test::timed(h200, test::key(16, 2, 0, 1), test::config(64), 10));
  const auto b = db->record(test::timed(h200, test::key(16, 4, 1, 0), test::config(64), 10));
  const auto c = db->record(test::timed(mi300, test::key(128, 2, 0, 1), test::config(64), 10));
  auto ids = [&](const Filter& f) {
    std::vector<int64_t> out;
    for (const auto& m : db->measurements(f)) out.push_back(m.id);
    return out;
  };
  Filter f;
  EXPECT_THAT(ids(f), ElementsAre(a, b, c));
  f.key_equals = {{"heads", 16}};
  EXPECT_THAT(ids(f), ElementsAre(a, b));
  f.key_equals = {{"heads", 16}, {"causal", 1}};
  EXPECT_THAT(ids(f), ElementsAre(b));
  f.key_equals = {{"kv_dtype", 1}};
  EXPECT_THAT(ids(f), ElementsAre(a, c));
  f.device_name = "AMD Instinct MI300X";
  EXPECT_THAT(ids(f), ElementsAre(c));
  f = {};
  f.arch = "sm_90a";
  f.run_id = mi300;
  EXPECT_TRUE(ids(f).empty());
  f = {};
  f.key_equals = {{"heads') OR 1=1 --", 1}};
  EXPECT_THAT(error_of([&] { db->measurements(f); }), HasSubstr("is not a field name"));
}

TEST_F(DbRecords, DoneListsWhatTheGivenRunsMeasured) {
  const auto first = db->begin_run(test::sample_run());
  db->record(test::timed(first, test::key(16), test::config(64), 10));
  db->record(test::untimed(first, test::key(16), test::config(128), Status::compile_error, "too many registers"));
  db->record(test::timed(first, test::key(16), test::config(64), 11));  // measured twice: listed once
  // The sweep was killed here; a resumed run measured one more candidate.
  const auto resumed = db->begin_run(test::sample_run());
  db->record(test::timed(resumed, test::key(8), test::config(32), 9));
  const auto unrelated = db->begin_run(test::sample_run("mla_decode", "NVIDIA H100", "sm_90a"));
  db->record(test::timed(unrelated, test::key(32), test::config(32), 9));

  using Pair = std::pair<Params, Params>;
  EXPECT_THAT(db->done({first, resumed}),
              ElementsAre(Pair{test::key(16), test::config(128)}, Pair{test::key(16), test::config(64)},
                          Pair{test::key(8), test::config(32)}));
  EXPECT_THAT(db->done({resumed}), ElementsAre(Pair{test::key(8), test::config(32)}));
  EXPECT_TRUE(db->done({}).empty());
  EXPECT_TRUE(db->done({4242}).empty());
}

TEST_F(DbRecords, WinnersTakeTheLowestOkMedianPerRunAndKey) {
  const auto run = db->begin_run(test::sample_run());
  const auto k16 = test::key(16), k32 = test::key(32), k64 = test::key(64);
  db->record(test::timed(run, k16, test::config(64), 10.0));
  const auto best = db->record(test::timed(run, k16, test::config(32), 8.0));
  // Faster, but wrong: a failed row must never win, even with timing.
  db->record(test::timed(run, k16, test::config(16), 1.0, Status::verify_failed));
  db->record(test::untimed(run, k16, test::config(128), Status::fault, "illegal address"));
  // Ties go to the earlier row.
  const auto tie_first = db->record(test::timed(run, k32, test::config(64), 7.0));
  db->record(test::timed(run, k32, test::config(32), 7.0));
  // A key without any ok row has no winner.
  db->record(test::timed(run, k64, test::config(16), 1.0, Status::verify_failed));
  // Another run of the same key has its own winner.
  const auto later = db->begin_run(test::sample_run());
  const auto later_best = db->record(test::timed(later, k16, test::config(64), 9.5));

  const auto w = db->winners();
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0].run.id, run);
  EXPECT_EQ(w[0].m.key, k16);
  EXPECT_EQ(w[0].m.id, best);
  EXPECT_EQ(w[0].m.median_us, 8.0);
  EXPECT_EQ(w[1].m.key, k32);
  EXPECT_EQ(w[1].m.id, tie_first);
  EXPECT_EQ(w[2].run.id, later);
  EXPECT_EQ(w[2].m.id, later_best);
  EXPECT_EQ(w[2].run.device_name, "NVIDIA H200");
}

TEST_F(DbRecords, WinnersFilterAndTheViewServesPlainSqlite) {
  const auto h200 = db->begin_run(test::sample_run());
  const auto mi300 = db->begin_run(test::sample_run("mla_decode", "AMD Instinct MI300X", "gfx942"));
  db->record(test::timed(h200, test::key(16), test::config(64), 10));
  db->record(test::timed(h200, test::key(32), test::config(64), 20));
  const auto mi300_16 = db->record(test::timed(mi300, test::key(16), test::config(32), 30));
  Filter f;
  f.arch = "gfx942";
  ASSERT_EQ(db->winners(f).size(), 1u);
  EXPECT_EQ(db->winners(f)[0].m.id, mi300_16);
  f = {};
  f.key_equals = {{"heads", 16}};
  EXPECT_EQ(db->winners(f).size(), 2u);
  f.device_name = "NVIDIA H200";
  ASSERT_EQ(db->winners(f).size(), 1u);
  EXPECT_EQ(db->winners(f)[0].m.median_us, 10);
  f.status = Status::fault;
  EXPECT_TRUE(db->winners(f).empty()) << "winners are ok rows";

  SQLite::Database raw(path, SQLite::OPEN_READONLY);
  SQLite::Statement q(raw, "SELECT median_us, device_name FROM winners WHERE json_extract(key_json, '$.heads') = 16 "
                           "AND arch = 'gfx942'");
  ASSERT_TRUE(q.executeStep());
  EXPECT_EQ(q.getColumn(0).getDouble(), 30);
  EXPECT_EQ(q.getColumn(1).getString(), "AMD Instinct MI300X");
  EXPECT_FALSE(q.executeStep());
}

Gap declared_gap() {
  return test::declared_gap("gfx942", test::key(16, 2, 0, 2), test::key(16, 1, 0, 2).canonical(),
                            "flatten the block to L = 1 rows");
}

TEST_F(DbRecords, GapsAreAddedReplacedAndRemoved) {
  auto g = declared_gap();
  const auto id = db->add_gap(g);
  auto all = db->gaps();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].id, id);
  EXPECT_EQ(all[0].key, g.key);
  EXPECT_EQ(all[0].reason, GapReason::declared);
  EXPECT_EQ(all[0].source, g.source);
  EXPECT_FALSE(all[0].run_id);
  EXPECT_EQ(all[0].fallback, g.fallback);
  EXPECT_EQ(all[0].fallback_note, g.fallback_note);
  EXPECT_FALSE(all[0].created_at.empty());

  g.fallback = "";  // means none
  g.fallback_note = "";
  EXPECT_EQ(db->add_gap(g), id) << "same family/arch/key/source replaces, keeping the id";
  all = db->gaps();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].fallback, "none");

  const auto run = db->begin_run(test::sample_run("mla_decode", "AMD Instinct MI300X", "gfx942"));
  Gap measured = declared_gap();
  measured.reason = GapReason::no_config;
  measured.source = "measured";
  measured.run_id = run;
  measured.detail = "every config failed verification";
  EXPECT_NE(db->add_gap(measured), id);
  EXPECT_EQ(db->gaps().size(), 2u);

  EXPECT_TRUE(db->remove_gap(g.family, g.arch, g.key, g.source));
  EXPECT_FALSE(db->remove_gap(g.family, g.arch, g.key, g.source));
  all = db->gaps();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].source, "measured");
  EXPECT_EQ(all[0].run_id, run);
}

TEST_F(DbRecords, GapsMustBeConsistent) {
  auto g = declared_gap();
  g.run_id = db->begin_run(test::sample_run());
  EXPECT_THAT(error_of([&] { db->add_gap(g); }), AllOf(HasSubstr(path), HasSubstr("CHECK constraint failed")))
      << "a declared gap has no run";
  g = declared_gap();
  g.source = "measured";
  g.reason = GapReason::fault;
  EXPECT_THROW(db->add_gap(g), Error) << "a measured gap needs its run";
  g = declared_gap();
  g.reason = GapReason::fault;
  EXPECT_THROW(db->add_gap(g), Error) << "a declared gap has reason declared";
  g = declared_gap();
  g.fallback = g.key.canonical();
  EXPECT_THROW(db->add_gap(g), Error) << "a key cannot be its own fallback";
  g = declared_gap();
  g.fallback = "pad to 4";
  EXPECT_THAT(error_of([&] { db->add_gap(g); }), HasSubstr("malformed parameter"));
  EXPECT_TRUE(db->gaps().empty());
}

TEST_F(DbRecords, GapsFilterByDeviceKeepDeclaredOnes) {
  db->add_gap(declared_gap());
  const auto mi300x = db->begin_run(test::sample_run("mla_decode", "AMD Instinct MI300X", "gfx942"));
  const auto other = db->begin_run(test::sample_run("mla_decode", "AMD Instinct MI308X", "gfx942"));
  for (auto run : {mi300x, other}) {
    Gap g = declared_gap();
    g.key = test::key(run == mi300x ? 96 : 24);
    g.reason = GapReason::timeout;
    g.source = "measured";
    g.run_id = run;
    db->add_gap(g);
  }
  Filter f;
  f.device_name = "AMD Instinct MI300X";
  const auto gaps = db->gaps(f);
  ASSERT_EQ(gaps.size(), 2u);
  EXPECT_EQ(gaps[0].key.at("heads"), 16);  // declared: holds for every gfx942 device
  EXPECT_EQ(gaps[1].key.at("heads"), 96);
  f = {};
  f.key_equals = {{"heads", 24}};
  ASSERT_EQ(db->gaps(f).size(), 1u);
  f.arch = "sm_90a";
  EXPECT_TRUE(db->gaps(f).empty());
  f = {};
  f.run_id = other;
  ASSERT_EQ(db->gaps(f).size(), 1u);
  EXPECT_EQ(db->gaps(f)[0].key.at("heads"), 24);
}

}  // namespace
}  // namespace ktune::db
