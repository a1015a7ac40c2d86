// AMD's published figures of the targets ktune tunes on without a device to ask (MI300X for
// gfx942, MI355X for gfx950): as the specifications state them, with their sources, and used where
// ktune needs them: the compile-target limits (LDS, wave size), timing's rotation past the
// Infinity Cache, and the split-KV policy, whose one-wave rule is checked on those parts' compute
// units.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backend/backend.hpp"
#include "backend/target_facts.hpp"
#include "bench/rotations.hpp"
#include "kernels/family.hpp"
#include "kernels/mla_decode/split_policy.hpp"

namespace ktune {
namespace {

using ::testing::HasSubstr;
constexpr int64_t KiB = 1024, MiB = KiB * KiB;

TEST(TargetFacts, TheFiguresOfAmdsSpecificationsWithTheirSources) {
  const auto* mi300x = backend::target_facts("gfx942");
  ASSERT_NE(mi300x, nullptr);
  EXPECT_EQ(mi300x->product, "AMD Instinct MI300X");
  EXPECT_EQ(mi300x->compute_units, 304);
  EXPECT_EQ(mi300x->wave_size, 64);
  EXPECT_EQ(mi300x->lds_per_cu_bytes, 64 * KiB);
  EXPECT_EQ(mi300x->last_level_cache_bytes, 256 * MiB);
  EXPECT_DOUBLE_EQ(mi300x->peak_hbm_gbps, 5300);
  const auto* mi355x = backend::target_facts("gfx950");
  ASSERT_NE(mi355x, nullptr);
  EXPECT_EQ(mi355x->product, "AMD Instinct MI355X");
  EXPECT_EQ(mi355x->compute_units, 256);
  EXPECT_EQ(mi355x->wave_size, 64);
  EXPECT_EQ(mi355x->lds_per_cu_bytes, 160 * KiB);
  EXPECT_EQ(mi355x->last_level_cache_bytes, 256 * MiB);
  EXPECT_DOUBLE_EQ(mi355x->peak_hbm_gbps, 8000);
  for (const auto* f : {mi300x, mi355x, backend::target_facts("gfx90a")}) {
    ASSERT_NE(f, nullptr);
    EXPECT_THAT(std::string(f->sources), HasSubstr("https://rocm.docs.amd.com/en/latest/reference/gpu-specs.html"));
    EXPECT_THAT(std::string(f->sources), HasSubstr("https://www.amd.com/"));
    EXPECT_EQ(f->vgprs_per_simd * f->simds_per_cu * f->wave_size * 4, 512 * KiB) << "the VGPR file of 512 KiB per CU";
  }
  EXPECT_EQ(backend::target_facts("sm_90a"), nullptr) << "NVIDIA devices report their own";
}

TEST(TargetFacts, TheCompileTargetsLimitsAreTheFacts) {
  for (const char* arch : {"gfx90a", "gfx942", "gfx950"}) {
    const auto& f = *backend::target_facts(arch);
    const TargetLimits& t = target_limits(arch);
    EXPECT_EQ(t.warp_size, f.wave_size) << arch;
    EXPECT_EQ(t.shared_per_block, f.lds_per_cu_bytes) << arch;
  }
}

TEST(TargetFacts, TimingRotatesPastTheInfinityCache) {
  backend::DeviceInfo mi300x;
  mi300x.arch = "gfx942";
  mi300x.l2_bytes = 4 * MiB;  // what the runtime reports: one XCD's L2
  // 100 MB of inputs per launch: past one L2 a single copy would do; past 3x 256 MiB it takes 9.
  EXPECT_EQ(bench::rotations_for(100'000'000, mi300x.last_level_cache_bytes()), 9);
}

// The split policy fills the device in one wave and never spills into a second: on the compute
// units of MI300X and MI355X, for the configs whose rings leave one CTA per CU.
TEST(TargetFacts, TheSplitPolicyFillsOneWaveOfTheAmdParts) {
  for (const char* arch : {"gfx942", "gfx950"}) {
    const int cus = backend::target_facts(arch)->compute_units;
    for (int batch : {8, 16, 32, 64, 128}) {
      const int splits = mla::num_splits({batch, 1, 32768, cus, 1, 64});
      SCOPED_TRACE(fmt::format("{} ({} CUs), batch {}: {} splits", arch, cus, batch, splits));
      EXPECT_LE(batch * splits, cus) << "one wave";
      EXPECT_GT(batch * (splits + 1), cus) << "one more split would still fit the wave";
    }
  }
}

}  // namespace
}  // namespace ktune
