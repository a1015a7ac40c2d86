// The whole sweep on the CPU: a toy family, a fake compiler, a real database and a fake worker
// (a shell script) whose candidates answer, fail verification, crash, hang or do not load.
#include <algorithm>
#include <fstream>
#include <map>

#include <SQLiteCpp/Database.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "db/database.hpp"
#include "sweep/filter.hpp"
#include "sweep_toy.hpp"

namespace ktune::sweep {
namespace {
using namespace std::chrono_literals;

// Logs every request; behaviour by key and config (rows=99 never arrives: it does not compile).
// A pattern naming both matches "config" before "key": requests are JSON objects with their keys
// in sorted order (nlohmann::json's default).
const char* kWorker = R"(#!/bin/sh
log="$1"
answered=0
result() {  # status median fully_timed detail [samples [stop]]; the worker's resident set grows by 1 MiB an answer
  answered=$((answered + 1))
  echo "{\"status\":\"$1\",\"detail\":\"$4\",\"max_abs_err\":0.001,\"rel_l2_err\":0.0001,\"median_us\":$2,\"p10_us\":$2,\"p90_us\":$2,\"samples\":${5:-20},\"rel_ci\":null,\"stop\":\"${6:-converged}\",\"fully_timed\":$3,\"bytes\":5000000,\"flops\":1000000,\"fatal\":false,\"rss_bytes\":$((answered * 1048576)),\"device_used_bytes\":2147483648,\"time\":{\"setup_ms\":500,\"load_ms\":1,\"verify_ms\":20,\"screen_ms\":30,\"full_ms\":40,\"timed_ms\":25,\"total_ms\":600}}"
}
while IFS= read -r line; do
  echo "$line" >> "$log"
  case "$line" in
    *'"op":"hello"'*) echo '{"ready":true,"device":{"name":"Toy GPU","arch":"sm_90a"},"copy_gbps":1000.0,"matrix_tflops":0.4,"matrix_probe":"toy mma m8n8k4"}' ;;
    *'"op":"exit"'*) exit 0 ;;
    *'"key":"heads=4,'*) result verify_failed 0 false "element 3 differs" ;;
    *'"config":"rows=32,'*'kv_dtype=1"'*) result ok 5 true "" ;;
    *'"config":"rows=16,'*) result ok 10 true "" ;;
    *'"config":"rows=32,'*) result ok 20 false "" ;;
    *'"config":"rows=48,'*) result verify_failed 0 false "max error 3.5" ;;
    *'"config":"rows=64,'*) echo "illegal address" >&2; kill -SEGV $$ ;;
    *'"config":"rows=80,'*) sleep 30 ;;
    *'"config":"rows=96,'*) result load_failed 0 false "bad code object" ;;
    *'"config":"rows=112,'*) sleep 1.5; result ok 20 false "" ;;
    *'"config":"rows=128,'*) result ok 7 true "" 0 ;;
    *'"config":"rows=144,'*) result ok 9 true ""; sleep 0.3; echo "teardown abort" >&2; kill -ABRT $$ ;;
    *'"config":"rows=160,'*) result ok 11 true "" ;;
    *'"config":"rows=176,'*) result ok 13 true "clock throttled" 20 budget ;;
    *) echo "unexpected request" >&2; exit 9 ;;
  esac
done
)";

struct SweepRunner : ::testing::Test, testing::ToySweep {
  std::string log = tmp.path() + "/requests.log";
  std::unique_ptr<db::Database> db = db::Database::open(tmp.path() + "/t.db", true);

  SweepRunner() : ToySweep(kWorker) {
    options.worker_command.push_back(log);
    options.timeout = 500ms;
  }

  Space space(std::vector<int64_t> heads, std::vector<int64_t> rows) const {
    return ToySweep::space(std::move(heads), std::move(rows), {1});
  }
  SweepSummary sweep(const Space& s) { return run(*db, s, options); }
  std::map<int64_t, db::Measurement> by_rows(int64_t heads) {
    std::map<int64_t, db::Measurement> out;
    for (auto& m : db->measurements())
      if (m.key.at("heads") == heads) out[m.config.at("rows")] = m;
    return out;
  }
  // The requests of kind `op` the workers received, in order.
  std::vector<nlohmann::json> requested(const std::string& op = "run") {
    std::ifstream f(log);
    std::vector<nlohmann::json> out;
    for (std::string line; std::getline(f, line);)
      if (auto j = nlohmann::json::parse(line); j["op"] == op) out.push_back(j);
    return out;
  }
  std::vector<nlohmann::json> runs_requested() { return requested("run"); }
};

