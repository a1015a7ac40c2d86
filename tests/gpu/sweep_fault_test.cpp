// Fault isolation on a real GPU: the real `ktune sweep` runs a copy of the mla_decode template
// (through --templates) in which some keys write to an absurd address, execute a trap or spin
// forever. Each is recorded as a `fault` or `timeout` gap, the sweep starts a fresh worker and
// goes on to the next candidate, and it finishes with a kernel for every other key.
//
// The faults are planted without touching the production template: the test appends explicit
// specialisations of visible_keys<CAUSAL, MASK_SHIFT> (the template's test-only hook) for
// non-causal blocks, chosen by the run-time head count; causal blocks keep the real code.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>

#include "bench/matrix_probe.hpp"
#include "cli/cli_run.hpp"
#include "db/database.hpp"
#include "jit/templates.hpp"

namespace ktune {
namespace {
using testing::contains;
using testing::run_ktune;

// heads=12: a store to an absurd address; heads=20: a trap; heads=24: a loop that never ends.
constexpr const char* kPlantedFaults = R"(
// sweep_fault_test: faults planted in non-causal blocks by head count.
namespace ktune {
namespace mla_detail {
template <>
__device__ __forceinline__ int visible_keys<0, 0>(int r, int kv_len, int heads, int block_len) {
  if (heads == 12) *reinterpret_cast<volatile int*>(0xdeadbeef000ull) = kv_len;
  if (heads == 20) {
#if defined(KTUNE_CUDA)
    __trap();
#else
    __builtin_trap();
#endif
  }
  if (heads == 24)
    for (volatile int spin = 1; spin;) {
    }
  return kv_len;
}
}  // namespace mla_detail
}  // namespace ktune
)";

// One config per key; a small timing shape, so that the healthy keys take seconds.
constexpr const char* kSpace = R"(family = "mla_decode"
description = "sweep_fault_test: planted faults by head count"
[keys]
heads = [12, 16, 20, 24]
block_len = [1]
causal = [0, 1]
kv_dtype = ["bf16"]
batch = [4]
[configs]
rows = [16]
keys = [32]
threads = [256]
stages = [2]
split = [0]
math = ["simt"]
[shape]
ctx = 512
page_size = 16
batch = 0
ragged = 0
)";

constexpr int kTimeoutS = 20;

struct SweepFault : ::testing::Test {
  testing::CliTempDir tmp;
  std::string space = tmp.write("faults.toml", kSpace);
  // The real template with the faults appended.
  std::string templates = [this] {
    tmp.write("templates/mla_decode/mla_decode.hip", jit::render("mla_decode/mla_decode.hip") + kPlantedFaults);
    return tmp.path() + "/templates";
  }();

  testing::CliResult sweep(const std::string& db, bool planted) const {
    return run_ktune(fmt::format("{} sweep --kernel mla_decode --space {} --db {} --no-cache --timeout {}",
                                 planted ? "--templates " + templates : std::string(), space, db, kTimeoutS));
  }
  // Status of each (heads, causal) key's one measurement, and the detail.
  static std::map<std::pair<int64_t, int64_t>, std::pair<db::Status, std::string>> results(const std::string& db) {
    std::map<std::pair<int64_t, int64_t>, std::pair<db::Status, std::string>> out;
    for (const auto& m : db::Database::open(db, false, true)->measurements())
      out[{m.key.at("heads"), m.key.at("causal")}] = {m.status, m.detail};
    return out;
  }
};

// Runs without a device too (NVRTC compiles for sm_90a anywhere), so that a change of the
// template that breaks the plant shows in CI, not first on the GPU machine.
TEST_F(SweepFault, PlantedTemplateCompilesForTheGpu) {
  auto r = run_ktune(
      fmt::format("--templates {} compile --kernel mla_decode --space {} --arch sm_90a --no-cache", templates, space));
  if (contains(r.output, "unavailable")) GTEST_SKIP() << "NVRTC is unavailable here: " << r.output;
  EXPECT_EQ(r.status, 0) << "the planted faults must compile, or the GPU test below measures nothing: " << r.output;
  EXPECT_TRUE(contains(r.output, "2 compiled, 0 from the cache, 0 failed")) << r.output;
}

TEST_F(SweepFault, FaultsAndHangsBecomeGapsAndTheSweepGoesOn) {
  if (!testing::has_gpu()) GTEST_SKIP() << "no GPU: ktune devices finds no device to sweep on";

  // Control: the real template, same space: every key gets a kernel, so what follows is the plant's.
  const auto control = tmp.file("control.db");
  auto c = sweep(control, /*planted=*/false);
  ASSERT_EQ(c.status, 0) << c.output;
  for (const auto& [key, result] : results(control))
    EXPECT_EQ(result.first, db::Status::ok)
        << "heads=" << key.first << " causal=" << key.second << ": " << result.second;
  EXPECT_TRUE(db::Database::open(control, false, true)->gaps().empty());
  // The real worker names the probe that measured the run's matrix roof.
  const auto run = db::Database::open(control, false, true)->runs().at(0);
  EXPECT_GT(run.matrix_tflops, 0) << "the roof was not measured";
  EXPECT_EQ(run.matrix_probe, bench::matrix_instruction(run.arch).name);

  const auto planted = tmp.file("planted.db");
  auto r = sweep(planted, /*planted=*/true);
  ASSERT_EQ(r.status, 0) << "the sweep must survive its candidates: " << r.output;
  EXPECT_TRUE(contains(r.output, "5 ok, 0 verify_failed, 0 compile_error, 2 fault, 1 timeout")) << r.output;
  EXPECT_TRUE(contains(r.output, "4 workers")) << "a fresh worker after each fault and the hang: " << r.output;

  auto got = results(planted);
  ASSERT_EQ(got.size(), 8u) << "every candidate recorded: " << r.output;
  const auto status = [&](int64_t heads, int64_t causal) { return got[std::make_pair(heads, causal)].first; };
  const auto detail = [&](int64_t heads, int64_t causal) { return got[std::make_pair(heads, causal)].second; };
  for (int64_t heads : {12, 16, 20, 24})
    EXPECT_EQ(status(heads, 1), db::Status::ok) << "causal heads=" << heads << " runs the real code, also after the "
                                                << "non-causal key's failure: " << detail(heads, 1);
  EXPECT_EQ(status(16, 0), db::Status::ok) << detail(16, 0);
  EXPECT_EQ(status(12, 0), db::Status::fault) << detail(12, 0);
  EXPECT_TRUE(contains(detail(12, 0), "ILLEGAL_ADDRESS") || contains(detail(12, 0), "IllegalAddress")) << detail(12, 0);
  EXPECT_EQ(status(20, 0), db::Status::fault) << detail(20, 0);
  EXPECT_EQ(status(24, 0), db::Status::timeout) << detail(24, 0);
  EXPECT_TRUE(contains(detail(24, 0), fmt::format("no answer within {}.0 s", kTimeoutS))) << detail(24, 0);

  std::map<int64_t, db::GapReason> gaps;
  for (const auto& g : db::Database::open(planted, false, true)->gaps()) {
    EXPECT_EQ(g.key.at("causal"), 0);
    EXPECT_EQ(g.source, "measured");
    gaps[g.key.at("heads")] = g.reason;
  }
  EXPECT_EQ(gaps, (std::map<int64_t, db::GapReason>{
                      {12, db::GapReason::fault}, {20, db::GapReason::fault}, {24, db::GapReason::timeout}}));
}

}  // namespace
}  // namespace ktune
