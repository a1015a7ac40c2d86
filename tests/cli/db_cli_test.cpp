// `ktune query`, `ktune gaps` and `ktune gap add|rm` end to end, on databases written through
// the db API: labels in keys, CSV that an RFC 4180 reader reads back exactly, JSON, errors.
#include <cmath>
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <SQLiteCpp/Database.h>

#include "cli_run.hpp"
#include "unit/db_test_support.hpp"

namespace ktune::db {
namespace {

using ::ktune::testing::run_ktune_args;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

// RFC 4180: records end with CRLF; a quoted field may hold commas, CRLF and doubled quotes.
std::vector<std::vector<std::string>> parse_csv(std::string_view text) {
  std::vector<std::vector<std::string>> records(1, std::vector<std::string>(1));
  for (size_t i = 0; i < text.size(); ++i) {
    auto& field = records.back().back();
    if (text[i] == '"' && field.empty()) {
      for (++i; i < text.size() && !(text[i] == '"' && (i + 1 == text.size() || text[i + 1] != '"')); ++i) {
        if (text[i] == '"') ++i;  // "" inside quotes
        field += text[i];
      }
    } else if (text[i] == ',') {
      records.back().emplace_back();
    } else if (text.substr(i, 2) == "\r\n") {
      ++i;
      records.emplace_back(1);
    } else {
      field += text[i];
    }
  }
  if (records.back() == std::vector<std::string>(1)) records.pop_back();  // after the last CRLF
  return records;
}

const std::string tricky_detail = "error: too many registers, \"rows=128\" needs 300\nsecond line of the log";

// A database with one run: two ok configs of an fp8 key, a faster verify failure, a compile
// error with a multi-line quoted detail, and an ok bf16 key.
std::string sample_db(const test::TempDir& dir) {
  const auto path = dir.file("ktune.db");
  auto db = Database::open(path, true);
  const auto run = db->begin_run(test::sample_run());
  const auto fp8 = test::key(16, 2, 0, 1), bf16 = test::key(16, 2, 0, 0);
  db->record(test::timed(run, fp8, test::config(64), 12.5));
  db->record(test::timed(run, fp8, test::config(32), 10.25));
  db->record(test::timed(run, fp8, test::config(16), 3.0, Status::verify_failed));
  db->record(test::untimed(run, fp8, test::config(128), Status::compile_error, tricky_detail));
  db->record(test::timed(run, bf16, test::config(64), 9.0));
  return path;
}

TEST(DbCli, QueryTableShowsLabelsTimingAndADetailExcerpt) {
  test::TempDir dir;
  const auto db = sample_db(dir);
  const auto o = run_ktune_args({"query", "--db", db});
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_THAT(o.out, AllOf(HasSubstr("kv_dtype=fp8_e4m3fn"), HasSubstr("kv_dtype=bf16"), HasSubstr("median_us"),
                           HasSubstr("10.25"), HasSubstr("compile_error"), HasSubstr("error: too many registers")));
  EXPECT_THAT(o.out, Not(HasSubstr("second line"))) << "the table shows the first line of a detail";
  EXPECT_THAT(o.out, Not(HasSubstr("kv_dtype=1 "))) << "enum values are shown by label";
}

TEST(DbCli, QueryCsvReadsBackExactly) {
  test::TempDir dir;
  const auto db = sample_db(dir);
  const auto o = run_ktune_args({"query", "--db", db, "--format", "csv"});
  ASSERT_EQ(o.status, 0) << o.err;
  const auto records = parse_csv(o.out);
  ASSERT_EQ(records.size(), 6u) << o.out;  // header + 5 measurements
  const auto& header = records[0];
  for (const auto& r : records) ASSERT_EQ(r.size(), header.size()) << o.out;
  auto column = [&](std::string_view name) {
    return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  ASSERT_LT(column("key.kv_dtype"), header.size());
  ASSERT_LT(column("detail"), header.size());
  EXPECT_EQ(records[1][column("key.kv_dtype")], "fp8_e4m3fn");
  EXPECT_EQ(records[1][column("median_us")], "12.5");
  EXPECT_EQ(records[4][column("status")], "compile_error");
  EXPECT_EQ(records[4][column("detail")], tricky_detail);
  EXPECT_EQ(records[4][column("median_us")], "") << "untimed rows have no median";
  EXPECT_EQ(records[5][column("key.kv_dtype")], "bf16");
}

TEST(DbCli, QueryWinnersAsJsonIgnoreFailedRows) {
  test::TempDir dir;
  const auto db = sample_db(dir);
  const auto o = run_ktune_args({"query", "--db", db, "--winners", "--format", "json"});
  ASSERT_EQ(o.status, 0) << o.err;
  const auto rows = nlohmann::json::parse(o.out);
  ASSERT_EQ(rows.size(), 2u) << o.out;  // ordered by run, then canonical key: kv_dtype=0 (bf16) first
  EXPECT_EQ(rows[0]["key"]["kv_dtype"], "bf16");
  EXPECT_EQ(rows[1]["key"]["kv_dtype"], "fp8_e4m3fn");
  EXPECT_EQ(rows[1]["median_us"], 10.25) << "the 3.0 us row failed verification and must not win";
  EXPECT_EQ(rows[1]["status"], "ok");
}

TEST(DbCli, QueryGainNamesTheBestSingleConfigAndTheGain) {
  test::TempDir dir;
  const auto db = sample_db(dir);
  // The bf16 key gets a second config too: rows=32 (10.25 on fp8, 18 on bf16) against rows=64
  // (12.5, 9): rows=64 is best on average; the winners gain sqrt(12.5 / 10.25 * 1) over it.
  Database::open(db, false)->record(test::timed(1, test::key(16, 2, 0, 0), test::config(32), 18.0));
  const auto o = run_ktune_args({"query", "--db", db, "--gain", "--format", "json"});
  ASSERT_EQ(o.status, 0) << o.err;
  const auto rows = nlohmann::json::parse(o.out);
  ASSERT_EQ(rows.size(), 1u) << o.out;
  EXPECT_EQ(rows[0]["keys"], 2);
  EXPECT_EQ(rows[0]["configs_on_every_key"], 2);
  EXPECT_EQ(rows[0]["best_single_config"]["rows"], 64);
  EXPECT_NEAR(rows[0]["gain_geomean"].get<double>(), std::sqrt(12.5 / 10.25), 1e-9);
  EXPECT_EQ(rows[0]["gain_max_key"]["kv_dtype"], "fp8_e4m3fn");
  const auto both = run_ktune_args({"query", "--db", db, "--gain", "--winners"});
  EXPECT_NE(both.status, 0) << "--gain and --winners are different reports";
}

// Each cache type has kernels of its own, so one config best on average over all keys says
// little: --gain-by kv_dtype gives the gain over each cache type's keys.
TEST(DbCli, QueryGainByAKeyFieldGivesOneRowPerValue) {
  test::TempDir dir;
  const auto db_path = sample_db(dir);
  {
    auto db = Database::open(db_path, false);
    // fp8: rows=64 12.5 and 5, rows=32 10.25 and 8: rows=64 is best on average, gain sqrt(12.5 / 10.25).
    db->record(test::timed(1, test::key(16, 1, 0, 1), test::config(64), 5.0));
    db->record(test::timed(1, test::key(16, 1, 0, 1), test::config(32), 8.0));
    // bf16: rows=64 9 and 4, rows=32 18 and 3: rows=64 again, gain sqrt(4 / 3).
    db->record(test::timed(1, test::key(16, 2, 0, 0), test::config(32), 18.0));
    db->record(test::timed(1, test::key(16, 1, 0, 0), test::config(64), 4.0));
    db->record(test::timed(1, test::key(16, 1, 0, 0), test::config(32), 3.0));
  }
  const auto o = run_ktune_args({"query", "--db", db_path, "--gain", "--gain-by", "kv_dtype", "--format", "json"});
  ASSERT_EQ(o.status, 0) << o.err;
  const auto rows = nlohmann::json::parse(o.out);
  ASSERT_EQ(rows.size(), 2u) << o.out;
  EXPECT_EQ(rows[0]["keys_with"], "kv_dtype=bf16");
  EXPECT_EQ(rows[0]["keys"], 2);
  EXPECT_NEAR(rows[0]["gain_geomean"].get<double>(), std::sqrt(4.0 / 3.0), 1e-9);
  EXPECT_EQ(rows[1]["keys_with"], "kv_dtype=fp8_e4m3fn");
  EXPECT_EQ(rows[1]["keys"], 2);
  EXPECT_NEAR(rows[1]["gain_geomean"].get<double>(), std::sqrt(12.5 / 10.25), 1e-9);
  // Over all four keys at once: another figure, and no keys_with column.
  const auto all = run_ktune_args({"query", "--db", db_path, "--gain", "--format", "json"});
  ASSERT_EQ(all.status, 0) << all.err;
  const auto one = nlohmann::json::parse(all.out);
  ASSERT_EQ(one.size(), 1u) << all.out;
  EXPECT_EQ(one[0]["keys"], 4);
  EXPECT_FALSE(one[0].contains("keys_with"));
  EXPECT_NEAR(one[0]["gain_geomean"].get<double>(), std::pow(12.5 / 10.25 * 4.0 / 3.0, 0.25), 1e-9);

  const auto unknown = run_ktune_args({"query", "--db", db_path, "--gain", "--gain-by", "dtype"});
  EXPECT_NE(unknown.status, 0);
  EXPECT_THAT(unknown.err,
              AllOf(HasSubstr("--gain-by dtype"), HasSubstr("no key field 'dtype'"), HasSubstr("kv_dtype")));
  const auto alone = run_ktune_args({"query", "--db", db_path, "--gain-by", "kv_dtype"});
  EXPECT_NE(alone.status, 0) << "--gain-by is a form of --gain";
}

TEST(DbCli, QueryWhereTakesLabelsAndRejectsUnknownOnes) {
  test::TempDir dir;
  const auto db = sample_db(dir);
  auto o = run_ktune_args({"query", "--db", db, "--where", "kv_dtype=bf16", "--format", "json"});
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(nlohmann::json::parse(o.out).size(), 1u);
  o = run_ktune_args({"query", "--db", db, "--kernel", "mla_decode", "--where", "kv_dtype=fp9"});
  EXPECT_EQ(o.status, 1);
  EXPECT_THAT(o.err, AllOf(HasSubstr("fp9"), HasSubstr("fp8_e4m3fnuz")));
  // Without --kernel a misspelt field (an integer value: no label to resolve) would match no row.
  for (const char* where : {"head=16", "head=bf16"}) {
    o = run_ktune_args({"query", "--db", db, "--where", where});
    EXPECT_EQ(o.status, 1) << where;
    EXPECT_THAT(o.err, AllOf(HasSubstr("no kernel family has a key field 'head'"), HasSubstr("heads"))) << where;
  }
  o = run_ktune_args({"gaps", "--db", db, "--where", "head=16"});
  EXPECT_EQ(o.status, 1);
  o = run_ktune_args({"query", "--db", db, "--status", "compile_error", "--format", "json"});
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(nlohmann::json::parse(o.out).size(), 1u);
}

TEST(DbCli, AFilterValueTheDatabaseHasNothingOfIsNoted) {
  test::TempDir dir;
  const auto db = sample_db(dir);
  // A typo finds no rows; stderr says what the database does have (stdout stays the empty result).
  auto o = run_ktune_args({"query", "--db", db, "--kernel", "mla_decod", "--format", "json"});
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(nlohmann::json::parse(o.out).size(), 0u);
  EXPECT_THAT(o.err, HasSubstr("has no kernel 'mla_decod' (it has mla_decode)"));
  for (const std::vector<std::string>& verb :
       {std::vector<std::string>{"query", "--winners"}, {"query", "--gain"}, {"gaps"}}) {
    auto args = verb;
    for (const char* a : {"--db", db.c_str(), "--arch", "sm90a", "--device", "H200"}) args.emplace_back(a);
    o = run_ktune_args(args);
    ASSERT_EQ(o.status, 0) << o.err;
    EXPECT_THAT(o.err, AllOf(HasSubstr("has no arch 'sm90a' (it has sm_90a)"),
                             HasSubstr("has no device 'H200' (it has NVIDIA H200)")))
        << verb.back();
  }
  // Twin: values it has, with rows or without (no bf16 compile error), note nothing.
  o = run_ktune_args({"query", "--db", db, "--kernel", "mla_decode", "--arch", "sm_90a", "--status", "compile_error",
                      "--where", "kv_dtype=bf16"});
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_THAT(o.out, HasSubstr("no matching rows"));
  EXPECT_EQ(o.err, "");
}

TEST(DbCli, DeclaredGapsAreAddedListedAndRemoved) {
  test::TempDir dir;
  const auto db = dir.file("gaps.db");  // created by gap add
  const std::vector<std::string> identity = {"--db",     db,
                                             "--kernel", "mla_decode",
                                             "--arch",   "gfx942",
                                             "--key",    "heads=16 block_len=2 causal=0 kv_dtype=fp8_e4m3fn batch=32",
                                             "--source", "aiter 0.1.19 has no fp8 2-token non-causal fold"};
  auto with = [](std::vector<std::string> head, const std::vector<std::string>& tail) {
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
  };
  auto o = run_ktune_args(with({"gap", "add"}, with(identity, {"--fallback",
                                                               "heads=16,block_len=1,causal=0,"
                                                               "kv_dtype=fp8_e4m3fn,batch=64",
                                                               "--note", "flatten the block to L = 1 rows"})));
  ASSERT_EQ(o.status, 0) << o.err;

  o = run_ktune_args({"gaps", "--db", db, "--format", "json"});
  ASSERT_EQ(o.status, 0) << o.err;
  auto rows = nlohmann::json::parse(o.out);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["key"]["kv_dtype"], "fp8_e4m3fn");
  EXPECT_EQ(rows[0]["reason"], "declared");
  EXPECT_EQ(rows[0]["fallback"], "heads=16 block_len=1 causal=0 kv_dtype=fp8_e4m3fn batch=64");
  EXPECT_EQ(rows[0]["fallback_note"], "flatten the block to L = 1 rows");
  EXPECT_TRUE(rows[0]["run"].is_null());

  // A fallback another tool wrote malformed: listed as it is, and named where it stops a new gap.
  SQLite::Database(db, SQLite::OPEN_READWRITE).exec("UPDATE gaps SET fallback = replace(fallback, '=16', '=016')");
  o = run_ktune_args({"gaps", "--db", db, "--format", "json"});
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_THAT(o.out, HasSubstr("heads=016,block_len=1,causal=0,kv_dtype=1,batch=64 (malformed: parameters"));
  o = run_ktune_args({"gap", "add", "--db", db, "--kernel", "mla_decode", "--arch", "gfx942", "--key",
                      "heads=32 block_len=2 causal=0 kv_dtype=bf16 batch=32", "--source", "another", "--fallback",
                      "heads=16 block_len=2 causal=0 kv_dtype=bf16 batch=32"});
  EXPECT_EQ(o.status, 1);
  EXPECT_THAT(o.err, AllOf(HasSubstr("fallback of gap 1"), HasSubstr("not in canonical form")));
  SQLite::Database(db, SQLite::OPEN_READWRITE).exec("UPDATE gaps SET fallback = replace(fallback, '=016', '=16')");

  const auto before = test::fingerprint(db);
  o = run_ktune_args({"gap", "add", "--db", db, "--kernel", "mla_decode", "--arch", "gfx942", "--key",
                      "heads=16 block_len=2 causal=0 kv_dtype=fp9 batch=32", "--source", "typo"});
  EXPECT_EQ(o.status, 1);
  EXPECT_THAT(o.err, AllOf(HasSubstr("--key"), HasSubstr("kv_dtype"), HasSubstr("fp8_e4m3fnuz")));
  o = run_ktune_args({"gap", "add", "--db", db, "--kernel", "mla_decode", "--arch", "gfx942", "--key",
                      "heads=0 block_len=2 causal=0 kv_dtype=bf16 batch=32", "--source", "range"});
  EXPECT_EQ(o.status, 1);
  EXPECT_THAT(o.err, AllOf(HasSubstr("heads"), HasSubstr("[1, 128]")));
  // A fallback to the gap's own key (written another way) would send its callers round in a loop.
  o = run_ktune_args({"gap", "add", "--db", db, "--kernel", "mla_decode", "--arch", "gfx942", "--key",
                      "heads=16 block_len=4 causal=0 kv_dtype=bf16 batch=32", "--source", "loop", "--fallback",
                      "batch=32,kv_dtype=bf16,causal=0,block_len=4,heads=16"});
  EXPECT_EQ(o.status, 1);
  EXPECT_THAT(o.err,
              AllOf(HasSubstr("--fallback"), HasSubstr("closes a loop"),
                    HasSubstr("{heads=16 block_len=4 causal=0 kv_dtype=bf16 batch=32} -> {heads=16 block_len=4")));
  // So would one back to the declared gap's key, whose fallback leads here.
  o = run_ktune_args({"gap", "add", "--db", db, "--kernel", "mla_decode", "--arch", "gfx942", "--key",
                      "heads=16 block_len=1 causal=0 kv_dtype=fp8_e4m3fn batch=64", "--source", "loop", "--fallback",
                      "heads=16 block_len=2 causal=0 kv_dtype=fp8_e4m3fn batch=32"});
  EXPECT_EQ(o.status, 1);
  EXPECT_THAT(o.err, AllOf(HasSubstr("closes a loop of fallbacks of mla_decode on gfx942"),
                           HasSubstr("block_len=1 causal=0 kv_dtype=fp8_e4m3fn batch=64} -> {heads=16 block_len=2")));
  EXPECT_EQ(test::fingerprint(db), before) << "rejected gaps must not touch the database";
  // Twin: the same gap on another arch, where the first gap is not, ends at an untuned key.
  o = run_ktune_args({"gap", "add", "--db", db, "--kernel", "mla_decode", "--arch", "gfx90a", "--key",
                      "heads=16 block_len=1 causal=0 kv_dtype=fp8_e4m3fn batch=64", "--source", "loop", "--fallback",
                      "heads=16 block_len=2 causal=0 kv_dtype=fp8_e4m3fn batch=32"});
  EXPECT_EQ(o.status, 0) << o.err;
  o = run_ktune_args({"gap", "rm", "--db", db, "--kernel", "mla_decode", "--arch", "gfx90a", "--key",
                      "heads=16 block_len=1 causal=0 kv_dtype=fp8_e4m3fn batch=64", "--source", "loop"});
  ASSERT_EQ(o.status, 0) << o.err;
  // A refused gap on a new path leaves no file.
  const auto fresh = dir.file("fresh.db");
  o = run_ktune_args({"gap", "add", "--db", fresh, "--kernel", "mla_decode", "--arch", "gfx942", "--key",
                      "heads=16 block_len=4 causal=0 kv_dtype=bf16 batch=32", "--source", "loop", "--fallback",
                      "heads=16 block_len=4 causal=0 kv_dtype=bf16 batch=64"});
  EXPECT_EQ(o.status, 1);
  EXPECT_THAT(o.err, HasSubstr("closes a loop"));
  EXPECT_FALSE(std::filesystem::exists(fresh));

  o = run_ktune_args(with({"gap", "rm"}, identity));
  ASSERT_EQ(o.status, 0) << o.err;
  o = run_ktune_args({"gaps", "--db", db});
  EXPECT_THAT(o.out, HasSubstr("no matching rows"));
  o = run_ktune_args(with({"gap", "rm"}, identity));
  EXPECT_EQ(o.status, 1);
  EXPECT_THAT(o.err, AllOf(HasSubstr(db), HasSubstr("no gap")));
}

// A detail cut inside a character (by an older ktune, or another tool) is replaced, not fatal.
TEST(DbCli, QueryJsonOfADetailThatIsNotValidUtf8) {
  test::TempDir dir;
  const auto path = dir.file("utf8.db");
  {
    auto db = Database::open(path, true);
    const auto run = db->begin_run(test::sample_run());
    db->record(test::untimed(run, test::key(16, 2, 0, 1), test::config(16), Status::fault, "ends in \xE2\x80"));
  }
  const auto o = run_ktune_args({"query", "--db", path, "--format", "json"});
  ASSERT_EQ(o.status, 0) << o.err;
  const auto rows = nlohmann::json::parse(o.out);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["detail"], "ends in \xEF\xBF\xBD");  // U+FFFD
}

TEST(DbCli, QueryOfAFileThatIsNotADatabaseFailsCleanly) {
  test::TempDir dir;
  const auto path = dir.file("notes.txt");
  test::write_file(path, std::string(512, 'n'));
  const auto before = test::fingerprint(path);
  const auto o = run_ktune_args({"query", "--db", path});
  EXPECT_EQ(o.status, 1);
  EXPECT_THAT(o.err, AllOf(HasSubstr(path), HasSubstr("file is not a database")));
  EXPECT_EQ(test::fingerprint(path), before);
}

// A file of an older schema: the read-only verbs refuse it untouched and name `ktune migrate`,
// which brings it to today's version once, keeping its rows; a roof measured before version 2
// reads as not recorded.
TEST(DbCli, MigrateBringsAnOlderFileToTheVersionTheReadersNeed) {
  test::TempDir dir;
  const auto path = dir.file("v1.db");
  test::write_v1_by_hand(path);
  const auto before = test::fingerprint(path);
  const auto refused = run_ktune_args({"query", "--db", path});
  EXPECT_EQ(refused.status, 1);
  EXPECT_THAT(refused.err, AllOf(HasSubstr("schema version 1 is older than"), HasSubstr("ktune migrate --db " + path)));
  EXPECT_EQ(test::fingerprint(path), before);

  const auto migrated = run_ktune_args({"migrate", "--db", path});
  ASSERT_EQ(migrated.status, 0) << migrated.err;
  EXPECT_THAT(migrated.out, AllOf(HasSubstr(fmt::format("schema version 1 -> {}", Database::current_schema_version())),
                                  HasSubstr("2: runs.matrix_probe")));
  const auto o = run_ktune_args({"query", "--db", path, "--format", "json"});
  ASSERT_EQ(o.status, 0) << o.err;
  const auto rows = nlohmann::json::parse(o.out);
  ASSERT_EQ(rows.size(), 2u) << o.out;
  EXPECT_TRUE(rows[0]["matrix_probe"].is_null()) << "run 7 measured no roof";
  EXPECT_EQ(rows[1]["matrix_probe"], "not recorded (a run before schema version 2)");

  const auto again = run_ktune_args({"migrate", "--db", path});
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_THAT(again.out, HasSubstr(fmt::format("at schema version {} already, and no run of today's templates is "
                                               "under an older hash: nothing to migrate",
                                               Database::current_schema_version())));
  EXPECT_NE(run_ktune_args({"migrate", "--db", dir.file("absent.db")}).status, 0);
}

TEST(DbCli, QueryNamesTheProbeOfEachRowsMatrixRoof) {
  test::TempDir dir;
  const auto path = dir.file("ktune.db");
  {
    auto db = Database::open(path, true);
    auto with_roof = test::sample_run();
    with_roof.matrix_tflops = 900;
    with_roof.matrix_probe = "wgmma m64n256k16 bf16";
    db->record(test::timed(db->begin_run(with_roof), test::key(16), test::config(64), 12.5));
  }
  const auto o = run_ktune_args({"query", "--db", path, "--format", "json"});
  ASSERT_EQ(o.status, 0) << o.err;
  const auto rows = nlohmann::json::parse(o.out);
  ASSERT_EQ(rows.size(), 1u) << o.out;
  EXPECT_EQ(rows[0]["matrix_probe"], "wgmma m64n256k16 bf16");
}

}  // namespace
}  // namespace ktune::db