TEST_F(SweepRunner, RecordsEveryOutcomeAndGoesOn) {
  auto s = sweep(space({32, 4, 2}, {16, 32, 48, 64, 80, 96, 99}));
  EXPECT_EQ(s.keys, 3u);
  EXPECT_EQ(s.candidates, 7u + 1u) << "heads=4 can only run rows=16; heads=2 nothing";
  EXPECT_EQ(s.ok, 2u);
  EXPECT_EQ(s.verify_failed, 2u);
  EXPECT_EQ(s.fault, 1u);
  EXPECT_EQ(s.timeout, 1u);
  EXPECT_EQ(s.compile_error, 2u) << "rows=99 does not compile, rows=96 does not load";
  EXPECT_EQ(s.workers_started, 4u)
      << "two fresh workers for the crash (the candidate is asked twice before it is blamed), one after the timeout";

  auto runs = db->runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].id, s.run_id);
  EXPECT_DOUBLE_EQ(runs[0].copy_gbps, 1000.0) << "the bandwidth the worker measured is the run's";
  EXPECT_DOUBLE_EQ(runs[0].matrix_tflops, 0.4) << "so is the matrix-core throughput";
  EXPECT_EQ(runs[0].matrix_probe, "toy mma m8n8k4") << "and the probe that measured it";
  // Measured once per run: the workers started after the crash and the timeout measure nothing.
  const auto hellos = requested("hello");
  ASSERT_EQ(hellos.size(), 4u);
  EXPECT_EQ(hellos[0]["copy_gbps"], true);
  EXPECT_EQ(hellos[0]["matrix_tflops"], true);
  for (size_t i = 1; i < hellos.size(); ++i) {
    EXPECT_EQ(hellos[i]["copy_gbps"], false) << i;
    EXPECT_EQ(hellos[i]["matrix_tflops"], false) << i;
  }

  auto m = by_rows(32);
  ASSERT_EQ(m.size(), 7u);
  EXPECT_EQ(m[16].status, db::Status::ok);
  EXPECT_DOUBLE_EQ(m[16].median_us, 10);
  EXPECT_DOUBLE_EQ(m[16].gbps, 500) << "5e6 bytes in 10 us";
  EXPECT_DOUBLE_EQ(m[16].frac_copy_bw.value_or(0), 0.5);
  EXPECT_DOUBLE_EQ(m[16].tflops, 0.1) << "1e6 FLOPs in 10 us";
  EXPECT_DOUBLE_EQ(m[16].frac_matrix.value_or(0), 0.25);
  EXPECT_EQ(m[16].shape, (Params{{"ctx", 1000}, {"batch", 4}}));
  EXPECT_EQ(m[32].status, db::Status::ok);
  EXPECT_NE(m[32].detail.find("screened: 2.00x"), std::string::npos) << m[32].detail;
  EXPECT_EQ(m[48].status, db::Status::verify_failed);
  EXPECT_EQ(m[48].detail, "max error 3.5");
  EXPECT_EQ(m[64].status, db::Status::fault);
  EXPECT_NE(m[64].detail.find("signal 11"), std::string::npos) << m[64].detail;
  EXPECT_NE(m[64].detail.find("illegal address"), std::string::npos) << m[64].detail;
  EXPECT_EQ(m[80].status, db::Status::timeout);
  EXPECT_EQ(m[96].status, db::Status::compile_error);
  EXPECT_NE(m[96].detail.find("bad code object"), std::string::npos);
  EXPECT_EQ(m[99].status, db::Status::compile_error);
  EXPECT_NE(m[99].detail.find("toy.hip:3: error: bad tile"), std::string::npos) << m[99].detail;

  std::map<int64_t, db::Gap> gaps;
  for (auto& g : db->gaps()) gaps[g.key.at("heads")] = g;
  ASSERT_EQ(gaps.size(), 2u) << "heads=32 has a kernel";
  EXPECT_EQ(gaps[4].reason, db::GapReason::verify_failed);
  EXPECT_NE(gaps[4].detail.find("element 3 differs"), std::string::npos) << gaps[4].detail;
  EXPECT_EQ(gaps[4].source, "measured");
  EXPECT_EQ(gaps[4].run_id, s.run_id);
  EXPECT_EQ(gaps[2].reason, db::GapReason::no_config);
  EXPECT_NE(gaps[2].detail.find("rows > 4 * heads"), std::string::npos) << gaps[2].detail;
}

