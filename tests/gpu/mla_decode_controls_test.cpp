// Proofs that the mla_decode verification can fail, next to the controls that pass: a causal
// kernel disagrees with the non-causal reference (and vice versa) once L > 1, a planted
// off-by-one in the mask is rejected, unwritten outputs are caught; plus the paths the
// correctness sweep does not take (rotated input copies, the family's own instances and split
// policy, a timing-size launch, scores whose maximum jumps late in the context). Every control
// runs for every math path (SIMT, matrix cores, and on sm_90a wgmma and wgmma_ss, whose cases
// take the bf16 cache where they name another, and wgmma_t and wgmma with its producer decoding
// (wgmma_decoded, and beside a softmax warpgroup wgmma_decoded_softmax), whose take an fp8 one).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "kernels/input_cache.hpp"
#include "kernels/mla_decode/inputs.hpp"
#include "kernels/mla_decode/reference.hpp"
#include "mla_decode_device.hpp"
#include "verify/numeric.hpp"

namespace ktune::mla::gpu_test {
namespace {

// Small enough for every target's shared memory and registers: per math path, the config of the
// small checks and the one of the timing-size launch. The mma ring of 3 tiles of 16 keys wraps
// around several times over 77 keys.
// The cache types a path reads: wgmma and wgmma_ss read bf16 (and wgmma at 384 and 512 threads
// fp8, its producer decoding the tiles: wgmma_decoded, wgmma_decoded_softmax), wgmma_t fp8 only.
enum class Caches { kAll, kBf16, kFp8 };
struct MathConfigs {
  const char* name;
  Config small, timing;
  Caches caches = Caches::kAll;
};
constexpr MathConfigs kMathConfigs[] = {
    {"simt", {16, 16, 256, 1, 0, kMathSimt}, {16, 32, 256, 1, 1, kMathSimt}},
    {"mma", {16, 16, 64, 3, 0, kMathMma}, {16, 32, 128, 4, 1, kMathMma}},
    {"wgmma", {64, 32, 256, 4, 0, kMathWgmma}, {64, 64, 256, 2, 1, kMathWgmma}, Caches::kBf16},
    {"wgmma_producer", {64, 32, 384, 4, 0, kMathWgmma}, {64, 64, 384, 2, 1, kMathWgmma}, Caches::kBf16},
    {"wgmma_decoded", {64, 32, 384, 3, 0, kMathWgmma}, {64, 32, 384, 2, 1, kMathWgmma}, Caches::kFp8},
    {"wgmma_decoded_softmax", {64, 32, 512, 3, 0, kMathWgmma}, {64, 32, 512, 2, 1, kMathWgmma}, Caches::kFp8},
    {"wgmma_softmax", {64, 32, 512, 4, 0, kMathWgmma}, {64, 64, 512, 2, 1, kMathWgmma}, Caches::kBf16},
    {"wgmma_ss", {64, 32, 256, 4, 0, kMathWgmmaSs}, {64, 64, 256, 2, 1, kMathWgmmaSs}, Caches::kBf16},
    {"wgmma_t", {16, 64, 256, 2, 0, kMathWgmmaT}, {16, 64, 128, 5, 1, kMathWgmmaT}, Caches::kFp8},
    {"wgmma_t_producer", {16, 64, 384, 2, 0, kMathWgmmaT}, {16, 64, 384, 2, 1, kMathWgmmaT}, Caches::kFp8},
    {"wgmma_t_rows32", {32, 64, 256, 2, 0, kMathWgmmaT}, {32, 64, 128, 5, 1, kMathWgmmaT}, Caches::kFp8},
};

// Without a device: every path runs on sm_90a, so a config it cannot run (the producer's two rings
// of 3 fp8 tiles of 64 keys: 244,960 bytes of shared memory) is a control that fails only on the GPU.
TEST(MlaDecodeControlsConfigs, EachRunsOnSm90aForTheCacheTypesOfItsPath) {
  const TargetLimits& sm90a = target_limits("sm_90a");
  for (const MathConfigs& m : kMathConfigs)
    for (num::KvDtype dtype : {num::KvDtype::bf16, num::KvDtype::fp8_e4m3fn}) {
      if ((m.caches == Caches::kBf16 && dtype != num::KvDtype::bf16) ||
          (m.caches == Caches::kFp8 && dtype == num::KvDtype::bf16))
        continue;
      for (const Config& c : {m.small, m.timing})
        if (auto why = mla::unrunnable(c, dtype, sm90a)) ADD_FAILURE() << m.name << ": " << *why;
    }
}

// Lengths 77, L and one in between: the mask matters most for the request of kv_len == L.
constexpr Shape kShape{77, 16, 3, true};

class MlaDecodeControls : public WithDevice<testing::TestWithParam<MathConfigs>> {
 protected:
  void SetUp() override {
    WithDevice::SetUp();
    if (IsSkipped()) return;
    if (auto why = unrunnable(small(), kv(num::KvDtype::bf16)))
      GTEST_SKIP() << GetParam().name << " does not run on " << device().ctx->info().arch << ": " << *why;
  }
  static Config small() { return GetParam().small; }
  // The cache type a case asks for, or bf16 on a path that reads no fp8, or fp8_e4m3fn for bf16 on
  // one that reads no bf16.
  static num::KvDtype kv(num::KvDtype wanted) {
    switch (GetParam().caches) {
      case Caches::kBf16: return num::KvDtype::bf16;
      case Caches::kFp8: return wanted == num::KvDtype::bf16 ? num::KvDtype::fp8_e4m3fn : wanted;
      default: return wanted;
    }
  }

