// `ktune bench` on a real device: a smoke-space config of H=16 L=1 bf16 is verified and timed,
// and the JSON it prints is complete and self-consistent; an infeasible config is refused.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "cli/cli_run.hpp"

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
  for (const char* field : {"copy_gbps", "median_us", "p10_us", "bytes", "flops", "gbps", "tflops", "frac_copy_bw"})
    EXPECT_GT(j.at(field).get<double>(), 0) << field;
  EXPECT_GT(j.at("samples").get<int>(), 0);
  EXPECT_TRUE(j.at("verified").get<bool>());
  EXPECT_EQ(j.at("key").at("kv_dtype"), "bf16");
  EXPECT_EQ(j.at("config").at("rows"), 16);
  EXPECT_EQ(j.at("shape").at("ctx"), 4096);
  EXPECT_TRUE(j.at("frac_matrix").is_null()) << "no matrix-core probe: not measured, not invented";

  const double median = j.at("median_us"), gbps = j.at("gbps"), tflops = j.at("tflops");
  const double bytes = j.at("bytes"), flops = j.at("flops"), copy = j.at("copy_gbps");
  EXPECT_LE(j.at("p10_us").get<double>(), median);
  EXPECT_LE(median, j.at("p90_us").get<double>());
  EXPECT_NEAR(gbps, bytes / (median * 1e3), 1e-9 * gbps);
  EXPECT_NEAR(tflops, flops / (median * 1e6), 1e-9 * tflops);
  EXPECT_NEAR(j.at("frac_copy_bw").get<double>(), gbps / copy, 1e-9);
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

}  // namespace
}  // namespace ktune::testing