// Every key's compiles add to the sweep's count of code objects its cache could not store.
TEST_F(SweepRunner, CacheWritesThatFailAreSummedOverTheKeys) {
  const testing::TempDir dir;
  const jit::CodeCache cache(dir.path());
  for (int shard = 0; shard < 256; ++shard) std::ofstream(fmt::format("{}/{:02x}", dir.path(), shard)) << "";
  const auto s = run(*db, space({32, 16}, {16, 32}), options, &cache);
  EXPECT_EQ(s.ok, 4u);
  EXPECT_EQ(compiler.calls, 4);
  EXPECT_EQ(s.cache_writes_failed.count, 4u) << "two keys of two programs";
  EXPECT_THAT(s.cache_writes_failed.first, ::testing::HasSubstr("cannot create " + dir.path()));
}

TEST_F(SweepRunner, ScreeningCutoffFollowsTheBestSoFar) {
  sweep(space({32}, {16, 32}));
  std::vector<double> cutoffs;
  for (const auto& j : runs_requested()) cutoffs.push_back(j["full_cutoff_us"]);
  EXPECT_EQ(cutoffs, (std::vector<double>{0, 12.5})) << "the first is timed in full; then 1.25x the best";
}

TEST_F(SweepRunner, AKeyRunsItsConfigsInThePreviousKeysOrderFastestFirst) {
  sweep(space({32, 16}, {48, 32, 16}));
  std::vector<std::pair<std::string, std::string>> order;  // key, config
  for (const auto& j : runs_requested()) order.emplace_back(j["key"], j["config"]);
  ASSERT_EQ(order.size(), 6u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(order[i].first.rfind("heads=32,", 0), 0u) << order[i].first;
  EXPECT_EQ(order[0].second.rfind("rows=48,", 0), 0u) << "the first key runs in plan order";
  EXPECT_EQ(order[1].second.rfind("rows=32,", 0), 0u);
  EXPECT_EQ(order[2].second.rfind("rows=16,", 0), 0u);
  EXPECT_EQ(order[3].second.rfind("rows=16,", 0), 0u) << "10 us in the first key";
  EXPECT_EQ(order[4].second.rfind("rows=32,", 0), 0u) << "20 us";
  EXPECT_EQ(order[5].second.rfind("rows=48,", 0), 0u) << "failed verification: last";
}

// Plan (heads, kv_dtype): (32, 0), (32, 1), (16, 0), (16, 1). rows=32 is the faster with
// kv_dtype 1 (5 us against 10), rows=16 with 0 (10 against 20). kv_dtype is the stronger ranking
// field, so (16, 0) follows (32, 0), not the previous key (32, 1), and (16, 1) follows (32, 1).
TEST_F(SweepRunner, AKeyRunsItsConfigsInTheMostSimilarKeysOrder) {
  Space s = space({32, 16}, {16, 32});
  s.key_values[1] = {0, 1};
  sweep(s);
  std::vector<std::pair<std::string, std::string>> order;  // key, config
  for (const auto& j : runs_requested()) order.emplace_back(j["key"], j["config"]);
  ASSERT_EQ(order.size(), 8u);
  EXPECT_EQ(order[2].first, "heads=32,kv_dtype=1");
  EXPECT_EQ(order[2].second.rfind("rows=16,", 0), 0u) << "no key with kv_dtype 1 yet: the one with equal heads";
  EXPECT_EQ(order[4].first, "heads=16,kv_dtype=0");
  EXPECT_EQ(order[4].second.rfind("rows=16,", 0), 0u) << "as (32, 0), not as the previous key (32, 1)";
  EXPECT_EQ(order[6].first, "heads=16,kv_dtype=1");
  EXPECT_EQ(order[6].second.rfind("rows=32,", 0), 0u) << "as (32, 1), not as the previous key (16, 0)";
}

// heads=2 runs no config (rows > 4 * heads). Where the space's configs were narrowed on the command
// line, that is the filter's doing: recorded as a no_config gap of a new run, it would hide the
// key's winner of an earlier run, so the sweep refuses before recording anything.
TEST_F(SweepRunner, ConfigFiltersThatLeaveAKeyWithoutConfigsRecordNothing) {
  using ::testing::AllOf;
  using ::testing::HasSubstr;
  using ::testing::ThrowsMessage;
  Space narrowed = space({32, 2}, {16, 32});
  apply_filters(narrowed, {parse_where("rows=16")});
  EXPECT_THAT([&] { sweep(narrowed); },
              ThrowsMessage<Error>(AllOf(HasSubstr("--where rows=16: 1 of the 2 keys"), HasSubstr("heads=2"),
                                         HasSubstr("nothing was recorded"))));
  EXPECT_TRUE(db->runs().empty());
  EXPECT_TRUE(db->gaps().empty());
  EXPECT_TRUE(runs_requested().empty());
  // A key filter is no config filter; and the space as written records the key's gap.
  Space keys_only = space({32, 2}, {16});
  apply_filters(keys_only, {parse_where("heads=2,32")});
  sweep(keys_only);
  ASSERT_EQ(db->gaps().size(), 1u);
  EXPECT_EQ(db->gaps()[0].reason, db::GapReason::no_config);
}

// A timing shape the family cannot draw for a key would fail every config of it, recorded as
// verify failures and a gap: refused before anything is recorded.
TEST_F(SweepRunner, AShapeThatDoesNotFitAKeyRecordsNothing) {
  using ::testing::AllOf;
  using ::testing::HasSubstr;
  using ::testing::ThrowsMessage;
  Space s = space({16, 32, 64}, {16});
  s.shape.set("ctx", 20);
  EXPECT_THAT([&] { sweep(s); },
              ThrowsMessage<Error>(AllOf(HasSubstr("test: its [shape] (ctx=20 batch=4) does not fit 2 of the 3 keys"),
                                         HasSubstr("heads=32"), HasSubstr("ctx 20 is below heads 32"),
                                         HasSubstr("nothing was recorded"))));
  EXPECT_TRUE(db->runs().empty());
  EXPECT_TRUE(runs_requested().empty());
  s.shape.set("ctx", 64);  // fits every key
  EXPECT_EQ(sweep(s).ok, 3u);
}

TEST_F(SweepRunner, RankingFieldsMustBeKeyFieldsEachOnce) {
  using ::testing::ThrowsMessage;
  using ::testing::HasSubstr;
  family.ranking = {"kv_dtype", "rows"};
  EXPECT_THAT([&] { sweep(space({32}, {16})); },
              ThrowsMessage<Error>(HasSubstr("toy: ranking field 'rows' is no key field")));
  family.ranking = {"heads", "heads"};
  EXPECT_THAT([&] { sweep(space({32}, {16})); },
              ThrowsMessage<Error>(HasSubstr("toy: ranking field 'heads' is listed twice")));
  EXPECT_TRUE(runs_requested().empty()) << "refused before any candidate ran";
}

TEST_F(SweepRunner, ScreeningIsAbandonedAfterOneLaunchBeyondTwiceTheBest) {
  sweep(space({32}, {16, 32}));
  const auto runs = runs_requested();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0]["screen"]["abandon_us"], 0.0) << "nothing to compare with yet";
  EXPECT_EQ(runs[1]["screen"]["abandon_us"], 20.0) << "2x the 10 us of rows=16";
}

