// `ktune bench` on a real device: a smoke-space config of H=16 L=1 bf16 is verified and timed,
// and the JSON it prints is complete and self-consistent (fractions of both roofs measured in the
// same run); an infeasible config is refused. The matrix-core probe on its own: it computes what
// it claims (checked on the host), its rate is plausible, and its time follows its work.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "bench/matrix_probe.hpp"
#include "bench/roofline.hpp"
#include "cli/cli_run.hpp"
#include "test_device.hpp"

namespace ktune::testing {
namespace {

const std::string kProblem =
    "bench --kernel mla_decode --heads 16 --block-len 1 --causal 0 --kv-dtype bf16 --batch 32 --ctx 4096 --json ";

// The JSON object: the last line of the output that starts with '{' (stderr may hold notes).
nlohmann::json last_object(const std::string& output) {
  nlohmann::json found;
  size_t start = 0;
  while (start < output.size()) {
    const size_t end = std::min(output.find('\n', start), output.size());
    if (output[start] == '{') found = nlohmann::json::parse(output.substr(start, end - start), nullptr, false);
    start = end + 1;
  }
  return found;
}

TEST(BenchGpu, SmokeConfigIsVerifiedAndTimedConsistently) {
  if (!has_gpu()) GTEST_SKIP() << "no GPU: `ktune devices` finds no device to time on";
  CliTempDir cache;
  auto r = run_ktune(kProblem + "--config 'rows=16 keys=32 threads=256 stages=2 split=2 math=simt' --cache-dir " +
                     cache.path());
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = last_object(r.output);
  ASSERT_TRUE(j.is_object()) << r.output;
  EXPECT_FALSE(j.at("device").at("name").get<std::string>().empty());
  EXPECT_FALSE(j.at("device").at("arch").get<std::string>().empty());
  for (const char* field : {"copy_gbps", "median_us", "p10_us", "p90_us", "bytes", "flops", "gbps", "tflops",
                            "frac_copy_bw", "max_abs_err", "rel_l2_err"})
    EXPECT_GE(j.at(field).get<double>(), 0) << field;
  for (const char* field : {"copy_gbps", "copy_gbps_before", "copy_gbps_after", "median_us", "p10_us", "bytes", "flops",
                            "gbps", "tflops", "frac_copy_bw"})
    EXPECT_GT(j.at(field).get<double>(), 0) << field;
  // The roof is the better of the copy tests before and after the kernel.
  EXPECT_EQ(j.at("copy_gbps").get<double>(),
            std::max(j.at("copy_gbps_before").get<double>(), j.at("copy_gbps_after").get<double>()));
  EXPECT_GT(j.at("samples").get<int>(), 0);
  EXPECT_TRUE(j.at("copy_after_error").is_null());
  // Why sampling stopped; a converged median is known to the policy's 2%.
  const std::string stop = j.at("stop");
  EXPECT_TRUE(stop == "converged" || stop == "max_samples" || stop == "budget") << stop;
  if (stop == "converged") {
    EXPECT_LE(j.at("rel_ci").get<double>(), 0.02);
  }
  EXPECT_TRUE(j.at("verified").get<bool>());
  EXPECT_EQ(j.at("key").at("kv_dtype"), "bf16");
  EXPECT_EQ(j.at("config").at("rows"), 16);
  EXPECT_EQ(j.at("shape").at("ctx"), 4096);
  const std::string probe = j.at("matrix_probe");
  EXPECT_EQ(probe, bench::matrix_instruction(j.at("device").at("arch").get<std::string>()).name);
  ASSERT_TRUE(j.at("matrix_tflops").is_number()) << "the matrix-core probe failed: " << j.at("matrix_error");
  EXPECT_TRUE(j.at("matrix_error").is_null());

  const double median = j.at("median_us"), gbps = j.at("gbps"), tflops = j.at("tflops");
  const double bytes = j.at("bytes"), flops = j.at("flops"), copy = j.at("copy_gbps");
  EXPECT_LE(j.at("p10_us").get<double>(), median);
  EXPECT_LE(median, j.at("p90_us").get<double>());
  EXPECT_NEAR(gbps, bytes / (median * 1e3), 1e-9 * gbps);
  EXPECT_NEAR(tflops, flops / (median * 1e6), 1e-9 * tflops);
  EXPECT_NEAR(j.at("frac_copy_bw").get<double>(), gbps / copy, 1e-9);
  const double matrix = j.at("matrix_tflops");
  EXPECT_GT(matrix, 1);
  EXPECT_NEAR(j.at("frac_matrix").get<double>(), tflops / matrix, 1e-9);
  EXPECT_GT(j.at("frac_matrix").get<double>(), 0);
  EXPECT_LT(j.at("frac_matrix").get<double>(), 1) << "SIMT math beyond the matrix cores' roof: a broken roof";
  // FlashMLA's accounting for B=32, L=1, H=16, ctx=4096, bf16.
  EXPECT_EQ(bytes, 32.0 * 4096 * 576 * 2 + 32.0 * 1 * 16 * (576 + 512) * 2);
  EXPECT_EQ(flops, 2.0 * 32 * 1 * 16 * 4096 * (576 + 512));
}

TEST(BenchGpu, InfeasibleConfigIsRefusedWithoutTiming) {
  if (!has_gpu()) GTEST_SKIP() << "no GPU: `ktune devices` finds no device to time on";
  auto r = run_ktune(kProblem + "--config 'rows=32 keys=32 threads=256 stages=2 split=2 math=simt'");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "rows=32 for H x L = 16 rows")) << r.output;
  EXPECT_FALSE(contains(r.output, "median_us")) << r.output;
}

