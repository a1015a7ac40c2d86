// `ktune bench` without a device: every argument (key and shape fields, the config, its
// feasibility for --arch, the database's answer) is checked before a device is looked for, with
// an error that names what is wrong; then the missing device is reported clearly.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "cli_run.hpp"
#include "jit/templates.hpp"
#include "kernels/family.hpp"
#include "support/env_var.hpp"
#include "unit/db_test_support.hpp"

namespace ktune::testing {
namespace {

const std::string kKey = "--heads 16 --block-len 1 --causal 0 --kv-dtype bf16 --batch 32 --ctx 4096";
const std::string kConfig = "rows=16 keys=32 threads=256 stages=2 split=2 math=simt";

CliResult bench(const std::string& args) { return run_ktune("bench --kernel mla_decode " + args); }
CliResult bench_config(const std::string& key, const std::string& config, const std::string& more = "") {
  return bench(key + " --config '" + config + "' " + more);
}

// has_gpu() is what every GPU test asks first. Where ktune itself does not run (a build moved to
// the GPU machine without $KTUNE), it says so, rather than report no GPU or fail to parse.
TEST(BenchCli, AKtuneThatDoesNotRunIsNotTakenForAMachineWithoutGpu) {
  const test_support::EnvVar missing("KTUNE", "/nonexistent/ktune");
  try {
    has_gpu();
    ADD_FAILURE() << "has_gpu() answered although ktune did not run";
  } catch (const std::runtime_error& e) {
    EXPECT_TRUE(contains(e.what(), "/nonexistent/ktune devices --json` failed")) << e.what();
    EXPECT_TRUE(contains(e.what(), "set $KTUNE to the ktune binary")) << e.what();
  }
}

TEST(BenchCli, WithoutADeviceFailsClearly) {
  if (has_gpu()) GTEST_SKIP() << "this machine has a GPU; the no-device message cannot be shown here";
  auto r = bench_config(kKey, kConfig);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "no GPU to benchmark on")) << r.output;
  EXPECT_TRUE(contains(r.output, "ktune compile --kernel mla_decode")) << r.output;
  auto text_key = bench_config("--key 'heads=16 block_len=1 causal=0 kv_dtype=bf16 batch=32' --shape 'ctx=4096'",
                               kConfig, "--arch sm_90a");
  EXPECT_EQ(text_key.status, 1) << text_key.output;
  EXPECT_TRUE(contains(text_key.output, "no GPU to benchmark on")) << "a valid key as text: " << text_key.output;
}

TEST(BenchCli, KeyFieldsAreCheckedBeforeTheDevice) {
  auto missing = bench_config("--heads 16 --block-len 1 --kv-dtype bf16 --batch 32", kConfig);
  EXPECT_EQ(missing.status, 1) << missing.output;
  EXPECT_TRUE(contains(missing.output, "key field 'causal' is missing")) << missing.output;
  EXPECT_TRUE(contains(missing.output, "--causal")) << "says how to give it: " << missing.output;

  auto range = bench_config("--heads 0 --block-len 1 --causal 0 --kv-dtype bf16 --batch 32", kConfig);
  EXPECT_EQ(range.status, 1) << range.output;
  EXPECT_TRUE(contains(range.output, "heads: '0' is not an integer in [1, 128]")) << range.output;

  auto label = bench_config("--heads 16 --block-len 1 --causal 0 --kv-dtype fp4 --batch 32", kConfig);
  EXPECT_EQ(label.status, 1) << label.output;
  EXPECT_TRUE(contains(label.output, "kv_dtype: 'fp4' is not one of bf16")) << label.output;

  auto twice = bench_config(kKey + " --key 'heads=32'", kConfig);
  EXPECT_EQ(twice.status, 1) << twice.output;
  EXPECT_TRUE(contains(twice.output, "key field 'heads' is given twice")) << twice.output;

  auto shape = bench_config(kKey + " --shape 'pages=3'", kConfig);
  EXPECT_EQ(shape.status, 1) << shape.output;
  EXPECT_TRUE(contains(shape.output, "unknown shape field 'pages'")) << shape.output;

  // Each field in range, the shape does not fit the key: a context shorter than the block.
  auto unfit = bench_config("--heads 16 --block-len 4 --causal 0 --kv-dtype bf16 --batch 32 --ctx 2", kConfig);
  EXPECT_EQ(unfit.status, 1) << unfit.output;
  EXPECT_TRUE(contains(unfit.output, "ctx 2 is shorter than block_len 4")) << unfit.output;
  EXPECT_FALSE(contains(unfit.output, "no GPU")) << "checked before the device: " << unfit.output;
}