TEST_F(SweepRunner, ResumeSkipsWhatIsDoneAndKeepsTheRun) {
  auto first = sweep(space({32}, {16, 48}));
  options.resume = true;
  auto again = sweep(space({32}, {16, 48}));
  EXPECT_TRUE(again.resumed);
  EXPECT_EQ(again.run_id, first.run_id);
  EXPECT_EQ(again.candidates, 0u);
  EXPECT_EQ(again.already_done, 2u);
  EXPECT_EQ(again.workers_started, 0u) << "nothing to run, no worker";

  auto more = sweep(space({32}, {16, 48, 32}));
  EXPECT_EQ(more.run_id, first.run_id);
  EXPECT_EQ(more.candidates, 1u);
  EXPECT_EQ(db->measurements().size(), 3u);
  EXPECT_EQ(db->runs().size(), 1u);
  auto last = runs_requested().back();
  EXPECT_EQ(last["config"], "rows=32,stages=1");
  EXPECT_EQ(last["full_cutoff_us"], 12.5) << "the resumed run's best sets the cutoff";

  options.resume = false;
  auto fresh = sweep(space({32}, {16}));
  EXPECT_NE(fresh.run_id, first.run_id) << "without --resume a sweep is a new run";
}

// A row the database would refuse (an ok result of no samples) stopped the sweep, and every
// resumed one at the same candidate.
TEST_F(SweepRunner, AnOkAnswerWithImpossibleTimingIsAFault) {
  const auto s = sweep(space({32}, {128, 16}));
  EXPECT_EQ(s.fault, 1u);
  EXPECT_EQ(s.ok, 1u);
  auto m = by_rows(32);
  EXPECT_EQ(m[128].status, db::Status::fault);
  EXPECT_NE(m[128].detail.find("impossible timing (0 samples"), std::string::npos) << m[128].detail;
  EXPECT_EQ(m[16].status, db::Status::ok);
}

