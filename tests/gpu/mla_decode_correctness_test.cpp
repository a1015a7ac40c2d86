// mla_decode against the CPU reference on a real GPU, across the fold's range: head counts of
// 1..128, block lengths of 1..16, both masks, all three cache types, page sizes of 1, 16, 64 and
// 1536 tokens, kv_len == L, lengths that are no tile multiple and mixed lengths in one batch, each
// with the keys unsplit and split three ways (empty splits included), each case through every math
// path (SIMT, matrix cores, and where the device has them, wgmma and wgmma_ss for the bf16 cache,
// wgmma_t and wgmma with its producer decoding for the fp8 ones; on gfx942 and gfx950 mfma_native for the
// caches their MFMA reads) on the same inputs. Shapes stay small: the reference
// on the CPU is the cost.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "kernels/mfma_formats.hpp"
#include "kernels/mla_decode/inputs.hpp"
#include "mla_decode_device.hpp"

namespace ktune::mla::gpu_test {
namespace {

constexpr num::KvDtype kDtypes[] = {num::KvDtype::bf16, num::KvDtype::fp8_e4m3fn, num::KvDtype::fp8_e4m3fnuz};
constexpr int kForcedSplits[] = {1, 3};
constexpr int kMaxFailures = 10;  // per head count; the first ones say enough

constexpr int kMaths[] = {kMathSimt, kMathMma, kMathWgmma, kMathWgmmaSs, kMathWgmmaT, kMathMfmaNative};
// Paths that must run every cache type on every device; on sm_90a wgmma runs every cache type
// (fp8 ones at 384 and 512 threads, decoded by its producer), wgmma_ss the bf16 cache, wgmma_t the fp8 ones;
// mfma_native the caches that the device's MFMA reads (gfx942: fp8_e4m3fnuz; gfx950: fp8_e4m3fn, bf16).
bool required(int math, num::KvDtype kv_dtype, std::string_view arch) {
  if (math == kMathMfmaNative) {
    const MfmaFormats f = mfma_formats(arch);
    return kv_dtype == num::KvDtype::bf16         ? f.bf16_k32
           : kv_dtype == num::KvDtype::fp8_e4m3fn ? f.fp8_e4m3fn
                                                  : f.fp8_e4m3fnuz;
  }
  if (math == kMathWgmmaT) return kv_dtype != num::KvDtype::bf16 && arch == "sm_90a";
  if (math == kMathWgmma) return arch == "sm_90a";
  return !is_wgmma(math) || (kv_dtype == num::KvDtype::bf16 && arch == "sm_90a");
}

// Per math path: row and key tiles, thread counts and pipelines (SIMT: 1 or 2 stages; mma: rings of
// 2..4 tiles, and of 5 and 9 slots for tiles of 64 and 128 keys that take 2 and 4, warps that sit
// Q K^T out, several m-tiles; wgmma and wgmma_t with and without their producer warpgroup, wgmma
// also with a softmax warpgroup and with a producer that decodes an fp8 cache, in rings of 2 and 3
// tiles, wgmma_t also at 32 rows; mfma_native in tiles that fit gfx942's 64 KiB and gfx950's 160
// KiB); a config that the device cannot run is left out.
const std::vector<Config>& test_configs() {
  static const std::vector<Config> configs = {
      {16, 16, 128, 1, 0, kMathSimt},
      {32, 32, 256, 2, 0, kMathSimt},
      {64, 16, 256, 2, 0, kMathSimt},
      {16, 64, 512, 1, 0, kMathSimt},
      {32, 16, 512, 2, 0, kMathSimt},
      {16, 64, 128, 5, 0, kMathMma},
      {16, 32, 128, 4, 0, kMathMma},
      {32, 32, 256, 3, 0, kMathMma},
      {64, 16, 256, 4, 0, kMathMma},
      {16, 16, 64, 3, 0, kMathMma},
      {64, 32, 256, 2, 0, kMathMma},
      {16, 128, 256, 9, 0, kMathMma},
      {64, 32, 256, 4, 0, kMathWgmma},
      {64, 64, 256, 2, 0, kMathWgmma},
      {64, 32, 384, 4, 0, kMathWgmma},
      {64, 64, 384, 2, 0, kMathWgmma},  // with a producer warpgroup
      {64, 32, 384, 3, 0, kMathWgmma},
      {64, 32, 384, 2, 0, kMathWgmma},  // (fp8: it decodes the tiles)
      {64, 32, 512, 4, 0, kMathWgmma},
      {64, 64, 512, 2, 0, kMathWgmma},  // and a softmax warpgroup
      {64, 32, 512, 3, 0, kMathWgmma},
      {64, 32, 512, 2, 0, kMathWgmma},  // (fp8: the producer decodes)
      {64, 32, 256, 4, 0, kMathWgmmaSs},
      {64, 64, 256, 2, 0, kMathWgmmaSs},
      {16, 64, 256, 2, 0, kMathWgmmaT},
      {16, 64, 128, 5, 0, kMathWgmmaT},
      {16, 64, 128, 2, 0, kMathWgmmaT},
      {16, 64, 384, 2, 0, kMathWgmmaT},  // with a producer warpgroup (its only tiling that fits sm_90a)
      {32, 64, 256, 2, 0, kMathWgmmaT},
      {32, 64, 128, 5, 0, kMathWgmmaT},  // n32 products
      {16, 32, 256, 2, 0, kMathMfmaNative},
      {32, 16, 128, 2, 0, kMathMfmaNative},  // gfx942; gfx950's fp8 caches
      {32, 32, 256, 3, 0, kMathMfmaNative},
      {16, 64, 512, 6, 0, kMathMfmaNative},
      {64, 32, 512, 2, 0, kMathMfmaNative},  // gfx950
  };
  return configs;
}

std::vector<Config> runnable_configs(num::KvDtype kv_dtype, int math) {
  std::vector<Config> out;
  for (const Config& c : test_configs())
    if (c.math == math && !unrunnable(c, kv_dtype)) out.push_back(c);
  return out;
}

// Without a device: a config that no target of its path (sm_90a, which has every other path; gfx942
// and gfx950 for mfma_native) can run for any cache type its path must run there would be left out
// silently wherever the suite runs.
TEST(MlaDecodeCorrectnessConfigs, EachRunsOnATargetOfItsPathForACacheTypeItMustRun) {
  // Why `c` runs nowhere it must (empty: it runs somewhere).
  const auto why_nowhere = [](const Config& c) {
    std::string why;
    const std::vector<std::string_view> arches = c.math == kMathMfmaNative
                                                     ? std::vector<std::string_view>{"gfx942", "gfx950"}
                                                     : std::vector<std::string_view>{"sm_90a"};
    for (const std::string_view arch : arches)
      for (num::KvDtype dtype : kDtypes)
        if (required(c.math, dtype, arch)) {
          const auto unfit = mla::unrunnable(c, dtype, target_limits(arch));
          if (!unfit) return std::string();
          why += *unfit + "; ";
        }
    return why.empty() ? std::string("its path must run no cache type on these targets") : why;
  };
  for (const Config& c : test_configs()) {
    const std::string why = why_nowhere(c);
    EXPECT_TRUE(why.empty()) << fmt::format("rows={} keys={} threads={} stages={} math={}: {}", c.rows, c.keys,
                                            c.threads, c.stages, c.math, why);
  }
}

// Case i's shape: the lengths and the page size cycle with coprime periods (3 and 4), so that
// every pairing occurs. Very wide folds get shorter long contexts to keep the reference cheap.
Shape case_shape(int heads, int block_len, int i) {
  static constexpr int kPages[] = {1, 16, 64, 1536};
  const int page = kPages[i % 4];
  switch (i % 3) {
    case 0: return {block_len, page, 2, false};  // kv_len == L
    case 1: return {77, page, 3, true};          // 77, L and one in between
    default: return {heads * block_len >= 512 ? 300 : 1013, page, 2, true};
  }
}

class MlaDecodeCorrectness : public WithDevice<testing::TestWithParam<int>> {};

TEST_P(MlaDecodeCorrectness, MatchesTheReference) {
  const int heads = GetParam();
  backend::Context& ctx = *device().ctx;
  std::vector<Variant> variants;
  for (num::KvDtype dtype : kDtypes)
    for (int math : kMaths) {
      if (required(math, dtype, ctx.info().arch)) {
        ASSERT_FALSE(runnable_configs(dtype, math).empty())
            << "no test config of math=" << math << " runs on " << ctx.info().arch;
      }
      for (const Config& c : runnable_configs(dtype, math))
        for (bool causal : {false, true}) variants.push_back({c, dtype, causal, 0});
    }
  kernels().prepare(variants);

  int i = heads;  // a different phase of the cycles for each head count
  int failures = 0;
  for (int block_len = 1; block_len <= 16; ++block_len)
    for (bool causal : {false, true})
      for (num::KvDtype dtype : kDtypes) {
        const Key key{heads, block_len, causal, dtype, 1};
        const Shape shape = case_shape(heads, block_len, i);
        DeviceInstance instance(ctx, make_problem(key, shape, 1000 + i), true, 1, 3);
        for (int math : kMaths) {
          const std::vector<Config> configs = runnable_configs(dtype, math);
          if (configs.empty()) continue;  // a path the device or the cache type lacks (see required)
          const Variant variant{configs[i % configs.size()], dtype, causal, 0};
          for (int splits : kForcedSplits) {
            instance.poison();
            instance.launch_with_splits(kernels().candidate(variant), 0, splits);
            const Verdict v = instance.verify();
            EXPECT_TRUE(v.ok) << fmt::format("H={} L={} causal={} kv={} | ctx={} ragged={} batch={} page={} | {} "
                                             "splits={}: {}",
                                             heads, block_len, causal, key_fields()[3].format(static_cast<int>(dtype)),
                                             shape.ctx, shape.ragged, instance.problem().batch, shape.page_size,
                                             variant.name(), splits, v.detail);
            if (!v.ok && ++failures >= kMaxFailures) FAIL() << "stopping after " << kMaxFailures << " failures";
          }
        }
        ++i;
      }
}

INSTANTIATE_TEST_SUITE_P(Heads, MlaDecodeCorrectness, testing::Values(1, 8, 12, 16, 24, 32, 64, 96, 128),
                         [](const auto& info) { return "H" + std::to_string(info.param); });

}  // namespace
}  // namespace ktune::mla::gpu_test