class MatrixProbeGpu : public gpu_test::WithDevice<::testing::Test> {
 protected:
  backend::Context& ctx() { return *gpu_test::device().ctx; }
  const backend::Backend& backend() { return *gpu_test::device().backend; }
};

TEST_F(MatrixProbeGpu, ComputesWhatItCountsAndReachesAPlausibleRate) {
  bench::MatrixProbe probe(backend(), ctx());
  EXPECT_NO_THROW(probe.verify());  // every thread's sum matches the host's count of instructions
  const double tflops = bench::measure_matrix_tflops(backend(), ctx());
  const std::string arch = ctx().info().arch;
  std::cout << ctx().info().name << ": " << bench::matrix_instruction(arch).name << " peak " << tflops << " TFLOP/s\n";
  if (arch.starts_with("sm_90")) {
    // H100 / H200 SXM: 989 dense bf16 TFLOP/s on the data sheet (wgmma, at 1830 MHz); 1980 MHz,
    // their highest clock, would give 1070.
    EXPECT_GT(tflops, 50) << "far below any Hopper: the probe does not keep the matrix cores busy";
    EXPECT_LT(tflops, 1100) << "beyond Hopper's dense bf16 peak: work was counted that did not run";
  } else {
    EXPECT_GT(tflops, 1);
    EXPECT_LT(tflops, 5000);
  }
}

// Where the kernels issue wgmma (sm_90a), the roof is wgmma's, and it is above what mma.sync
// reaches: a roof below an instruction the kernels issue would let them pass 100%.
TEST_F(MatrixProbeGpu, WgmmaRoofIsAboveMmaSyncs) {
  const std::string arch = ctx().info().arch;
  if (bench::matrix_instruction(arch).name != "wgmma m64n256k16 bf16")
    GTEST_SKIP() << arch << " has no warpgroup products: its roof is mma.sync's";
  bench::MatrixProbe mma(backend(), ctx(), bench::mma_sync_instruction());
  mma.verify();
  const auto l = mma.launch_of(bench::kMatrixProbeIterations);
  const double mma_tflops =
      bench::rates_of(0, bench::matrix_probe_flops(l, mma.instruction()), mma.time(l.iterations).median_us, 0, 0)
          .tflops;
  const double wgmma_tflops = bench::measure_matrix_tflops(backend(), ctx());
  std::cout << ctx().info().name << ": wgmma " << wgmma_tflops << " TFLOP/s, mma.sync " << mma_tflops << " TFLOP/s\n";
  EXPECT_GT(wgmma_tflops, 1.2 * mma_tflops);
}

// Cheap enough for `ktune devices` and for every sweep's first worker: compile, verify and time
// within a second.
TEST_F(MatrixProbeGpu, TakesLessThanASecond) {
  const auto start = std::chrono::steady_clock::now();
  const double tflops = bench::measure_matrix_tflops(backend(), ctx());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GT(tflops, 0);
  EXPECT_LT(seconds, 1.0);
}

TEST(DevicesGpu, EveryDeviceHasBothRoofs) {
  if (!has_gpu()) GTEST_SKIP() << "no GPU: `ktune devices` finds no device to measure";
  auto r = run_ktune("devices --json");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.output;
  int devices = 0;
  for (const auto& b : j.at("backends"))
    for (const auto& d : b.at("devices")) {
      ++devices;
      EXPECT_GT(d.at("copy_gbps").get<double>(), 0) << d.dump();
      ASSERT_TRUE(d.at("matrix_tflops").is_number()) << d.dump();
      EXPECT_GT(d.at("matrix_tflops").get<double>(), 1) << d.dump();
      EXPECT_EQ(d.at("matrix_probe"), bench::matrix_instruction(d.at("arch").get<std::string>()).name);
    }
  EXPECT_GT(devices, 0);
}

TEST_F(MatrixProbeGpu, HalfTheWorkTakesAboutHalfTheTime) {
  bench::MatrixProbe probe(backend(), ctx());
  const int full = bench::kMatrixProbeIterations;
  const double full_us = probe.time(full).median_us;
  const double half_us = probe.time(full / 2).median_us;
  ASSERT_GT(full_us, 0);
  // A probe whose time does not follow its instructions (optimised away, or bound by something
  // else than the matrix cores, like launch overhead) fails here.
  EXPECT_GT(half_us / full_us, 0.4) << half_us << " us vs " << full_us << " us";
  EXPECT_LT(half_us / full_us, 0.6) << half_us << " us vs " << full_us << " us";
  const double full_rate = bench::matrix_probe_flops(probe.launch_of(full), probe.instruction()) / full_us;
  const double half_rate = bench::matrix_probe_flops(probe.launch_of(full / 2), probe.instruction()) / half_us;
  EXPECT_NEAR(half_rate / full_rate, 1.0, 0.2);
}

}  // namespace
}  // namespace ktune::testing