// A worker that could not measure the matrix-core roof: its rows have no frac_matrix (NULL), and
// their frac_copy_bw as usual.
TEST(SweepRunnerRoofs, ARoofNotMeasuredLeavesItsFractionNull) {
  std::string worker = kWorker;
  const std::string measured = "\"matrix_tflops\":0.4";
  worker.replace(worker.find(measured), measured.size(), "\"matrix_tflops\":0");
  testing::ToySweep toy(worker.c_str());
  toy.options.worker_command.push_back(toy.tmp.path() + "/requests.log");
  const auto db = db::Database::open(toy.tmp.path() + "/t.db", true);
  toy.run(*db, toy.space({32}, {16}, {1}), toy.options);
  const auto rows = db->measurements();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].status, db::Status::ok);
  EXPECT_FALSE(rows[0].frac_matrix.has_value());
  EXPECT_DOUBLE_EQ(rows[0].frac_copy_bw.value_or(0), 0.5);
}

// A time whose sampling stopped before the median was known to the policy's precision says so
// in its row; a converged one leaves the detail empty.
TEST_F(SweepRunner, AnOkRowThatDidNotConvergeSaysSo) {
  sweep(space({64}, {176, 16}));
  auto m = by_rows(64);
  EXPECT_EQ(m[176].status, db::Status::ok);
  EXPECT_EQ(m[176].detail,
            "not converged: median not bounded (20 samples); stopped at the time budget; clock throttled")
      << "the worker's own detail is kept";
  EXPECT_EQ(m[16].status, db::Status::ok);
  EXPECT_EQ(m[16].detail, "");
}

// A worker that dies after answering (in the previous candidate's teardown, or killed for its
// memory) takes the request in flight with it: that candidate is asked again of a fresh worker.
TEST_F(SweepRunner, ACandidateWhoseWorkerDiedUnderItIsAskedOnceMore) {
  const auto s = sweep(space({40}, {144, 160}));
  EXPECT_EQ(s.ok, 2u);
  EXPECT_EQ(s.fault, 0u);
  EXPECT_EQ(s.workers_started, 2u);
  auto m = by_rows(40);
  EXPECT_EQ(m[160].status, db::Status::ok) << m[160].detail;
  // A candidate that kills its worker every time is blamed, with both deaths.
  const auto crash = sweep(space({32}, {64}));
  EXPECT_EQ(crash.fault, 1u);
  const auto detail = by_rows(32)[64].detail;
  EXPECT_NE(detail.find("asked twice"), std::string::npos) << detail;
}

// A run's winners are per key, whatever the shape: results of another shape in it would compete.
TEST_F(SweepRunner, ResumeOnAnotherShapeStartsANewRun) {
  const auto first = sweep(space({32}, {16, 48}));
  options.resume = true;
  auto other = space({32}, {16, 48});
  other.shape = Params{{"ctx", 2000}, {"batch", 4}};
  const auto again = sweep(other);
  EXPECT_FALSE(again.resumed);
  EXPECT_NE(again.run_id, first.run_id);
  EXPECT_EQ(again.already_done, 0u);
  EXPECT_EQ(again.candidates, 2u);
  EXPECT_EQ(sweep(other).run_id, again.run_id) << "and that run is resumed on its own shape";
}

// A run's rows are fractions of its own roofs, so a resumed run keeps them; where the device
// resuming it (another machine, say) misses the run's copy roof by more than 8%, the sweep says so.
TEST(SweepRunnerRoofs, AResumeWhereTheCopyRoofMovedSaysSo) {
  testing::TempDir dir;
  const auto db = db::Database::open(dir.path() + "/t.db", true);
  auto sweep_with = [&](const std::string& worker, const std::string& host, std::vector<int64_t> rows) {
    testing::ToySweep toy(worker.c_str());
    toy.options.worker_command.push_back(toy.tmp.path() + "/requests.log");
    toy.options.resume = true;
    toy.host = host;
    return toy.run(*db, toy.space({64}, std::move(rows), {1}), toy.options);
  };
  const auto first = sweep_with(kWorker, "first-host", {16});
  std::string slower = kWorker;
  const std::string roof = "\"copy_gbps\":1000.0";
  slower.replace(slower.find(roof), roof.size(), "\"copy_gbps\":850.0");
  const auto resumed = sweep_with(slower, "second-host", {16, 160});
  EXPECT_TRUE(resumed.resumed);
  EXPECT_EQ(resumed.run_id, first.run_id);
  EXPECT_EQ(
      resumed.roof_warning,
      fmt::format("warning: run {} measured a copy bandwidth of 1000 GB/s (on host 'first-host'); the device here "
                  "reaches 850 GB/s, -15.0%: the fractions of the roof of the rows added now are of the run's "
                  "1000 GB/s all the same",
                  first.run_id));
  for (const auto& m : db->measurements()) {
    if (m.config.at("rows") == 160) {
      EXPECT_NEAR(m.frac_copy_bw.value_or(0), 5e6 / 11e3 / 1000, 1e-9);
    }
  }
  EXPECT_EQ(sweep_with(kWorker, "second-host", {16, 160, 176}).roof_warning, "") << "the twin: the run's roof";
}

