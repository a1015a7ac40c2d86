// scripts/kv_dtype_ratio.py: one cache type's winners against another's, per key, read from what
// `ktune query --winners --format json` writes for a database made here, whose ratios are worked
// out below.
#include <gtest/gtest.h>

#include <string>

#include "cli/cli_run.hpp"
#include "db/database.hpp"
#include "unit/db_test_support.hpp"

namespace ktune::testing {
namespace {

namespace test = ::ktune::db::test;

class KvDtypeRatio : public ScriptTest {
 protected:
  // Run 1 (kv_dtype 0 bf16, 1 fp8_e4m3fn; key(heads, block_len, causal, kv_dtype, batch)):
  //   16 rows, batch 32: bf16 100 us, fp8 50 (the faster of 50 and 70)   ratio 0.5
  //   64 rows, batch 32, causal 0 and 1: bf16 100, fp8 150 and 200        ratios 1.5 and 2
  //   64 rows, batch 8: bf16 only                                         no ratio
  // Run 2: 16 rows, batch 32: fp8 10 only, which must not meet run 1's bf16.
  std::string winners() {
    const std::string db_path = dir.path() + "/t.db";
    {
      auto db = db::Database::open(db_path, true);
      const auto run = db->begin_run(test::sample_run());
      db->record(test::timed(run, test::key(16, 1, 0, 0, 32), test::config(64), 100));
      db->record(test::timed(run, test::key(16, 1, 0, 1, 32), test::config(64), 70));
      db->record(test::timed(run, test::key(16, 1, 0, 1, 32), test::config(16), 50));
      db->record(test::timed(run, test::key(16, 4, 0, 0, 32), test::config(64), 100));
      db->record(test::timed(run, test::key(16, 4, 0, 1, 32), test::config(64), 150));
      db->record(test::timed(run, test::key(16, 4, 1, 0, 32), test::config(64), 100));
      db->record(test::timed(run, test::key(16, 4, 1, 1, 32), test::config(64), 200));
      db->record(test::timed(run, test::key(16, 4, 0, 0, 8), test::config(64), 100));
      const auto run2 = db->begin_run(test::sample_run());
      db->record(test::timed(run2, test::key(16, 1, 0, 1, 32), test::config(64), 10));
    }
    const std::string json = dir.path() + "/winners.json";
    const auto q =
        run_command("'" + ktune_exe() + "' query --db '" + db_path + "' --winners --format json > '" + json + "'");
    EXPECT_EQ(q.status, 0) << q.output;
    return json;
  }
  CliResult run(const std::string& input, const std::string& args = "") {
    return run_command(python_script("kv_dtype_ratio.py") + " '" + input + "' " + args);
  }
};

TEST_F(KvDtypeRatio, RatiosByRowsPerRequestAndBatchOfOneRunsPairs) {
  const auto r = run(winners());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "| rows per request | batch 32 |")) << "batch 8 has no pair: " << r.output;
  EXPECT_TRUE(contains(r.output, "| 9-16 | 0.50 [0.50, 0.50] (1) |")) << r.output;
  // sqrt(1.5 x 2) = 1.73.
  EXPECT_TRUE(contains(r.output, "| 33-64 | 1.73 [1.50, 2.00] (2) |")) << r.output;
  // (0.5 x 1.5 x 2)^(1/3) = 1.145; run 2's fp8 (10 us) would have made the 16-row ratio 0.1.
  EXPECT_TRUE(contains(r.output, "3 keys; fp8_e4m3fn slower than bf16 on 2; geometric mean 1.145; largest 2.00 "
                                 "(run 1, heads=16,block_len=4,causal=1,batch=32)"))
      << r.output;
}

TEST_F(KvDtypeRatio, BaseAndOtherSwappedGiveTheReciprocals) {
  const auto r = run(winners(), "--base fp8_e4m3fn --other bf16");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "| 9-16 | 2.00 [2.00, 2.00] (1) |")) << r.output;
  EXPECT_TRUE(contains(r.output, "| 33-64 | 0.58 [0.50, 0.67] (2) |")) << r.output;
  EXPECT_TRUE(contains(r.output, "bf16 slower than fp8_e4m3fn on 1;")) << r.output;
}

TEST_F(KvDtypeRatio, NoPairIsAnError) {
  const auto r = run(winners(), "--other fp8_e4m3fnuz");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.output, "kv_dtype_ratio: no key was timed with both kv_dtype bf16 and fp8_e4m3fnuz"))
      << r.output;
}

TEST_F(KvDtypeRatio, InputThatIsNotWinnersIsRefusedWithWhatToDo) {
  const auto text = run(dir.write("w.txt", "id run kernel\n1 1 mla_decode\n"));
  EXPECT_NE(text.status, 0);
  EXPECT_TRUE(contains(text.output, "cannot read the winners")) << text.output;
  EXPECT_TRUE(contains(text.output, "ktune query --winners --format json")) << text.output;
  const auto no_key = run(dir.write("w.json", R"([{"run": 1, "median_us": 3}])"));
  EXPECT_NE(no_key.status, 0);
  EXPECT_TRUE(contains(no_key.output, "measurement 0 is not a winner of mla_decode's keys")) << no_key.output;
}

}  // namespace
}  // namespace ktune::testing