TEST(BenchCli, ConfigIsCheckedBeforeTheDevice) {
  auto value = bench_config(kKey, "rows=abc keys=32 threads=256 stages=2 split=2 math=simt");
  EXPECT_EQ(value.status, 1) << value.output;
  EXPECT_TRUE(contains(value.output, "rows: 'abc' is not an integer")) << value.output;

  auto unknown = bench_config(kKey, "rowz=16 keys=32 threads=256 stages=2 split=2 math=simt");
  EXPECT_EQ(unknown.status, 1) << unknown.output;
  EXPECT_TRUE(contains(unknown.output, "unknown config field 'rowz'")) << unknown.output;

  auto missing = bench_config(kKey, "rows=16 keys=32 threads=256 split=2 math=simt");
  EXPECT_EQ(missing.status, 1) << missing.output;
  EXPECT_TRUE(contains(missing.output, "config field 'stages' is missing")) << missing.output;

  auto neither = bench(kKey);
  EXPECT_EQ(neither.status, 1) << neither.output;
  EXPECT_TRUE(contains(neither.output, "no config")) << neither.output;
  EXPECT_TRUE(contains(neither.output, "--config \"rows=... keys=...")) << neither.output;
  EXPECT_TRUE(contains(neither.output, "--db PATH")) << neither.output;

  auto both = bench_config(kKey, kConfig, "--db /nonexistent.db");
  EXPECT_EQ(both.status, 1) << both.output;
  EXPECT_TRUE(contains(both.output, "--config and --db both given")) << both.output;
}

TEST(BenchCli, InfeasibleConfigIsNamedForArch) {
  // 32 rows per CTA for H x L = 16 rows: mostly padding on every target.
  auto padded = bench_config(kKey, "rows=32 keys=32 threads=256 stages=2 split=2 math=simt", "--arch sm_90a");
  EXPECT_EQ(padded.status, 1) << padded.output;
  EXPECT_TRUE(contains(padded.output, "cannot serve key heads=16 block_len=1")) << padded.output;
  EXPECT_TRUE(contains(padded.output, "on sm_90a: rows=32 for H x L = 16 rows")) << padded.output;
  auto unknown = bench_config(kKey, kConfig, "--arch sm_1");
  EXPECT_EQ(unknown.status, 1) << unknown.output;
  EXPECT_TRUE(contains(unknown.output, "unknown target 'sm_1'")) << unknown.output;
  if (has_gpu()) GTEST_SKIP() << "this machine has a GPU: a feasible config would be timed";
  auto feasible = bench_config(kKey, kConfig, "--arch sm_90a");
  EXPECT_TRUE(contains(feasible.output, "no GPU to benchmark on")) << "passes the checks: " << feasible.output;
}