// A run names its matrix-core roof by the probe that measured it, as the worker said and the run
// recorded; a resumed run keeps its roof and that name, whatever probe today's worker has (sm_90a's
// was mma.sync's before wgmma's); a run recorded before schema version 2 says it has no name.
TEST(SweepRunnerRoofs, ARunsMatrixRoofIsNamedByTheProbeItRecorded) {
  testing::TempDir dir;
  const auto db = db::Database::open(dir.path() + "/t.db", true);
  auto run_line = [&](std::string worker, std::vector<int64_t> rows) {
    testing::ToySweep toy(worker.c_str());
    toy.options.resume = true;
    toy.options.progress = Progress::Mode::lines;
    ::testing::internal::CaptureStderr();
    toy.run(*db, toy.space({64}, std::move(rows), {1}), toy.options);
    const std::string err = ::testing::internal::GetCapturedStderr();
    const size_t at = err.find("run 1");
    return at == std::string::npos ? err : err.substr(at, err.find('\n', at) - at);
  };
  const std::string fresh = run_line(kWorker, {16});
  EXPECT_NE(fresh.find("toy mma m8n8k4 peak 0 TFLOP/s"), std::string::npos) << fresh;
  EXPECT_EQ(db->runs().at(0).matrix_probe, "toy mma m8n8k4");

  std::string today = kWorker;
  const std::string probe = "toy mma m8n8k4";
  today.replace(today.find(probe), probe.size(), "toy wgmma m64n8k16");
  const std::string resumed = run_line(today, {16, 160});
  EXPECT_NE(resumed.find("run 1 (resumed)"), std::string::npos) << resumed;
  EXPECT_NE(resumed.find("matrix-core roof 0 TFLOP/s (the run's, measured when it began; probe: toy mma m8n8k4)"),
            std::string::npos)
      << resumed;
  EXPECT_EQ(resumed.find("wgmma"), std::string::npos) << resumed;

  SQLite::Database raw(dir.path() + "/t.db", SQLite::OPEN_READWRITE);
  raw.exec("UPDATE runs SET matrix_probe = ''");  // as migrated from version 1
  const std::string unnamed = run_line(today, {16, 160, 176});
  EXPECT_NE(unnamed.find("(the run's, measured when it began; probe: not recorded (a run before schema version 2))"),
            std::string::npos)
      << unnamed;
}

