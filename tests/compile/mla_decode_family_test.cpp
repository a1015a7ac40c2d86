// The mla_decode family's compile-time decisions, on the CPU: target limits, which configs are
// pruned and why, the names it asks the JIT for, its verify shapes, its inputs and its split
// policy. Each check sits next to a case that makes it fail.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "common/error.hpp"
#include "kernels/family.hpp"
#include "kernels/mla_decode/family.hpp"
#include "kernels/mla_decode/geometry.hpp"
#include "kernels/mla_decode/inputs.hpp"
#include "kernels/mla_decode/problem.hpp"
#include "kernels/mla_decode/reference.hpp"
#include "kernels/mla_decode/split_policy.hpp"

namespace ktune::mla {
namespace {

using testing::AllOf;
using testing::HasSubstr;
using testing::Not;

const Family& family() { return mla_decode_family(); }

std::optional<std::string> why_not(const Key& k, const Config& c, const char* arch) {
  return family().infeasible(to_params(k), to_params(c), target_limits(arch));
}

TEST(MlaDecodeTargets, KnownArchesHaveTheirWarpAndSharedMemory) {
  EXPECT_EQ(target_limits("gfx90a").warp_size, 64);
  EXPECT_EQ(target_limits("gfx942").shared_per_block, 64 * 1024);
  EXPECT_EQ(target_limits("gfx950").shared_per_block, 160 * 1024);
  EXPECT_EQ(target_limits("sm_90a").warp_size, 32);
  EXPECT_EQ(target_limits("sm_90a").shared_per_block, 227 * 1024);
  EXPECT_EQ(target_limits("sm_89").shared_per_block, 99 * 1024);
  EXPECT_EQ(target_limits("sm_80").shared_per_block, 163 * 1024);
}

// How many blocks share one compute unit (the rings of copies in flight depend on it), at each
// side of the limits: an SM of sm_90a holds 228 KiB of shared memory, 1 KiB of it reserved per
// block, and 64 Ki registers; an SM of sm_89 100 KiB; a CU of gfx90a 64 KiB, none reserved.
TEST(MlaDecodeTargets, ResidentBlocksCountSharedMemoryWithItsReserveAndRegisters) {
  const auto& h200 = target_limits("sm_90a");
  EXPECT_EQ(resident_blocks(h200, 113 * 1024, 128), 2);
  EXPECT_EQ(resident_blocks(h200, 113 * 1024 + 1, 128), 1);
  EXPECT_EQ(resident_blocks(h200, 227 * 1024, 128), 1);
  EXPECT_EQ(resident_blocks(h200, 227 * 1024 + 1, 128), 0);
  EXPECT_EQ(resident_blocks(h200, 1024, 256), 1) << "256 threads of 255 registers take more than half the SM's";
  EXPECT_EQ(resident_blocks(h200, 1024, 64), 4);
  EXPECT_EQ(resident_blocks(target_limits("sm_89"), 49 * 1024, 128), 2);
  EXPECT_EQ(resident_blocks(target_limits("sm_89"), 49 * 1024 + 1, 128), 1);
  EXPECT_EQ(resident_blocks(target_limits("gfx90a"), 32 * 1024, 256), 2);
  EXPECT_EQ(resident_blocks(target_limits("gfx90a"), 32 * 1024 + 1, 256), 1);
}

TEST(MlaDecodeTargets, UnknownArchNamesTheKnownOnes) {
  try {
    target_limits("gfx1100");
    FAIL() << "gfx1100 was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("gfx1100"));
    EXPECT_THAT(e.what(), HasSubstr("gfx942"));
    EXPECT_THAT(e.what(), HasSubstr("sm_90a"));
  }
}

TEST(MlaDecodeFamily, IsRegisteredUnderItsName) {
  EXPECT_EQ(&ktune::family("mla_decode"), &family());
  EXPECT_THROW(ktune::family("mla_prefill"), Error);
}

TEST(MlaDecodeFamily, FieldsRoundTripThroughParams) {
  const Key key{96, 3, true, num::KvDtype::fp8_e4m3fnuz, 8};
  const Params p = to_params(key);
  EXPECT_EQ(p.canonical(), "heads=96,block_len=3,causal=1,kv_dtype=2,batch=8");
  EXPECT_EQ(key_of(p).heads, 96);
  EXPECT_EQ(key_of(p).kv_dtype, num::KvDtype::fp8_e4m3fnuz);
  EXPECT_THROW(key_of(Params{{"heads", 0}, {"block_len", 1}, {"causal", 0}, {"kv_dtype", 0}, {"batch", 1}}), Error);
  EXPECT_THROW(config_of(p), Error) << "a key is not a config";
}

TEST(MlaDecodeFamily, NamesTheMainAndTheCombineKernel) {
  const auto names = family().name_expressions(to_params(Key{16, 2, false, num::KvDtype::fp8_e4m3fn, 32}),
                                               to_params(Config{32, 16, 256, 2, 4, 0}));
  EXPECT_THAT(names, testing::ElementsAre("ktune::mla_decode<32, 16, 256, 2, 0, 1, 0, 0>", "ktune::mla_combine<256>"));
  // split is a host knob: configs that differ only in it share the instance.
  EXPECT_EQ(names, family().name_expressions(to_params(Key{128, 16, false, num::KvDtype::fp8_e4m3fn, 1}),
                                             to_params(Config{32, 16, 256, 2, 0, 0})));
}

TEST(MlaDecodeFamily, ASmallConfigIsFeasibleEverywhere) {
  for (const char* arch : {"gfx90a", "gfx942", "gfx950", "sm_80", "sm_89", "sm_90a"})
    EXPECT_EQ(why_not({16, 1, true, num::KvDtype::bf16, 1}, {16, 16, 256, 1, 0, 0}, arch), std::nullopt) << arch;
}

TEST(MlaDecodeFamily, PrunesWhatDoesNotFitAndSaysWhy) {
  const Key wide{128, 16, true, num::KvDtype::bf16, 1};
  // 64 rows x 584 bf16 of q alone take 73 KiB: fine on sm_90a, not in gfx90a's 64 KiB LDS.
  const Config big{64, 16, 256, 1, 0, 0};
  EXPECT_EQ(why_not(wide, big, "sm_90a"), std::nullopt);
  EXPECT_THAT(why_not(wide, big, "gfx90a").value_or(""), HasSubstr("shared memory"));
  // 64 rows x 512 dims over 128 threads = 256 accumulators per thread.
  EXPECT_THAT(why_not(wide, {64, 16, 128, 1, 0, 0}, "sm_90a").value_or(""), HasSubstr("registers"));
  // 16 x 16 scores cannot be spread over 512 threads.
  EXPECT_THAT(why_not(wide, {16, 16, 512, 1, 0, 0}, "sm_90a").value_or(""), HasSubstr("scores"));
  EXPECT_THAT(why_not(wide, {24, 16, 256, 1, 0, 0}, "sm_90a").value_or(""), HasSubstr("rows=24"));
  EXPECT_THAT(why_not(wide, {16, 48, 256, 1, 0, 0}, "sm_90a").value_or(""), HasSubstr("keys=48"));
  EXPECT_THAT(why_not(wide, {16, 16, 192, 1, 0, 0}, "sm_90a").value_or(""), HasSubstr("threads=192"));
}

TEST(MlaDecodeFamily, PrunesTilesThatWouldBeMostlyPadding) {
  const Config rows32{32, 16, 256, 1, 0, 0};
  EXPECT_THAT(why_not({8, 2, false, num::KvDtype::bf16, 1}, rows32, "sm_90a").value_or(""), HasSubstr("padding"));
  EXPECT_EQ(why_not({8, 3, false, num::KvDtype::bf16, 1}, rows32, "sm_90a"), std::nullopt) << "24 rows fill 32 enough";
  EXPECT_EQ(why_not({1, 1, false, num::KvDtype::bf16, 1}, {16, 16, 256, 1, 0, 0}, "sm_90a"), std::nullopt)
      << "the smallest tile serves even one row";
}

TEST(MlaDecodeFamily, LaunchInfoMatchesTheKernelGeometry) {
  const Config c{32, 32, 256, 2, 0, 0};
  const LaunchInfo info = family().launch_info(to_params(Key{16, 2, false, num::KvDtype::bf16, 1}), to_params(c));
  EXPECT_EQ(info.threads_per_block, 256);
  // q tile + 2 key tiles of 584 bf16 per row, P (32 x 33 fp32) and 3 x 32 fp32 of row statistics.
  EXPECT_EQ(info.shared_bytes, 32 * 584 * 2 + 2 * 32 * 584 * 2 + 32 * 33 * 4 + 3 * 32 * 4);
}

TEST(MlaDecodeFamily, MathSelectsTheKernelTemplate) {
  const Key key{16, 1, true, num::KvDtype::bf16, 128};
  EXPECT_EQ(family().name_expressions(to_params(key), to_params(Config{16, 64, 128, 2, 0, kMathMma})).front(),
            "ktune::mla_decode_mma<16, 64, 128, 2, 1, 0, 1, 0>");
  EXPECT_EQ(family().name_expressions(to_params(key), to_params(Config{16, 64, 128, 2, 0, kMathSimt})).front(),
            "ktune::mla_decode<16, 64, 128, 2, 0, 0, 1, 0>");
  EXPECT_EQ(main_kernel_name({16, 64, 128, 2, 0, kMathMma}, num::KvDtype::fp8_e4m3fn, false, -1),
            "ktune::mla_decode_mma<16, 64, 128, 2, 1, 1, 0, -1>")
      << "the planted off-by-one reaches the mma kernel too";
  EXPECT_EQ(config_fields()[5].format(kMathMma), "mma");
  // wgmma is the matrix-core kernel with Q K^T on warpgroup products (MATH = 2).
  EXPECT_EQ(main_kernel_name({64, 32, 256, 4, 0, kMathWgmma}, num::KvDtype::bf16, true, 0),
            "ktune::mla_decode_mma<64, 32, 256, 4, 2, 0, 1, 0>");
  EXPECT_EQ(config_fields()[5].format(kMathWgmma), "wgmma");
  // wgmma_ss: the same kernel with P V's operands both from shared memory (MATH = 3).
  EXPECT_EQ(main_kernel_name({64, 64, 256, 2, 0, kMathWgmmaSs}, num::KvDtype::bf16, false, 0),
            "ktune::mla_decode_mma<64, 64, 256, 2, 3, 0, 0, 0>");
  EXPECT_EQ(config_fields()[5].format(kMathWgmmaSs), "wgmma_ss");
  // wgmma_t: the transposed kernel (MATH = 4).
  EXPECT_EQ(main_kernel_name({16, 64, 256, 2, 0, kMathWgmmaT}, num::KvDtype::fp8_e4m3fnuz, true, -1),
            "ktune::mla_decode_transposed<16, 64, 256, 2, 4, 2, 1, -1>");
  EXPECT_EQ(config_fields()[5].format(kMathWgmmaT), "wgmma_t");
  // mfma_native: the matrix-core kernel with the MFMA forms of the cache's format (MATH = 5).
  EXPECT_EQ(main_kernel_name({16, 64, 256, 5, 0, kMathMfmaNative}, num::KvDtype::fp8_e4m3fnuz, true, 0),
            "ktune::mla_decode_mma<16, 64, 256, 5, 5, 2, 1, 0>");
  EXPECT_EQ(config_fields()[5].format(kMathMfmaNative), "mfma_native");
  EXPECT_THROW(config_of(to_params(Config{16, 64, 128, 2, 0, 6})), Error) << "math=6 is no path";
}

// math=mfma_native runs where the target's MFMA reads the key's cache as it is: fp8_e4m3fnuz on
// gfx942, fp8_e4m3fn and bf16 on gfx950; elsewhere it is pruned with the form it lacks, and the
// reason says that no AMD GPU has executed it. Where it runs, it prunes as math=mma does (the same
// kernel and geometry), but for bf16's 16-key tiles.
TEST(MlaDecodeFamily, MfmaNativeRunsWhereTheTargetsMfmaReadsTheCache) {
  using num::KvDtype;
  const auto key = [](KvDtype kv) { return Key{16, 4, true, kv, 32}; };
  const Config native{16, 64, 256, 5, 0, kMathMfmaNative};
  for (const char* arch : {"sm_90a", "gfx90a"})
    for (const KvDtype kv : {KvDtype::bf16, KvDtype::fp8_e4m3fn, KvDtype::fp8_e4m3fnuz})
      EXPECT_THAT(why_not(key(kv), native, arch).value_or(""),
                  AllOf(HasSubstr("math=mfma_native needs"), HasSubstr(std::string(arch) + " lacks"),
                        HasSubstr("no AMD GPU has executed it")))
          << arch << " " << static_cast<int>(kv);
  EXPECT_THAT(why_not(key(KvDtype::fp8_e4m3fn), native, "gfx942").value_or(""),
              HasSubstr("reads the OCP fp8_e4m3fn (gfx950)"));
  EXPECT_THAT(why_not(key(KvDtype::bf16), native, "gfx942").value_or(""), HasSubstr("16x16x32 bf16 MFMA (gfx950)"));
  EXPECT_THAT(why_not(key(KvDtype::fp8_e4m3fnuz), native, "gfx950").value_or(""),
              HasSubstr("reads fp8_e4m3fnuz (gfx942)"));
  EXPECT_THAT(why_not(key(KvDtype::bf16), {16, 16, 256, 4, 0, kMathMfmaNative}, "gfx950").value_or(""),
              HasSubstr("keys=16: math=mfma_native's bf16 P V takes 32 keys"));
  const std::pair<const char*, KvDtype> runs[] = {
      {"gfx942", KvDtype::fp8_e4m3fnuz}, {"gfx950", KvDtype::fp8_e4m3fn}, {"gfx950", KvDtype::bf16}};
  int feasible = 0;
  for (const auto& [arch, kv] : runs)
    for (const int rows : {16, 32, 64})
      for (const int keys : {32, 64, 128})
        for (const int threads : {128, 256, 512})
          for (int stages = 1; stages <= mla_tile::kMaxRingSlots; ++stages) {
            const Config mma{rows, keys, threads, stages, 0, kMathMma};
            Config c = mma;
            c.math = kMathMfmaNative;
            const auto why = why_not(key(kv), c, arch);
            EXPECT_EQ(why.has_value(), why_not(key(kv), mma, arch).has_value())
                << arch << " " << static_cast<int>(kv) << " " << to_params(c).canonical() << ": " << why.value_or("");
            feasible += !why;
          }
  EXPECT_GT(feasible, 0);
}

// The matrix-core kernel's variant, which host and kernel derive alike from math, threads and the
// cache's type (MmaGeometry::variant, producer_kind).
TEST(MlaDecodeFamily, MathAndThreadsNameTheMatrixCoreVariant) {
  using mla_tile::MmaProducer;
  using mla_tile::MmaVariant;
  const auto variant = [](Config c, num::KvDtype kv) { return mma_geometry(c, kv, 32).variant(); };
  const num::KvDtype bf16 = num::KvDtype::bf16, fp8 = num::KvDtype::fp8_e4m3fn;
  EXPECT_EQ(variant({16, 64, 128, 2, 0, kMathMma}, bf16), MmaVariant::kMma);
  EXPECT_EQ(variant({64, 32, 384, 4, 0, kMathMma}, bf16), MmaVariant::kMma) << "threads name no variant of mma";
  EXPECT_EQ(variant({16, 32, 256, 2, 0, kMathMfmaNative}, num::KvDtype::fp8_e4m3fnuz), MmaVariant::kMma)
      << "mfma_native runs mma's variant with other MFMA forms";
  EXPECT_EQ(variant({64, 32, 256, 4, 0, kMathWgmma}, bf16), MmaVariant::kWgmma);
  EXPECT_EQ(variant({64, 32, 384, 4, 0, kMathWgmma}, bf16), MmaVariant::kWgmmaProducer);
  EXPECT_EQ(variant({64, 32, 512, 4, 0, kMathWgmma}, bf16), MmaVariant::kWgmmaSoftmax);
  EXPECT_EQ(variant({64, 64, 256, 2, 0, kMathWgmmaSs}, bf16), MmaVariant::kWgmmaSs);
  EXPECT_EQ(variant({64, 64, 384, 2, 0, kMathWgmmaSs}, bf16), MmaVariant::kWgmmaSs) << "wgmma_ss has no producer";
  EXPECT_EQ(mma_geometry({64, 32, 256, 4, 0, kMathWgmma}, bf16, 32).producer_kind(), MmaProducer::kNone);
  EXPECT_EQ(mma_geometry({64, 32, 384, 4, 0, kMathWgmma}, bf16, 32).producer_kind(), MmaProducer::kCopies);
  EXPECT_EQ(mma_geometry({64, 32, 384, 3, 0, kMathWgmma}, fp8, 32).producer_kind(), MmaProducer::kDecoding);
  EXPECT_EQ(mma_geometry({64, 32, 512, 3, 0, kMathWgmma}, fp8, 32).producer_kind(), MmaProducer::kDecoding);
}

TEST(MlaDecodeFamily, WgmmaTRunsFp8CachesOnSm90aWithTilesOf16Or32Rows) {
  const Key h16{16, 1, true, num::KvDtype::fp8_e4m3fn, 128};
  const Config two_groups{16, 64, 256, 2, 0, kMathWgmmaT};
  EXPECT_EQ(why_not(h16, two_groups, "sm_90a"), std::nullopt);
  EXPECT_EQ(why_not({16, 1, true, num::KvDtype::fp8_e4m3fnuz, 128}, two_groups, "sm_90a"), std::nullopt);
  EXPECT_EQ(why_not(h16, {16, 64, 128, 5, 0, kMathWgmmaT}, "sm_90a"), std::nullopt) << "the deepest ring that fits";
  EXPECT_EQ(why_not(h16, {16, 64, 128, 2, 0, kMathWgmmaT}, "sm_90a"), std::nullopt) << "two CTAs share an SM";
  EXPECT_THAT(why_not(h16, {16, 64, 128, 4, 0, kMathWgmmaT}, "sm_90a").value_or(""), HasSubstr("ring of 5 slots"));
  EXPECT_THAT(why_not(h16, {16, 64, 256, 3, 0, kMathWgmmaT}, "sm_90a").value_or(""), HasSubstr("shared memory"));
  EXPECT_THAT(why_not(h16, {16, 64, 128, 1, 0, kMathWgmmaT}, "sm_90a").value_or(""), HasSubstr("ring of 2.."));
  EXPECT_THAT(why_not(h16, two_groups, "gfx90a").value_or(""), HasSubstr("math=wgmma_t needs sm_90a"));
  EXPECT_THAT(why_not(h16, two_groups, "sm_90").value_or(""), HasSubstr("needs sm_90a"));
  EXPECT_THAT(why_not({16, 1, true, num::KvDtype::bf16, 128}, two_groups, "sm_90a").value_or(""),
              HasSubstr("fp8 caches only"));
  EXPECT_THAT(why_not(h16, {64, 64, 256, 2, 0, kMathWgmmaT}, "sm_90a").value_or(""), HasSubstr("16 or 32 query rows"));
  EXPECT_THAT(why_not(h16, {16, 32, 256, 2, 0, kMathWgmmaT}, "sm_90a").value_or(""), HasSubstr("64 keys"));
  EXPECT_THAT(why_not(h16, {16, 64, 512, 2, 0, kMathWgmmaT}, "sm_90a").value_or(""), HasSubstr("warpgroups"));
  // Shared memory: the fp16 q tile, per warpgroup a ring of 576-byte code rows, P^T and the row
  // maxima, then the row sums and the merge's maxima.
  const auto g = transposed_geometry(two_groups, num::KvDtype::fp8_e4m3fn);
  EXPECT_EQ(g.warpgroups(), 2);
  EXPECT_EQ(g.shared_bytes(),
            16 * 576 * 2 + 2 * (2 * 64 * 576 + 16 * 64 * 2 + 4 * 16 * 4) + 2 * 4 * 16 * 4 + 2 * 16 * 4);
  EXPECT_EQ(g.p_offset(0) % 1024, 0) << "wgmma's 128-byte swizzle is anchored at 1024-byte boundaries";
  EXPECT_EQ(g.p_offset(1) % 1024, 0);
  EXPECT_EQ(family().launch_info(to_params(h16), to_params(two_groups)).shared_bytes, g.shared_bytes());
}

// 32 query rows (n32 products, 128 accumulator registers a thread for O^T): one or two warpgroups
// without a producer, and only where H x L fills more than half the tile.
TEST(MlaDecodeFamily, WgmmaTTakes32RowsWithoutAProducer) {
  const Key h32{32, 1, true, num::KvDtype::fp8_e4m3fn, 128};
  const Config one_group{32, 64, 128, 5, 0, kMathWgmmaT};
  EXPECT_EQ(why_not(h32, {32, 64, 256, 2, 0, kMathWgmmaT}, "sm_90a"), std::nullopt);
  EXPECT_EQ(why_not(h32, one_group, "sm_90a"), std::nullopt) << "the deepest ring that fits";
  EXPECT_EQ(why_not({24, 1, false, num::KvDtype::fp8_e4m3fnuz, 1}, one_group, "sm_90a"), std::nullopt);
  EXPECT_THAT(why_not(h32, {32, 64, 384, 2, 0, kMathWgmmaT}, "sm_90a").value_or(""),
              HasSubstr("too few for the O^T accumulators of 32 rows"));
  EXPECT_THAT(why_not(h32, {32, 64, 256, 3, 0, kMathWgmmaT}, "sm_90a").value_or(""), HasSubstr("shared memory"));
  EXPECT_THAT(why_not(h32, {32, 64, 128, 6, 0, kMathWgmmaT}, "sm_90a").value_or(""), HasSubstr("shared memory"));
  EXPECT_THAT(why_not({16, 1, true, num::KvDtype::fp8_e4m3fn, 128}, one_group, "sm_90a").value_or(""),
              HasSubstr("padding"));
  const auto g = transposed_geometry(one_group, num::KvDtype::fp8_e4m3fn);
  EXPECT_EQ(g.warpgroups(), 1);
  EXPECT_EQ(g.shared_bytes(), 32 * 576 * 2 + 5 * 64 * 576 + 32 * 64 * 2 + 4 * 32 * 4 + 4 * 32 * 4 + 32 * 4);
  EXPECT_EQ(g.p_offset(0) % 1024, 0);
  EXPECT_GE(g.stages * g.stage_bytes(), g.merge_bytes()) << "the merge stages O^T in the ring";
}

// An fp8 cache on wgmma: the producer warpgroup (384 threads, or 512 with a softmax warpgroup)
// decodes each tile of 32 keys into an fp16 tile of the ring, from two slots of codes of its own;
// 64-key tiles do not fit beside the fp16 q tile, and 256 threads have no producer to decode.
TEST(MlaDecodeFamily, WgmmaDecodesFp8CachesInItsProducer) {
  const Key h128{128, 1, true, num::KvDtype::fp8_e4m3fn, 128};
  const Config decoded{64, 32, 384, 3, 0, kMathWgmma};
  EXPECT_EQ(why_not(h128, decoded, "sm_90a"), std::nullopt);
  EXPECT_EQ(why_not({16, 4, false, num::KvDtype::fp8_e4m3fnuz, 1}, decoded, "sm_90a"), std::nullopt);
  EXPECT_THAT(why_not(h128, {64, 32, 384, 2, 0, kMathWgmma}, "sm_90a").value_or(""), HasSubstr("ring of 3 slots"));
  EXPECT_THAT(why_not(h128, {64, 32, 384, 4, 0, kMathWgmma}, "sm_90a").value_or(""), HasSubstr("shared memory"));
  EXPECT_THAT(why_not(h128, {64, 64, 384, 2, 0, kMathWgmma}, "sm_90a").value_or(""), HasSubstr("shared memory"));
  EXPECT_THAT(why_not(h128, {64, 32, 256, 2, 0, kMathWgmma}, "sm_90a").value_or(""),
              HasSubstr("an fp8 cache takes math=wgmma at 384 or 512 threads"));
  EXPECT_THAT(why_not(h128, {64, 32, 384, 3, 0, kMathWgmmaSs}, "sm_90a").value_or(""), HasSubstr("bf16 only"));
  EXPECT_THAT(why_not(h128, decoded, "gfx90a").value_or(""), HasSubstr("needs sm_90a"));
  // Shared memory: the fp16 q tile, 3 fp16 tiles, 2 slots of 640-byte code rows, P, the row
  // reductions and two mbarriers a ring slot; the producer's registers against the math warps'.
  const auto g = mma_geometry(decoded, num::KvDtype::fp8_e4m3fn, 32);
  EXPECT_TRUE(g.decoded());
  EXPECT_EQ(g.shared_bytes(), 64 * 1152 + 3 * 32 * 1152 + 2 * 32 * 640 + 64 * 64 + 2 * 64 * 4 + 2 * 3 * 8);
  EXPECT_EQ(g.code_offset() % 1024, 0) << "the fp16 tiles' panels stay on wgmma's 1024-byte anchors";
  EXPECT_EQ(g.p_offset() % 1024, 0);
  EXPECT_LE(g.producer_registers() * 128 + g.value_registers() * 256, 65536 / 384 * 384);
  EXPECT_EQ(family().launch_info(to_params(h128), to_params(decoded)).shared_bytes, g.shared_bytes());
  // A bf16 cache on the same config keeps its ring as it was: no code slots.
  const auto bf16 = mma_geometry(decoded, num::KvDtype::bf16, 32);
  EXPECT_FALSE(bf16.decoded());
  EXPECT_EQ(bf16.shared_bytes(), 64 * 1152 + 3 * 32 * 1152 + 64 * 64 + 2 * 64 * 4 + 2 * 3 * 8);

  // Beside a softmax warpgroup (512 threads): the same tiles, 32 keys in a ring of 3; P goes into
  // the tiles' rope panels (no sP), and each slot has a rescale record and a third mbarrier.
  const Config softmax{64, 32, 512, 3, 0, kMathWgmma};
  EXPECT_EQ(why_not(h128, softmax, "sm_90a"), std::nullopt);
  EXPECT_THAT(why_not(h128, {64, 32, 512, 2, 0, kMathWgmma}, "sm_90a").value_or(""), HasSubstr("ring of 3 slots"));
  EXPECT_THAT(why_not(h128, {64, 32, 512, 4, 0, kMathWgmma}, "sm_90a").value_or(""), HasSubstr("shared memory"));
  EXPECT_THAT(why_not(h128, {64, 64, 512, 2, 0, kMathWgmma}, "sm_90a").value_or(""), HasSubstr("shared memory"));
  const auto s = mma_geometry(softmax, num::KvDtype::fp8_e4m3fnuz, 32);
  EXPECT_TRUE(s.decoded() && s.softmax_warpgroup());
  EXPECT_EQ(s.code_offset() % 1024, 0);
  EXPECT_EQ(s.shared_bytes(), family().launch_info(to_params(h128), to_params(softmax)).shared_bytes);
  EXPECT_EQ((s.producer_registers() + s.softmax_registers() + 2 * s.value_registers()) * 128, 65536)
      << "the producer, the softmax warpgroup and the two P V warpgroups share the block's file";
}

TEST(MlaDecodeFamily, WgmmaRunsOnSm90aOnlyAndFp8CachesOnlyWithItsProducer) {
  const Key h16{16, 1, true, num::KvDtype::bf16, 128};
  const Config wgmma{64, 32, 256, 4, 0, kMathWgmma};
  EXPECT_EQ(why_not(h16, wgmma, "sm_90a"), std::nullopt) << "64-row products serve 16 rows (not pruned as padding)";
  EXPECT_EQ(why_not(h16, {64, 64, 256, 2, 0, kMathWgmma}, "sm_90a"), std::nullopt) << "two 64-key tiles fit";
  EXPECT_THAT(why_not(h16, wgmma, "gfx90a").value_or(""), HasSubstr("needs sm_90a"));
  EXPECT_THAT(why_not(h16, wgmma, "sm_90").value_or(""), HasSubstr("needs sm_90a")) << "wgmma is an sm_90a feature";
  EXPECT_THAT(why_not({16, 1, true, num::KvDtype::fp8_e4m3fn, 128}, wgmma, "sm_90a").value_or(""),
              HasSubstr("bf16 only"));
  EXPECT_THAT(why_not(h16, {32, 32, 256, 4, 0, kMathWgmma}, "sm_90a").value_or(""), HasSubstr("64 rows"));
  EXPECT_THAT(why_not(h16, {64, 32, 128, 4, 0, kMathWgmma}, "sm_90a").value_or(""), HasSubstr("two math warpgroups"));
  EXPECT_THAT(why_not(h16, {64, 16, 256, 4, 0, kMathWgmma}, "sm_90a").value_or(""), HasSubstr("32 or 64"));
  EXPECT_THAT(why_not(h16, {64, 64, 256, 3, 0, kMathWgmma}, "sm_90a").value_or(""), HasSubstr("shared memory"));
  EXPECT_THAT(why_not(h16, {64, 32, 256, 3, 0, kMathWgmma}, "sm_90a").value_or(""), HasSubstr("ring of 4 slots"));
  // wgmma_ss has wgmma's limits, and its reasons name it.
  EXPECT_EQ(why_not(h16, {64, 64, 256, 2, 0, kMathWgmmaSs}, "sm_90a"), std::nullopt);
  EXPECT_EQ(why_not(h16, {64, 32, 256, 4, 0, kMathWgmmaSs}, "sm_90a"), std::nullopt);
  EXPECT_THAT(why_not(h16, {64, 32, 256, 4, 0, kMathWgmmaSs}, "gfx90a").value_or(""),
              HasSubstr("math=wgmma_ss needs sm_90a"));
  EXPECT_THAT(
      why_not({16, 1, true, num::KvDtype::fp8_e4m3fn, 128}, {64, 32, 256, 4, 0, kMathWgmmaSs}, "sm_90a").value_or(""),
      HasSubstr("math=wgmma_ss reads K as the cache holds it"));
  EXPECT_THAT(why_not(h16, {32, 32, 256, 4, 0, kMathWgmmaSs}, "sm_90a").value_or(""), HasSubstr("64 rows"));
  EXPECT_THAT(why_not(h16, {64, 64, 256, 3, 0, kMathWgmmaSs}, "sm_90a").value_or(""), HasSubstr("shared memory"));
  // The first warpgroup takes Q K^T over all keys and all 64 rows (warp w holds m-tile w); in
  // P V each warpgroup takes 256 dims, warp w holding m-tile w % 4.
  const auto g = mma_geometry({64, 64, 256, 2, 0, kMathWgmma}, num::KvDtype::bf16, 32);
  EXPECT_TRUE(g.valid());
  EXPECT_EQ(g.qk_warps(), 4);
  EXPECT_EQ(g.qk_m_tiles(), 1);
  EXPECT_EQ(g.qk_key_blocks(), 4);
  EXPECT_EQ(g.qk_key_warp_of(3), 0);
  EXPECT_EQ(g.qk_m_tile_of(3), 3);
  EXPECT_EQ(g.qk_chains(), 1);
  EXPECT_EQ(g.pv_m_tiles(), 1);
  EXPECT_EQ(g.pv_blocks(), 16);
  EXPECT_EQ(g.accumulators(), 64 * 256 / 128);
  // P is one fp16 term on wgmma (V meets it converted to fp16), two bf16 terms on mma.sync, and
  // wgmma's rows are unpadded (keys x 2 bytes, swizzled), so it takes less shared memory than
  // mma's P. (mma's 64-key tiles take 2 slots of 32 keys each: 4 slots hold wgmma's 2 tiles.)
  const auto mma = mma_geometry({64, 64, 256, 4, 0, kMathMma}, num::KvDtype::bf16, 32);
  EXPECT_EQ(g.p_terms(), 1);
  EXPECT_EQ(mma.p_terms(), 2);
  EXPECT_EQ(g.p_bytes(), 64 * 64 * 2);
  EXPECT_EQ(g.shared_bytes() + 2 * 64 * 144 - 64 * 128, mma.shared_bytes());
  // wgmma_ss: P as two bf16 terms, the second in the tile's rope panel (64 keys x 128 bytes, as
  // many as a term of 64 rows x 64 keys x 2 bytes), so it takes wgmma's shared memory.
  const auto ss = mma_geometry({64, 64, 256, 2, 0, kMathWgmmaSs}, num::KvDtype::bf16, 32);
  EXPECT_TRUE(ss.valid());
  EXPECT_EQ(ss.p_terms(), 2);
  EXPECT_EQ(ss.p_bytes(), 64 * 64 * 2);
  EXPECT_EQ(ss.shared_bytes(), g.shared_bytes());
  EXPECT_EQ(ss.pv_m_tiles(), 1);
  EXPECT_EQ(ss.accumulators(), g.accumulators());
  // pv_ss is a form of wgmma's P V: without qk_wgmma the geometry is invalid.
  mla_tile::MmaGeometry no_wgmma = mma;
  no_wgmma.pv_ss = 1;
  EXPECT_FALSE(no_wgmma.valid());
}

// math=wgmma at 384 threads: a third warpgroup, the producer, issues the copies (MmaGeometry::
// producer); the math warpgroups keep wgmma's layout, the copies spread over 128 threads, and two
// mbarriers per ring slot follow the reductions in shared memory.
TEST(MlaDecodeFamily, WgmmaTakesAProducerWarpgroupAt384Threads) {
  const Key h16{16, 4, true, num::KvDtype::bf16, 128};
  EXPECT_EQ(why_not(h16, {64, 64, 384, 2, 0, kMathWgmma}, "sm_90a"), std::nullopt);
  EXPECT_EQ(why_not(h16, {64, 32, 384, 4, 0, kMathWgmma}, "sm_90a"), std::nullopt);
  // Only math=wgmma has one: wgmma_ss, mma and SIMT at 384 threads are pruned, and say so.
  EXPECT_THAT(why_not(h16, {64, 64, 384, 2, 0, kMathWgmmaSs}, "sm_90a").value_or(""),
              AllOf(HasSubstr("two math warpgroups (256 threads)"), Not(HasSubstr("producer"))));
  for (const Config& other : {Config{64, 64, 384, 2, 0, kMathMma}, Config{64, 32, 384, 2, 0, kMathSimt}})
    EXPECT_THAT(why_not(h16, other, "sm_90a").value_or(""),
                HasSubstr("384 is math=wgmma's and wgmma_t's, with a producer"));
  EXPECT_THAT(why_not(h16, {64, 64, 384, 2, 0, kMathWgmma}, "gfx90a").value_or(""), HasSubstr("needs sm_90a"));
  const auto with = mma_geometry({64, 64, 384, 2, 0, kMathWgmma}, num::KvDtype::bf16, 32);
  const auto without = mma_geometry({64, 64, 256, 2, 0, kMathWgmma}, num::KvDtype::bf16, 32);
  EXPECT_TRUE(with.valid());
  EXPECT_TRUE(with.producer());
  EXPECT_FALSE(without.producer());
  EXPECT_EQ(with.math_threads(), 256);
  EXPECT_EQ(with.warps(), without.warps());
  EXPECT_EQ(with.accumulators(), without.accumulators());
  EXPECT_EQ(with.copy_threads(), 128);
  EXPECT_EQ(with.copy_keys_per_pass(), 128 / 8);
  EXPECT_EQ(with.copy_passes(), 64 / 16);
  EXPECT_EQ(without.copy_passes(), 64 / 32);
  EXPECT_EQ(with.q_chunks_per_thread(), without.q_chunks_per_thread());
  EXPECT_EQ(with.barrier_offset(), without.shared_bytes());
  EXPECT_EQ(with.shared_bytes(), without.shared_bytes() + 2 * 2 * 8);
  EXPECT_EQ(with.barrier_offset() % 8, 0) << "mbarriers are 8-byte words";
  EXPECT_LE(with.shared_bytes(), 227 * 1024);
  const LaunchInfo info = family().launch_info(to_params(h16), to_params(Config{64, 64, 384, 2, 0, kMathWgmma}));
  EXPECT_EQ(info.threads_per_block, 384);
  EXPECT_EQ(info.shared_bytes, with.shared_bytes());
  // The registers the kernel moves with setmaxnreg fill the block's file at 384 threads exactly.
  EXPECT_EQ(mla_tile::kMathRegisters * 256 + mla_tile::kProducerRegisters * 128, 65536 / 384 / 8 * 8 * 384);
  // 384 threads of another layout are not a producer's: wgmma_ss, or other warpgroups.
  EXPECT_FALSE(mma_geometry({64, 64, 384, 2, 0, kMathWgmmaSs}, num::KvDtype::bf16, 32).valid());
  EXPECT_FALSE(mma_geometry({64, 64, 640, 2, 0, kMathWgmma}, num::KvDtype::bf16, 32).valid());
}

// math=wgmma at 512 threads: a softmax warpgroup (Q K^T and the softmax, a tile ahead), two P V
// warpgroups and the producer. P goes into each tile's rope panel, so there is no sP; a rescale
// record and a third mbarrier (ready) per ring slot follow the reductions.
TEST(MlaDecodeFamily, WgmmaTakesASoftmaxWarpgroupAt512Threads) {
  const Key h16{16, 4, true, num::KvDtype::bf16, 128};
  EXPECT_EQ(why_not(h16, {64, 64, 512, 2, 0, kMathWgmma}, "sm_90a"), std::nullopt);
  EXPECT_EQ(why_not(h16, {64, 32, 512, 4, 0, kMathWgmma}, "sm_90a"), std::nullopt);
  EXPECT_THAT(why_not(h16, {64, 32, 512, 2, 0, kMathWgmma}, "sm_90a").value_or(""), HasSubstr("ring of 3 slots"));
  // Only math=wgmma has one (its fp8 tiles: WgmmaDecodesFp8CachesInItsProducer).
  EXPECT_THAT(why_not(h16, {64, 64, 512, 2, 0, kMathWgmmaSs}, "sm_90a").value_or(""),
              HasSubstr("two math warpgroups (256 threads)"));
  EXPECT_THAT(
      why_not({16, 4, true, num::KvDtype::fp8_e4m3fn, 128}, {64, 32, 512, 3, 0, kMathWgmmaSs}, "sm_90a").value_or(""),
      HasSubstr("bf16 only"));
  EXPECT_THAT(why_not(h16, {64, 64, 128, 2, 0, kMathWgmma}, "sm_90a").value_or(""),
              HasSubstr("or 512 with a producer and a softmax warpgroup"));
  const auto with = mma_geometry({64, 64, 512, 2, 0, kMathWgmma}, num::KvDtype::bf16, 32);
  const auto producer = mma_geometry({64, 64, 384, 2, 0, kMathWgmma}, num::KvDtype::bf16, 32);
  EXPECT_TRUE(with.valid());
  EXPECT_TRUE(with.producer());
  EXPECT_TRUE(with.softmax_warpgroup());
  EXPECT_FALSE(producer.softmax_warpgroup());
  EXPECT_EQ(with.math_threads(), 384);
  EXPECT_EQ(with.copy_threads(), 128);
  EXPECT_EQ(with.pv_warps(), 8);
  EXPECT_EQ(with.pv_blocks(), producer.pv_blocks());
  EXPECT_EQ(with.accumulators(), producer.accumulators());
  EXPECT_EQ(with.copy_passes(), producer.copy_passes());
  EXPECT_EQ(with.p_bytes(), 0);
  EXPECT_EQ(with.reduce_offset(), with.p_offset());
  EXPECT_EQ(with.record_offset(), with.reduce_offset() + 4 * 64 * 4);
  EXPECT_EQ(with.barrier_offset(), with.record_offset() + 2 * with.record_bytes());
  EXPECT_EQ(with.shared_bytes(), with.barrier_offset() + 3 * 2 * 8);
  EXPECT_EQ(with.barrier_offset() % 8, 0) << "mbarriers are 8-byte words";
  EXPECT_EQ(mma_geometry({64, 32, 512, 4, 0, kMathWgmma}, num::KvDtype::bf16, 32).barrier_offset() % 8, 0);
  EXPECT_LE(with.shared_bytes(), 227 * 1024);
  const LaunchInfo info = family().launch_info(to_params(h16), to_params(Config{64, 64, 512, 2, 0, kMathWgmma}));
  EXPECT_EQ(info.threads_per_block, 512);
  EXPECT_EQ(info.shared_bytes, with.shared_bytes());
  // setmaxnreg's counts fill at most the block's file, 128 registers a thread at 512 threads.
  for (int keys : {32, 64}) {
    const auto g = mma_geometry({64, keys, 512, 2, 0, kMathWgmma}, num::KvDtype::bf16, 32);
    EXPECT_LE((g.producer_registers() + g.softmax_registers() + 2 * g.value_registers()) * 128, 65536) << keys;
  }
  EXPECT_EQ(producer.producer_registers(), mla_tile::kProducerRegisters);
  EXPECT_EQ(producer.value_registers(), mla_tile::kMathRegisters);
}

// math=wgmma_t at 384 threads: its two math warpgroups and a producer that fills both rings.
TEST(MlaDecodeFamily, WgmmaTTakesAProducerWarpgroupAt384Threads) {
  const Key fp8{16, 1, true, num::KvDtype::fp8_e4m3fn, 128};
  EXPECT_EQ(why_not(fp8, {16, 64, 384, 2, 0, kMathWgmmaT}, "sm_90a"), std::nullopt);
  EXPECT_THAT(why_not(fp8, {16, 64, 384, 3, 0, kMathWgmmaT}, "sm_90a").value_or(""), HasSubstr("shared memory"));
  EXPECT_THAT(why_not(fp8, {16, 64, 512, 2, 0, kMathWgmmaT}, "sm_90a").value_or(""),
              HasSubstr("or two and a producer (384)"));
  const auto with = transposed_geometry({16, 64, 384, 2, 0, kMathWgmmaT}, num::KvDtype::fp8_e4m3fn);
  const auto without = transposed_geometry({16, 64, 256, 2, 0, kMathWgmmaT}, num::KvDtype::fp8_e4m3fn);
  EXPECT_TRUE(with.valid());
  EXPECT_TRUE(with.producer());
  EXPECT_FALSE(without.producer());
  EXPECT_EQ(with.warpgroups(), 2);
  EXPECT_EQ(with.barrier_offset(), without.shared_bytes());
  EXPECT_EQ(with.shared_bytes(), without.shared_bytes() + 2 * 2 * 2 * 8) << "full and empty, per slot of both rings";
  EXPECT_EQ(with.barrier_offset() % 8, 0);
  const LaunchInfo info = family().launch_info(to_params(fp8), to_params(Config{16, 64, 384, 2, 0, kMathWgmmaT}));
  EXPECT_EQ(info.threads_per_block, 384);
  EXPECT_EQ(info.shared_bytes, with.shared_bytes());
}

TEST(MlaDecodeFamily, MmaConfigsThatFitAreFeasible) {
  const Key h16{16, 1, true, num::KvDtype::bf16, 128};
  // 5 slots of 32 keys: a 64-key tile in compute, one and a half in flight.
  EXPECT_EQ(why_not(h16, {16, 64, 128, 5, 0, kMathMma}, "sm_90a"), std::nullopt);
  EXPECT_EQ(why_not(h16, {16, 32, 128, 5, 0, kMathMma}, "sm_90a"), std::nullopt);
  EXPECT_EQ(why_not({128, 1, true, num::KvDtype::fp8_e4m3fn, 128}, {64, 32, 256, 7, 0, kMathMma}, "sm_90a"),
            std::nullopt);
  // gfx90a's 64 KiB hold a ring of 16-key tiles, and its 64-wide waves run one warp per CTA.
  EXPECT_EQ(why_not(h16, {16, 16, 64, 2, 0, kMathMma}, "gfx90a"), std::nullopt);
}

TEST(MlaDecodeFamily, TilesOf128KeysAreForTheMatrixCoresFp8Rings) {
  const Key fp8{16, 1, true, num::KvDtype::fp8_e4m3fn, 128};
  const Key bf16{16, 1, true, num::KvDtype::bf16, 128};
  // Ten 20 KiB slots of 32 keys' codes (two tiles and a half) fit next to q; the 8 slots of two
  // bf16 tiles take 288 KiB.
  EXPECT_EQ(why_not(fp8, {16, 128, 256, 10, 0, kMathMma}, "sm_90a"), std::nullopt);
  EXPECT_THAT(why_not(fp8, {16, 128, 256, 9, 0, kMathMma}, "sm_90a").value_or(""), HasSubstr("ring of 10 slots"));
  EXPECT_THAT(why_not(fp8, {16, 128, 256, 7, 0, kMathMma}, "sm_90a").value_or(""),
              HasSubstr("ring of 8..10 slots of 32 keys"));
  EXPECT_THAT(why_not(bf16, {16, 128, 256, 8, 0, kMathMma}, "sm_90a").value_or(""), HasSubstr("shared memory"));
  EXPECT_THAT(why_not(fp8, {16, 128, 256, 1, 0, kMathSimt}, "sm_90a").value_or(""),
              HasSubstr("keys=128 is math=mma's"));
  EXPECT_THAT(
      unrunnable({16, 256, 256, 2, 0, kMathMma}, num::KvDtype::fp8_e4m3fn, target_limits("sm_90a")).value_or(""),
      HasSubstr("keys=256"));
  // All 8 warps take a key block in Q K^T.
  EXPECT_EQ(mma_geometry({16, 128, 256, 9, 0, kMathMma}, num::KvDtype::fp8_e4m3fn, 32).qk_warps(), 8);
}

TEST(MlaDecodeFamily, PrunesMmaConfigsThatCannotRunAndSaysWhy) {
  const Key h128{128, 1, true, num::KvDtype::bf16, 128};
  EXPECT_THAT(why_not(h128, {16, 64, 128, 1, 0, kMathMma}, "sm_90a").value_or(""), HasSubstr("stages=1"));
  EXPECT_THAT(why_not(h128, {16, 64, 128, 3, 0, kMathSimt}, "sm_90a").value_or(""), HasSubstr("stages=3"));
  // q (16 x 1152 bytes) and 6 slots of 32 keys x 1152 bytes: 239 KiB > 227 KiB.
  EXPECT_THAT(why_not(h128, {16, 64, 128, 6, 0, kMathMma}, "sm_90a").value_or(""), HasSubstr("shared memory"));
  // A 64-key tile takes 2 slots of 32 keys, and the ring holds two tiles at least.
  EXPECT_THAT(why_not(h128, {16, 64, 128, 3, 0, kMathMma}, "sm_90a").value_or(""),
              HasSubstr("stages=3: math=mma streams keys=64 tiles through a ring of 4..10 slots of 32 keys"));
  EXPECT_THAT(why_not(h128, {16, 32, 128, 1, 0, kMathMma}, "sm_90a").value_or(""),
              HasSubstr("ring of 2..10 slots of 32 keys"));
  // 32 rows x 512 dims over 64 threads = 256 accumulators per thread.
  EXPECT_THAT(why_not(h128, {32, 32, 64, 4, 0, kMathMma}, "sm_90a").value_or(""), HasSubstr("registers"));
  EXPECT_THAT(why_not(h128, {16, 32, 64, 2, 0, kMathMma}, "gfx90a").value_or(""), HasSubstr("shared memory"))
      << "two 32-key tiles and q exceed 64 KiB";
  // unrunnable() is infeasible() without the rules about speed.
  EXPECT_THAT(unrunnable({16, 64, 128, 6, 0, kMathMma}, num::KvDtype::bf16, target_limits("sm_90a")).value_or(""),
              HasSubstr("shared memory"));
  EXPECT_EQ(unrunnable({16, 32, 128, 2, 0, kMathMma}, num::KvDtype::bf16, target_limits("sm_90a")), std::nullopt);
}

TEST(MlaDecodeFamily, PrunesMmaConfigsThatASiblingBeats) {
  const Key h128{128, 1, true, num::KvDtype::bf16, 128};
  // Each pruned config next to the sibling that beats it, which stays feasible.
  EXPECT_THAT(why_not(h128, {16, 16, 128, 4, 0, kMathMma}, "sm_90a").value_or(""), HasSubstr("keys=16"));
  EXPECT_EQ(why_not(h128, {16, 32, 128, 5, 0, kMathMma}, "sm_90a"), std::nullopt);
  EXPECT_THAT(why_not(h128, {16, 32, 128, 3, 0, kMathMma}, "sm_90a").value_or(""), HasSubstr("ring of 4 slots"));
  EXPECT_THAT(why_not(h128, {16, 32, 128, 4, 0, kMathMma}, "sm_90a").value_or(""), HasSubstr("ring of 5 slots"));
  EXPECT_THAT(why_not(h128, {16, 32, 256, 5, 0, kMathMma}, "sm_90a").value_or(""), HasSubstr("sit Q K^T out"));
  EXPECT_EQ(why_not(h128, {16, 64, 256, 5, 0, kMathMma}, "sm_90a"), std::nullopt) << "4 of 8 warps in Q K^T";
  EXPECT_THAT(why_not(h128, {16, 64, 256, 4, 0, kMathMma}, "sm_90a").value_or(""), HasSubstr("ring of 5 slots"));
  // A ring that lets two CTAs share an SM is kept next to the deepest ring of one CTA: two slots
  // of 32 keys (93 KiB, and 128 threads' registers twice) where a third slot leaves room for one.
  EXPECT_EQ(why_not(h128, {16, 32, 128, 2, 0, kMathMma}, "sm_90a"), std::nullopt);
  EXPECT_THAT(why_not(h128, {16, 32, 256, 2, 0, kMathMma}, "sm_90a").value_or(""), HasSubstr("ring of 3 slots"))
      << "256 threads of up to 255 registers leave room for one CTA";
  const Key fp8{16, 1, true, num::KvDtype::fp8_e4m3fn, 128};
  EXPECT_EQ(why_not(fp8, {16, 32, 128, 4, 0, kMathMma}, "sm_90a"), std::nullopt) << "4 slots of fp8 codes: 99 KiB";
  EXPECT_THAT(why_not(fp8, {16, 32, 128, 3, 0, kMathMma}, "sm_90a").value_or(""), HasSubstr("ring of 4 slots"));
  EXPECT_THAT(why_not(h128, {16, 16, 128, 5, 0, kMathMma}, "sm_90a").value_or(""), HasSubstr("keys=16"))
      << "two CTAs of 32-key tiles fit as well";
  // Where 32-key tiles do not fit (gfx90a), 16-key tiles are what there is.
  EXPECT_EQ(why_not(h128, {16, 16, 64, 2, 0, kMathMma}, "gfx90a"), std::nullopt);
  EXPECT_THAT(why_not(h128, {16, 16, 128, 2, 0, kMathMma}, "sm_90a").value_or(""), HasSubstr("keys=16"));
  // 64 threads: four CTAs of 16-key rings share an SM where two of 32-key rings would.
  EXPECT_EQ(why_not(h128, {16, 16, 64, 2, 0, kMathMma}, "sm_90a"), std::nullopt);
}

TEST(MlaDecodeFamily, MmaLaunchInfoMatchesTheKernelGeometry) {
  const Key bf16{16, 1, false, num::KvDtype::bf16, 1};
  const LaunchInfo info = family().launch_info(to_params(bf16), to_params(Config{16, 64, 128, 5, 0, kMathMma}));
  EXPECT_EQ(info.threads_per_block, 128);
  // q and 5 ring slots of 32 rows of 1152 bytes, P as two bf16 terms (two matrices, rows of
  // 64 x 2 + 16 bytes), and one fp32 per (key block, row).
  EXPECT_EQ(info.shared_bytes, 16 * 1152 + 5 * 32 * 1152 + 2 * 16 * 144 + 4 * 16 * 4);
  // fp8: ring slots of codes in rows padded to 640 bytes (decoded in registers, no bf16 tile), and
  // P as one fp16 term.
  const Key fp8{16, 1, false, num::KvDtype::fp8_e4m3fn, 1};
  EXPECT_EQ(family().launch_info(to_params(fp8), to_params(Config{16, 64, 128, 6, 0, kMathMma})).shared_bytes,
            16 * 1152 + 6 * 32 * 640 + 16 * 144 + 4 * 16 * 4);
  // wgmma's slot is its whole tile; P is one fp16 term, 64 rows of 64 keys x 2 bytes.
  EXPECT_EQ(family().launch_info(to_params(bf16), to_params(Config{64, 64, 256, 2, 0, kMathWgmma})).shared_bytes,
            64 * 1152 + 2 * 64 * 1152 + 64 * 128 + 4 * 64 * 4);
  // The warp size changes the registers, not the shared memory that launch_info reports.
  EXPECT_EQ(mma_geometry({16, 64, 128, 5, 0, kMathMma}, num::KvDtype::bf16, 64).shared_bytes(), info.shared_bytes);
  EXPECT_NE(mma_geometry({16, 64, 128, 5, 0, kMathMma}, num::KvDtype::bf16, 64).live_registers(),
            mma_geometry({16, 64, 128, 5, 0, kMathMma}, num::KvDtype::bf16, 32).live_registers());
}

// Q K^T unrolls fully where the accumulators leave the registers for the operands' addresses
// (MmaGeometry::qk_unrolled, from NVRTC's spill reports and the H200's timings): rows=16 with 8
// warps in both formats; rows=16 with 4 warps (64 + 24 accumulators) in bf16 but not fp8; not
// rows=64 (128 O accumulators). Each case decides on one side of a threshold.
TEST(MlaDecodeFamily, QkUnrollsFullyWhereTheAccumulatorsLeaveRoom) {
  const auto unrolled = [](Config c, num::KvDtype kv) { return mma_geometry(c, kv, 32).qk_unrolled(); };
  const Config rows16_w8{16, 64, 256, 5, 0, kMathMma}, rows16_w4{16, 32, 128, 4, 0, kMathMma};
  const Config rows64{64, 32, 256, 4, 0, kMathMma};
  EXPECT_EQ(mma_geometry(rows16_w4, num::KvDtype::bf16, 32).accumulators() +
                mma_geometry(rows16_w4, num::KvDtype::bf16, 32).s_accumulators(),
            64 + 24);
  EXPECT_TRUE(unrolled(rows16_w8, num::KvDtype::bf16));
  EXPECT_TRUE(unrolled(rows16_w8, num::KvDtype::fp8_e4m3fn));
  EXPECT_TRUE(unrolled(rows16_w4, num::KvDtype::bf16));
  EXPECT_FALSE(unrolled(rows16_w4, num::KvDtype::fp8_e4m3fn));
  EXPECT_FALSE(unrolled(rows64, num::KvDtype::bf16));
  EXPECT_FALSE(unrolled(rows64, num::KvDtype::fp8_e4m3fn));
}

TEST(MlaDecodeFamily, HeadsAndBlockLengthAreCoveredByLargerTunings) {
  EXPECT_TRUE(family().covers_larger("heads"));
  EXPECT_TRUE(family().covers_larger("block_len"));
  EXPECT_FALSE(family().covers_larger("causal"));
  EXPECT_FALSE(family().covers_larger("kv_dtype"));
}

TEST(MlaDecodeFamily, VerifyShapesCoverTheEdges) {
  const Key key{12, 3, true, num::KvDtype::bf16, 128};
  const auto shapes = family().verify_shapes(to_params(key));
  std::set<int64_t> pages;
  bool len_is_block = false, ragged = false, not_tile_multiple = false;
  for (const Params& s : shapes) {
    validate(s, family().shape_fields(), "verify shape");
    pages.insert(s.at("page_size"));
    len_is_block |= s.at("ctx") == key.block_len;
    ragged |= s.at("ragged") == 1 && s.at("batch") >= 3;
    not_tile_multiple |= s.at("ctx") % 16 != 0 && s.at("ctx") > 64;
  }
  EXPECT_EQ(pages, (std::set<int64_t>{1, 16, 64, 1536}));
  EXPECT_TRUE(len_is_block);
  EXPECT_TRUE(ragged);
  EXPECT_TRUE(not_tile_multiple);
}

TEST(MlaDecodeInputs, AreDeterministicRaggedAndPaged) {
  const Key key{4, 3, true, num::KvDtype::fp8_e4m3fn, 1};
  const Shape shape{50, 4, 5, true};
  const HostProblem p = make_problem(key, shape, 42);
  EXPECT_EQ(p.q, make_problem(key, shape, 42).q);
  EXPECT_NE(p.q, make_problem(key, shape, 43).q);
  ASSERT_EQ(p.kv_lens.size(), 5u);
  EXPECT_EQ(p.kv_lens[0], 50);
  EXPECT_EQ(p.kv_lens[1], 3);
  for (int len : p.kv_lens) EXPECT_TRUE(len >= 3 && len <= 50) << len;
  EXPECT_EQ(p.kv_scale, kFp8KvScale);
  EXPECT_EQ(p.max_pages, 13);
  // Pages are a permutation: request 0's pages are not 0, 1, 2, ... and unused entries are -1.
  std::vector<int32_t> first(p.block_table.begin(), p.block_table.begin() + 13);
  std::vector<int32_t> sorted = first;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_NE(first, sorted);
  EXPECT_EQ(p.block_table[1 * 13 + 1], -1) << "request 1 (3 tokens) uses one page of 4";
  EXPECT_NO_THROW(reference(p)) << "the reference accepts the layout";
  EXPECT_THROW(make_problem(key, Shape{2, 4, 1, false}, 1), Error) << "ctx shorter than the block";
}

TEST(MlaDecodeInputs, Bf16CachesCarryNoScale) {
  const HostProblem p = make_problem({4, 1, false, num::KvDtype::bf16, 3}, {20, 16, 0, false}, 1);
  EXPECT_EQ(p.batch, 3) << "batch 0 takes the key's bucket";
  EXPECT_EQ(p.kv_scale, 1.f);
  EXPECT_EQ(p.kv_cache.size() % (16 * 576 * 2), 0u);
}

TEST(MlaDecodeSplitPolicy, SplitsSmallBatchesOfLongContexts) {
  const SplitInputs small{1, 1, 8192, 132, 2, 16};
  EXPECT_EQ(num_splits(small), kMaxSplits) << "264 CTAs wanted, capped";
  SplitInputs never = small;
  never.ctas_per_unit = 0;
  EXPECT_EQ(num_splits(never), 1);
  SplitInputs full = small;
  full.batch = 512;
  EXPECT_EQ(num_splits(full), 1) << "a full batch fills the GPU without splitting";
  SplitInputs some = small;
  some.batch = 32;
  some.row_tiles = 2;
  EXPECT_EQ(num_splits(some), 4) << "264 / 64 rounded down: no CTA past the second wave";
  some.ctas_per_unit = 1;
  EXPECT_EQ(num_splits(some), 2) << "132 / 64 rounded down";
  some.batch = 67;
  EXPECT_EQ(num_splits(some), 1) << "134 CTAs already pass one wave";
  SplitInputs short_ctx = small;
  short_ctx.max_kv_len = 100;
  EXPECT_EQ(num_splits(short_ctx), 3) << "two tiles of 16 keys per split";
  short_ctx.max_kv_len = 1;
  EXPECT_EQ(num_splits(short_ctx), 1);
}

}  // namespace
}  // namespace ktune::mla
