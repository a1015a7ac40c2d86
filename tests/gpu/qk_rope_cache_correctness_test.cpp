// qk_rope_cache against the CPU reference on a real GPU: head counts 1, 12, 16 and 128, pages of
// 1, 16 and 64 tokens, GPT-J and NeoX pairs, full and identity ropes (the identity through a
// 1-row table with positions up to 2^20), every cache and query type, padded tokens, and a
// canary-filled cache whose untouched slots must stay bit-identical — for fused variants of both
// layouts and for the unfused baseline.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "kernels/qk_rope_cache/inputs.hpp"
#include "qk_rope_cache_device.hpp"

namespace ktune::rope::gpu_test {
namespace {

constexpr num::KvDtype kDtypes[] = {num::KvDtype::bf16, num::KvDtype::fp8_e4m3fn, num::KvDtype::fp8_e4m3fnuz};
constexpr int kPageSizes[] = {1, 16, 64};
constexpr int kMaxFailures = 10;  // per head count; the first ones say enough

// Both layouts, every vector width, several tokens per CTA, both clamping modes, and the unfused
// sequence; a config the family prunes for a key (identity without clamping, idle threads) is
// left out of that key.
const std::vector<Config>& test_configs() {
  static const std::vector<Config> configs = {
      {Layout::token, 8, 1, 128, true, true},      {Layout::token, 2, 2, 256, false, true},
      {Layout::token_head, 4, 4, 256, true, true}, {Layout::token_head, 8, 2, 128, false, true},
      {Layout::token, 8, 1, 256, true, false},     {Layout::token, 4, 1, 128, false, false},
  };
  return configs;
}

std::vector<Config> feasible_configs(const Key& key) {
  std::vector<Config> out;
  for (const Config& c : test_configs())
    if (!qk_rope_cache_family().infeasible(to_params(key), to_params(c), target_limits(device().ctx->info().arch)))
      out.push_back(c);
  return out;
}

class QkRopeCacheCorrectness : public WithDevice<testing::TestWithParam<int>> {};

TEST_P(QkRopeCacheCorrectness, MatchesTheReferenceAndLeavesOtherSlotsAlone) {
  const int heads = GetParam();
  backend::Context& ctx = *device().ctx;
  std::vector<Variant> variants;
  for (num::KvDtype kv : kDtypes)
    for (num::KvDtype q : kDtypes)
      for (const Config& c : test_configs()) variants.push_back({c, kv, q});
  kernels().prepare(variants);

  int i = heads;  // a different phase of the cycles for each head count
  int failures = 0;
  for (num::KvDtype kv : kDtypes)
    for (num::KvDtype q : kDtypes)
      for (RopeMode rope : {RopeMode::full, RopeMode::identity})
        for (bool neox : {false, true}) {
          const Key key{heads, kv, q, rope, neox, 64};
          // 37 tokens, every 3rd padded, or 70 with every 5th: no multiple of tokens_per_cta.
          const Shape shape{i % 2 ? 37 : 70, kPageSizes[i % 3], 4096, i % 2 ? 3 : 5};
          DeviceInstance instance(ctx, make_problem(key, shape, 2000 + i), true, 1);
          ++i;
          const std::vector<Config> configs = feasible_configs(key);
          ASSERT_FALSE(configs.empty()) << to_params(key).canonical();
          for (const Config& c : configs) {
            const Verdict v = run_once(instance, {c, kv, q});
            EXPECT_TRUE(v.ok) << fmt::format("{} | T={} page={} padded_every={} | {}: {}",
                                             to_params(key).pretty(key_fields()), shape.tokens, shape.page_size,
                                             shape.padded_every, to_params(c).pretty(config_fields()), v.detail);
            if (!v.ok && ++failures >= kMaxFailures) FAIL() << "stopping after " << kMaxFailures << " failures";
          }
        }
}

INSTANTIATE_TEST_SUITE_P(Heads, QkRopeCacheCorrectness, testing::Values(1, 12, 16, 128),
                         [](const auto& info) { return "H" + std::to_string(info.param); });

}  // namespace
}  // namespace ktune::rope::gpu_test