TEST(BenchCli, ForceTimesAConfigTheFamilyPrunes) {
  // A ring of 2 slots of 32 keys where 3 fit with as many CTAs per SM (one, at 256 threads):
  // pruned for speed, runnable all the same.
  const std::string shallow = "rows=16 keys=32 threads=256 stages=2 split=0 math=mma";
  auto refused = bench_config(kKey, shallow, "--arch sm_90a");
  EXPECT_EQ(refused.status, 1) << refused.output;
  EXPECT_TRUE(contains(refused.output, "a ring of 3 slots fits sm_90a")) << refused.output;
  EXPECT_TRUE(contains(refused.output, "--force")) << "says how to time it anyway: " << refused.output;
  if (has_gpu()) GTEST_SKIP() << "this machine has a GPU: the forced config would be timed";
  auto forced = bench_config(kKey, shallow, "--arch sm_90a --force");
  EXPECT_TRUE(contains(forced.output, "no GPU to benchmark on")) << "passes the checks: " << forced.output;
}

// mla_decode results on sm_90a: a winner for H=16 L=1 bf16 and a declared gap for H=16 L=2 fp8.
std::string tuned_db(const db::test::TempDir& dir) {
  const auto path = dir.file("mla.db");
  auto db = db::Database::open(path, true);
  const auto hash = jit::template_hash(family("mla_decode").template_file());
  const auto run = db->begin_run(db::test::sample_run("mla_decode", "NVIDIA H200", "sm_90a", hash));
  const Params config{{"rows", 16}, {"keys", 32}, {"threads", 256}, {"stages", 2}, {"split", 2}, {"math", 0}};
  auto winner = db::test::timed(run, db::test::key(16, 1, 0, 0, 32), config, 12.0);
  winner.shape = {{"ctx", 4096}, {"page_size", 64}, {"batch", 0}, {"ragged", 0}};  // the default space's
  db->record(winner);
  db->add_gap(db::test::declared_gap("sm_90a", db::test::key(16, 2, 0, 1, 32)));
  return path;
}

TEST(BenchCli, DatabaseGivesTheWinnerOfExactlyTheKey) {
  db::test::TempDir dir;
  const auto db = tuned_db(dir);
  auto untuned = bench("--heads 32 --block-len 1 --causal 0 --kv-dtype bf16 --batch 32 --arch sm_90a --db " + db);
  EXPECT_EQ(untuned.status, 1) << untuned.output;
  EXPECT_TRUE(
      contains(untuned.output, "key heads=32 block_len=1 causal=0 kv_dtype=bf16 batch=32 on sm_90a is not tuned"))
      << untuned.output;
  auto gap = bench("--heads 16 --block-len 2 --causal 0 --kv-dtype fp8_e4m3fn --batch 32 --arch sm_90a --db " + db);
  EXPECT_EQ(gap.status, 1) << gap.output;
  EXPECT_TRUE(contains(gap.output, "is not tuned: it is a gap (declared")) << gap.output;
  EXPECT_TRUE(contains(gap.output, "aiter 0.1.19")) << gap.output;
  auto other_arch = bench(kKey + " --arch gfx942 --db " + db);
  EXPECT_EQ(other_arch.status, 1) << other_arch.output;
  EXPECT_TRUE(contains(other_arch.output, "no results of mla_decode on gfx942")) << other_arch.output;
  if (has_gpu()) GTEST_SKIP() << "this machine has a GPU: the tuned key would be timed";
  auto tuned = bench(kKey + " --arch sm_90a --db " + db);
  EXPECT_EQ(tuned.status, 1) << tuned.output;
  EXPECT_TRUE(contains(tuned.output, "no GPU to benchmark on")) << "the winner passes the checks: " << tuned.output;
  EXPECT_FALSE(contains(tuned.output, "do not compare")) << "timed at the database's shape: " << tuned.output;
  // The database timed the winner at ctx 4096: at another shape its time is no comparison.
  auto longer =
      bench("--heads 16 --block-len 1 --causal 0 --kv-dtype bf16 --batch 32 --ctx 8192 --arch sm_90a --db " + db);
  EXPECT_TRUE(contains(longer.output, "at shape ctx=4096 page_size=64 batch=0 ragged=0 (12.00 us); this bench times "
                                      "shape ctx=8192 page_size=64 batch=32 ragged=0, so the two times do not compare"))
      << longer.output;
}

}  // namespace
}  // namespace ktune::testing