// A worker that measured a roof must say with which probe: a run never records an unnamed roof.
TEST(SweepRunnerRoofs, ARoofWithoutItsProbesNameIsRefused) {
  std::string worker = kWorker;
  const std::string named = ",\"matrix_probe\":\"toy mma m8n8k4\"";
  worker.erase(worker.find(named), named.size());
  testing::ToySweep toy(worker.c_str());
  toy.options.worker_command.push_back(toy.tmp.path() + "/requests.log");
  const auto db = db::Database::open(toy.tmp.path() + "/t.db", true);
  try {
    toy.run(*db, toy.space({32}, {16}, {1}), toy.options);
    FAIL() << "an unnamed roof was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("without naming its probe"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(db->runs().empty());
}

// A fresh run killed after its first result, then resumed: the run it continues is the killed
// one, and only its own results are done (an older complete run's would leave it incomplete,
// and codegen serves each key from its newest run).
TEST_F(SweepRunner, ResumeCountsOnlyTheContinuedRunsResults) {
  const auto complete = sweep(space({32}, {16, 48}));
  const auto killed = sweep(space({32}, {16}));  // as if killed before rows=48
  ASSERT_NE(killed.run_id, complete.run_id);
  options.resume = true;
  const auto resumed = sweep(space({32}, {16, 48}));
  EXPECT_EQ(resumed.run_id, killed.run_id);
  EXPECT_EQ(resumed.already_done, 1u);
  EXPECT_EQ(resumed.candidates, 1u) << "rows=48 was measured by the complete run only";
}

// Shards of one space are runs of their own: resuming one continues its own run, not the newest.
TEST_F(SweepRunner, ResumeOfAShardContinuesThatShardsRun) {
  options.shard = {0, 2};
  const auto shard0 = sweep(space({32, 4}, {16}));
  options.shard = {1, 2};
  const auto shard1 = sweep(space({32, 4}, {16}));
  ASSERT_NE(shard0.run_id, shard1.run_id);
  options.resume = true;
  options.shard = {0, 2};
  const auto resumed = sweep(space({32, 4}, {16}));
  EXPECT_EQ(resumed.run_id, shard0.run_id);
  EXPECT_EQ(resumed.candidates, 0u);
  EXPECT_EQ(resumed.already_done, 1u);
}

// A compiler that cannot run stops the sweep with nothing recorded for the key, so that --resume
// compiles and measures it (recorded as compile errors, the candidates were never retried).
TEST_F(SweepRunner, ACompilerThatCannotRunStopsTheSweepAndResumeRetries) {
  compiler.unavailable = true;
  try {
    sweep(space({32}, {16, 48}));
    ADD_FAILURE() << "the sweep went on without a compiler";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no compile worker starts"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--resume"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(db->measurements().empty());
  EXPECT_TRUE(db->gaps().empty());
  compiler.unavailable = false;
  options.resume = true;
  const auto again = sweep(space({32}, {16, 48}));
  EXPECT_EQ(again.candidates, 2u);
  EXPECT_EQ(again.ok, 1u);
}

TEST_F(SweepRunner, CompileErrorGapWhenNothingCompiles) {
  sweep(space({32}, {99}));
  auto gaps = db->gaps();
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(gaps[0].reason, db::GapReason::compile_error);
  EXPECT_NE(gaps[0].detail.find("bad tile"), std::string::npos) << gaps[0].detail;
}

TEST_F(SweepRunner, CrashesAndHangsBecomeFaultAndTimeoutGaps) {
  sweep(space({32}, {64}));
  sweep(space({24}, {80}));
  auto mixed = sweep(space({20}, {80, 64}));
  EXPECT_EQ(mixed.workers_started, 3u) << "a fresh worker after the hang, another to ask the crash again";
  std::map<int64_t, db::Gap> gaps;
  for (auto& g : db->gaps()) gaps[g.key.at("heads")] = g;
  ASSERT_EQ(gaps.size(), 3u);
  EXPECT_EQ(gaps[32].reason, db::GapReason::fault);
  EXPECT_NE(gaps[32].detail.find("signal 11"), std::string::npos) << gaps[32].detail;
  EXPECT_EQ(gaps[24].reason, db::GapReason::timeout);
  EXPECT_NE(gaps[24].detail.find("no answer within"), std::string::npos) << gaps[24].detail;
  EXPECT_EQ(gaps[20].reason, db::GapReason::fault) << "a fault is closer to working than a hang";
  EXPECT_NE(gaps[20].detail.find("1 fault, 1 timeout"), std::string::npos) << gaps[20].detail;
}

TEST_F(SweepRunner, LaterSuccessRemovesAMeasuredGap) {
  sweep(space({32}, {48}));
  ASSERT_EQ(db->gaps().size(), 1u);
  sweep(space({32}, {16}));
  EXPECT_TRUE(db->gaps().empty());
}

TEST_F(SweepRunner, BudgetStopsStartingCandidates) {
  options.budget_s = 1e-9;
  auto s = sweep(space({32, 2}, {16, 48}));
  EXPECT_EQ(s.not_started, 2u);
  EXPECT_EQ(s.ok + s.verify_failed, 0u);
  EXPECT_TRUE(db->measurements().empty());
  ASSERT_EQ(db->gaps().size(), 1u) << "only the no_config gap: an unfinished key is no gap";
  EXPECT_EQ(db->gaps()[0].reason, db::GapReason::no_config);
}

TEST_F(SweepRunner, BudgetIsCheckedBetweenScreenedCandidates) {
  options.budget_s = 1.0;
  options.timeout = 10s;
  // rows=16 is timed in full at once; rows=112 is screened and ends past the budget.
  auto s = sweep(space({32}, {16, 112, 48, 64}));
  auto runs = runs_requested();
  ASSERT_EQ(runs.size(), 2u) << "no candidate starts once the budget is spent";
  EXPECT_GT(runs[1]["full_cutoff_us"].get<double>(), 0) << "the candidate that ran into the budget was screened";
  EXPECT_EQ(s.ok, 2u);
  EXPECT_EQ(s.not_started, 2u);
  EXPECT_TRUE(db->gaps().empty()) << "an unfinished key is no gap";
}

TEST_F(SweepRunner, ScreeningRunThatHangsIsKilledAtTheTimeout) {
  auto s = sweep(space({32}, {16, 80, 48}));
  auto runs = runs_requested();
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_GT(runs[1]["full_cutoff_us"].get<double>(), 0) << "rows=80 hangs in a screening run";
  auto m = by_rows(32);
  EXPECT_EQ(m[80].status, db::Status::timeout);
  EXPECT_NE(m[80].detail.find("no answer within 0.5 s"), std::string::npos) << m[80].detail;
  EXPECT_EQ(m[48].status, db::Status::verify_failed) << "the sweep goes on after the timeout";
  EXPECT_LT(s.seconds, 10) << "the hanging worker sleeps 30 s; the timeout is 0.5 s";
}

TEST_F(SweepRunner, MemoryAfterTheFirstAndTheLastCandidate) {
  auto s = sweep(space({32}, {16, 32, 48}));
  EXPECT_EQ(s.memory_start.worker_rss_bytes, 1 << 20) << "the worker's answer to the first candidate";
  EXPECT_EQ(s.memory_end.worker_rss_bytes, 3 << 20) << "the worker's answer to the third candidate";
  EXPECT_EQ(s.memory_end.device_used_bytes, int64_t{2} << 30);
  EXPECT_GT(s.memory_start.rss_bytes, 0) << "the sweep process's own resident set";
  EXPECT_GT(s.memory_end.rss_bytes, 0);
  EXPECT_GE(s.peak_rss_bytes, std::max(s.memory_start.rss_bytes, s.memory_end.rss_bytes));

  auto none = sweep(space({32}, {99}));
  EXPECT_EQ(none.memory_end.worker_rss_bytes, 0) << "no candidate ran (rows=99 does not compile): nothing measured";
}

TEST_F(SweepRunner, TimeIsAccountedFromTheWorkersAnswersAndAroundThem) {
  auto s = sweep(space({32}, {16, 32}));
  ASSERT_EQ(s.ok, 2u);
  // Two answers, each saying: set-up 500 ms, loading 1, verification 20, screening 30, full 40
  // (25 of them timed launches), 600 in all (9 unaccounted).
  EXPECT_DOUBLE_EQ(s.time.setup, 1.0);
  EXPECT_DOUBLE_EQ(s.time.load, 0.002);
  EXPECT_DOUBLE_EQ(s.time.verify, 0.04);
  EXPECT_DOUBLE_EQ(s.time.screen, 0.06);
  EXPECT_DOUBLE_EQ(s.time.full, 0.08);
  EXPECT_DOUBLE_EQ(s.time.timed, 0.05);
  EXPECT_NEAR(s.time.worker_rest, 0.018, 1e-12);
  EXPECT_EQ(s.time.messages, 0) << "the answers claim more time than their round trips took: none is left";
  EXPECT_GT(s.time.worker_start, 0) << "the first worker's start";
  EXPECT_GT(s.time.database, 0);
  EXPECT_EQ(s.time.lost, 0);
  const auto line = describe_time(s);
  EXPECT_EQ(line.find("time: "), 0u) << line;
  EXPECT_NE(line.find("in all: key set-up 1.0 s, "), std::string::npos) << "largest first: " << line;
  EXPECT_NE(line.find("timed launches took 0.1 s"), std::string::npos) << line;

  auto hung = sweep(space({32}, {80, 16}));
  EXPECT_GE(hung.time.lost, 0.5) << "the hung request's wait, up to its timeout";
  EXPECT_DOUBLE_EQ(hung.time.setup, 0.5) << "only the answered candidate's account";
}

TEST_F(SweepRunner, WorkerOnAnotherDeviceIsRefused) {
  options.worker_command = {
      "/bin/sh", "-c", "read l; echo '{\"ready\":true,\"device\":{\"name\":\"Other\",\"arch\":\"sm_80\"}}'; read l"};
  try {
    sweep(space({32}, {16}));
    FAIL() << "a worker on another device must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Other"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ktune::sweep