  Verdict run(const Key& key, const Variant& variant, int splits = 1, uint64_t seed = 7) {
    kernels().prepare({variant});
    DeviceInstance instance(*device().ctx, make_problem(key, kShape, seed), true, 1, 3);
    instance.poison();
    instance.launch_with_splits(kernels().candidate(variant), 0, splits);
    return instance.verify();
  }
};

TEST_P(MlaDecodeControls, CausalAndNonCausalKernelsDisagreeForBlocksOfTwoOrMore) {
  for (num::KvDtype dtype : {num::KvDtype::bf16, num::KvDtype::fp8_e4m3fn})
    for (int block_len : {2, 4, 16})
      for (bool causal : {false, true}) {
        const Key key{8, block_len, causal, kv(dtype), 1};
        const std::string what =
            fmt::format("L={} reference causal={} kv={}", block_len, causal, static_cast<int>(dtype));
        EXPECT_TRUE(run(key, {small(), key.kv_dtype, causal, 0}).ok) << what << ": the matching kernel must pass";
        const Verdict wrong = run(key, {small(), key.kv_dtype, !causal, 0});
        EXPECT_FALSE(wrong.ok) << what << ": the kernel of the other mask passed";
      }
}

TEST_P(MlaDecodeControls, MasksAgreeForSingleTokenBlocks) {
  // With L = 1 the causal row sees every key: both kernels must pass, so that the disagreement
  // above is the mask's and nothing else's.
  const Key key{8, 1, false, kv(num::KvDtype::bf16), 1};
  EXPECT_TRUE(run(key, {small(), key.kv_dtype, false, 0}).ok);
  EXPECT_TRUE(run(key, {small(), key.kv_dtype, true, 0}).ok);
}

TEST_P(MlaDecodeControls, PlantedOffByOneIsRejected) {
  for (bool causal : {false, true})
    for (int splits : {1, 3}) {
      const Key key{12, 4, causal, kv(num::KvDtype::fp8_e4m3fn), 1};
      EXPECT_TRUE(run(key, {small(), key.kv_dtype, causal, 0}, splits).ok) << "control, causal=" << causal;
      EXPECT_FALSE(run(key, {small(), key.kv_dtype, causal, -1}, splits).ok)
          << "a mask one key short passed, causal=" << causal << " splits=" << splits;
    }
  // One key too many is visible only under the causal mask (kv_len caps the other).
  const Key key{12, 4, true, kv(num::KvDtype::bf16), 1};
  EXPECT_FALSE(run(key, {small(), key.kv_dtype, true, 1}).ok) << "a causal mask one key long passed";
}

TEST_P(MlaDecodeControls, PoisonedOutputsFailUntilAKernelWritesThem) {
  const Variant variant{small(), kv(num::KvDtype::bf16), true, 0};
  kernels().prepare({variant});
  DeviceInstance instance(*device().ctx, make_problem({8, 2, true, variant.kv_dtype, 1}, kShape, 3), true, 1, 1);
  instance.poison();
  const Verdict unwritten = instance.verify();
  EXPECT_FALSE(unwritten.ok);
  EXPECT_NE(unwritten.detail.find("NaN"), std::string::npos) << unwritten.detail;
  instance.launch(kernels().candidate(variant), 0);
  EXPECT_TRUE(instance.verify().ok);
}

TEST_P(MlaDecodeControls, EveryRotationHoldsTheSameInputs) {
  const Variant variant{small(), kv(num::KvDtype::fp8_e4m3fnuz), false, 0};
  kernels().prepare({variant});
  DeviceInstance instance(*device().ctx, make_problem({16, 3, false, variant.kv_dtype, 1}, kShape, 5), true, 3, 1);
  ASSERT_EQ(instance.rotations(), 3);
  for (int r = 0; r < instance.rotations(); ++r) {
    instance.poison();
    instance.launch(kernels().candidate(variant), r);
    const Verdict v = instance.verify();
    EXPECT_TRUE(v.ok) << "rotation " << r << ": " << v.detail;
  }
}

TEST_P(MlaDecodeControls, FamilyInstancesPassEveryVerifyShapeAndSplitOne) {
  const Family& family = mla_decode_family();
  const Key key{16, 2, true, kv(num::KvDtype::fp8_e4m3fn), 8};
  Config config = small();
  config.split = 4;
  const Variant variant{config, key.kv_dtype, key.causal, 0};
  kernels().prepare({variant});
  bool some_shape_split = false;
  for (const Params& shape : family.verify_shapes(to_params(key))) {
    auto instance = family.instantiate(*device().ctx, to_params(key), shape, 11, true);
    auto* mla_instance = dynamic_cast<DeviceInstance*>(instance.get());
    ASSERT_NE(mla_instance, nullptr);
    some_shape_split |= mla_instance->splits_for(config) > 1;
    instance->poison();
    instance->launch(kernels().candidate(variant), 0);
    const Verdict v = instance->verify();
    EXPECT_TRUE(v.ok) << shape.canonical() << " splits=" << mla_instance->splits_for(config) << ": " << v.detail;
    EXPECT_GT(instance->traffic().bytes, 0);
    EXPECT_GT(instance->traffic().flops, 0);
  }
  EXPECT_TRUE(some_shape_split) << "no verify shape exercises the split policy";
}

// Keys from `first` on point along head 0's query (sign(q) times `magnitude` in every dim), so
// that its scores jump far past the maximum of the keys before them: a kernel that keeps its
// row maxima lazily (wgmma_t: P against the running maximum until a score passes it by 8 in the
// exp2 domain) must take its exact path in the middle of the context and rescale what it summed.
void raise_late_keys(HostProblem& p, int first, float magnitude) {
  for (int b = 0; b < p.batch; ++b) {
    const uint16_t* q0 = p.q.data() + static_cast<size_t>(b) * p.block_len * p.heads * kHeadDim;
    for (int j = first; j < p.kv_lens[b]; ++j) {
      const size_t row =
          static_cast<size_t>(p.block_table[static_cast<size_t>(b) * p.max_pages + j / p.page_size]) * p.page_size +
          j % p.page_size;
      for (int d = 0; d < kHeadDim; ++d)
        set_cache_element(p, row * kHeadDim + d, num::bf16_to_f32(q0[d]) < 0 ? -magnitude : magnitude);
    }
  }
}

// Head 0's largest score (exp2 domain, as the kernels scale it) over keys [begin, end) of request b.
double max_score(const HostProblem& p, int b, int begin, int end) {
  const std::vector<float> keys = request_keys(p, b);
  const uint16_t* q0 = p.q.data() + static_cast<size_t>(b) * p.block_len * p.heads * kHeadDim;
  double best = -INFINITY;
  for (int j = begin; j < end; ++j) {
    double dot = 0;
    for (int d = 0; d < kHeadDim; ++d) dot += num::bf16_to_f32(q0[d]) * keys[static_cast<size_t>(j) * kHeadDim + d];
    best = std::max(best, dot * p.softmax_scale * p.kv_scale / std::log(2.0));
  }
  return best;
}

TEST_P(MlaDecodeControls, ScoresRisingLateInTheContextRescaleWhatCameBefore) {
  const Variant variant{small(), kv(num::KvDtype::fp8_e4m3fn), false, 0};
  kernels().prepare({variant});
  constexpr int kFirstRaised = 600;  // past the first tiles of every path, of either warpgroup
  for (int splits : {1, 2}) {
    HostProblem p = make_problem({16, 1, false, variant.kv_dtype, 2}, Shape{1013, 64, 2, false}, 13);
    raise_late_keys(p, kFirstRaised, variant.kv_dtype == num::KvDtype::bf16 ? 0.75f : 2.5f);
    // The data do what the test says: head 0's scores rise by far more than 8 at the first raised
    // key.
    for (int b = 0; b < p.batch; ++b)
      ASSERT_GT(max_score(p, b, kFirstRaised, p.kv_lens[b]) - max_score(p, b, 0, kFirstRaised), 16.0);
    DeviceInstance instance(*device().ctx, std::move(p), true, 1, 2);
    instance.poison();
    instance.launch_with_splits(kernels().candidate(variant), 0, splits);
    const Verdict v = instance.verify();
    EXPECT_TRUE(v.ok) << "splits=" << splits << ": " << v.detail;
  }
}

TEST_P(MlaDecodeControls, TimingShapeLaunchesOnEveryRotation) {
  const Family& family = mla_decode_family();
  const Key key{128, 4, true, kv(num::KvDtype::fp8_e4m3fn), 32};
  const Variant variant{GetParam().timing, key.kv_dtype, key.causal, 0};
  kernels().prepare({variant});
  auto instance = family.instantiate(*device().ctx, to_params(key), to_params(Shape{4096, 64, 0, false}), 1, false);
  EXPECT_GE(instance->rotations(), 1);
  for (int r = 0; r < instance->rotations(); ++r) instance->launch(kernels().candidate(variant), r);
  device().ctx->synchronize();
  EXPECT_THROW(instance->verify(), Error) << "an instance without reference cannot verify";
}

TEST_P(MlaDecodeControls, TimingInstancesSharingOneCacheLaunchOnEveryRotation) {
  // The sweep's timing instances (Family::instantiate_for_timing) of two keys of one cache type and
  // batch: one device copy of the cache, each key's own block table over it. 300 MB of cache: one
  // rotation whatever the heads, so the keys share one entry.
  const Family& family = mla_decode_family();
  InputCache inputs(size_t{4} << 30);
  const num::KvDtype dtype = kv(num::KvDtype::fp8_e4m3fn);
  std::vector<std::unique_ptr<Instance>> instances;
  for (const Key& key : {Key{128, 4, true, dtype, 32}, Key{16, 1, false, dtype, 32}}) {
    const Variant variant{GetParam().timing, key.kv_dtype, key.causal, 0};
    kernels().prepare({variant});
    auto instance =
        family.instantiate_for_timing(*device().ctx, to_params(key), to_params(Shape{16384, 64, 0, false}), 1, inputs);
    for (int r = 0; r < instance->rotations(); ++r) instance->launch(kernels().candidate(variant), r);
    instances.push_back(std::move(instance));
  }
  device().ctx->synchronize();
  EXPECT_EQ(inputs.entries(), 1u) << "the keys share the cache";
}

INSTANTIATE_TEST_SUITE_P(Math, MlaDecodeControls, testing::ValuesIn(kMathConfigs),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace ktune::mla::gpu_test
