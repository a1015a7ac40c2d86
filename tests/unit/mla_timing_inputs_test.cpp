// mla_decode's timing instances share one device copy of the KV cache between keys of one cache
// type, batch and timing shape (Family::instantiate_for_timing), on the host-memory fake device of
// the sweep tests; and the cache that holds them (InputCache) keeps, evicts and hands back entries.
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/input_cache.hpp"
#include "kernels/mla_decode/family.hpp"
#include "kernels/mla_decode/inputs.hpp"
#include "kernels/mla_decode/instance.hpp"
#include "sweep_test_support.hpp"

namespace ktune::mla {
namespace {
using testing::FakeBuffer;
using testing::FakeContext;

struct MlaTimingInputs : ::testing::Test {
  FakeContext ctx;
  InputCache inputs{size_t{1} << 30};
  // Caches of several MB against the fake device's 1 MiB L2: one rotation each.
  const Params shape = to_params(Shape{2000, 16, 0, false});

  std::unique_ptr<Instance> timing(const Key& key, uint64_t seed = 1) {
    return mla_decode_family().instantiate_for_timing(ctx, to_params(key), shape, seed, inputs);
  }
  static const DeviceInstance& of(const std::unique_ptr<Instance>& i) {
    return dynamic_cast<const DeviceInstance&>(*i);
  }
};

TEST_F(MlaTimingInputs, KeysDifferingInHeadsBlockLengthMaskOrSeedShareOneCache) {
  const auto a = timing({16, 1, true, num::KvDtype::bf16, 4});
  const auto b = timing({128, 4, false, num::KvDtype::bf16, 4}, 2);
  ASSERT_EQ(a->rotations(), 1);
  ASSERT_EQ(b->rotations(), 1);
  EXPECT_EQ(&of(a).kv_copies(), &of(b).kv_copies());
  EXPECT_EQ(inputs.entries(), 1u);
  EXPECT_EQ(inputs.bytes(), cache_bytes(of(a).problem()));
  // Everything else is the key's own.
  EXPECT_EQ(of(b).problem().heads, 128);
  EXPECT_TRUE(of(a).problem().kv_cache.empty()) << "no host copy of a shared cache";
}

TEST_F(MlaTimingInputs, OtherCacheTypesAndBatchesGetTheirOwn) {
  const auto a = timing({16, 1, true, num::KvDtype::bf16, 4});
  const auto fn = timing({16, 1, true, num::KvDtype::fp8_e4m3fn, 4});
  const auto fnuz = timing({16, 1, true, num::KvDtype::fp8_e4m3fnuz, 4});
  const auto batch8 = timing({16, 1, true, num::KvDtype::bf16, 8});
  EXPECT_NE(&of(a).kv_copies(), &of(fn).kv_copies());
  EXPECT_NE(&of(fn).kv_copies(), &of(fnuz).kv_copies()) << "the same size, not the same codes";
  EXPECT_NE(&of(a).kv_copies(), &of(batch8).kv_copies());
  EXPECT_EQ(inputs.entries(), 4u);
}

// Elements of a downloaded cache, decoded.
std::vector<float> decoded(FakeContext& ctx, const backend::Buffer& b, num::KvDtype dtype, size_t bytes) {
  std::vector<uint8_t> raw(bytes);
  ctx.download(raw.data(), b, bytes, 0);
  std::vector<float> out;
  for (size_t i = 0; i < bytes; i += num::bytes_of(dtype))
    out.push_back(dtype == num::KvDtype::bf16 ? num::bf16_to_f32(static_cast<uint16_t>(raw[i] | raw[i + 1] << 8))
                  : dtype == num::KvDtype::fp8_e4m3fn ? num::fp8_e4m3fn_to_f32(raw[i])
                                                      : num::fp8_e4m3fnuz_to_f32(raw[i]));
  return out;
}

TEST_F(MlaTimingInputs, TheSharedCacheHoldsMakeProblemsValuesOnEveryPageTheKeysName) {
  for (const auto dtype : {num::KvDtype::bf16, num::KvDtype::fp8_e4m3fn, num::KvDtype::fp8_e4m3fnuz}) {
    const auto a = timing({16, 1, true, dtype, 4});
    const auto b = timing({64, 8, false, dtype, 4}, 9);
    const size_t bytes = cache_bytes(of(a).problem());
    ASSERT_GE(of(a).kv_copies().at(0)->size(), bytes);
    const std::vector<float> x = decoded(ctx, *of(a).kv_copies()[0], dtype, bytes);
    // make_problem's ranges ([-1, 1) bf16, [-3, 3] fp8 codes), random: not one repeated value.
    const float range = dtype == num::KvDtype::bf16 ? 1.f : 3.f;
    EXPECT_TRUE(std::all_of(x.begin(), x.end(), [&](float v) { return std::isfinite(v) && std::fabs(v) <= range; }));
    EXPECT_GT(std::count_if(x.begin(), x.end(), [&](float v) { return v != x[0]; }), static_cast<long>(x.size() / 2));
    // Every page either key's block table names lies in the cache.
    for (const auto* inst : {&of(a), &of(b)}) {
      const auto& p = inst->problem();
      const auto top = *std::max_element(p.block_table.begin(), p.block_table.end());
      EXPECT_LT(static_cast<size_t>(top + 1) * p.page_size * kHeadDim * num::bytes_of(dtype), bytes + 1);
      EXPECT_EQ(cache_bytes(p), bytes);
    }
  }
  // The same cache again, from a cache of another worker: the same bytes (drawn from its id).
  InputCache other(size_t{1} << 30);
  const auto mine = timing({16, 1, true, num::KvDtype::bf16, 4});
  const auto theirs = mla_decode_family().instantiate_for_timing(
      ctx, to_params(Key{16, 1, true, num::KvDtype::bf16, 4}), shape, 5, other);
  const size_t bytes = cache_bytes(of(mine).problem());
  EXPECT_NE(&of(mine).kv_copies(), &of(theirs).kv_copies());
  EXPECT_EQ(decoded(ctx, *of(mine).kv_copies()[0], num::KvDtype::bf16, bytes),
            decoded(ctx, *of(theirs).kv_copies()[0], num::KvDtype::bf16, bytes));
}

TEST_F(MlaTimingInputs, ATimingInstanceDiffersFromItsOwnOnlyInTheCachesValues) {
  const Key key{32, 2, true, num::KvDtype::fp8_e4m3fn, 4};
  const auto shared = timing(key, 3);
  const auto own = mla_decode_family().instantiate(ctx, to_params(key), shape, 3, false);
  EXPECT_EQ(shared->rotations(), own->rotations());
  EXPECT_EQ(shared->traffic().bytes, own->traffic().bytes);
  EXPECT_EQ(shared->traffic().flops, own->traffic().flops);
  EXPECT_EQ(of(shared).problem().block_table, of(own).problem().block_table);
  EXPECT_EQ(of(shared).problem().kv_lens, of(own).problem().kv_lens);
  EXPECT_TRUE(std::equal(of(shared).problem().q.begin(), of(shared).problem().q.end(), of(own).problem().q.begin(),
                         of(own).problem().q.end()));
  EXPECT_EQ(cache_bytes(of(shared).problem()), of(own).problem().kv_cache.size());
}

TEST_F(MlaTimingInputs, AnInstanceRefusesASharedCacheTooSmallForIt) {
  HostProblem p = make_problem({16, 1, true, num::KvDtype::bf16, 4}, Shape{300, 16, 0, false}, 1, CacheContents::none);
  const size_t bytes = cache_bytes(p);
  auto small = std::make_shared<SharedBuffers>();
  small->push_back(ctx.alloc(bytes - 1));
  EXPECT_THROW(DeviceInstance(ctx, p, 1, 1, small), Error);
  auto fits = std::make_shared<SharedBuffers>();
  fits->push_back(ctx.alloc(bytes));
  EXPECT_THROW(DeviceInstance(ctx, p, 2, 1, fits), Error) << "two rotations, one copy";
  EXPECT_NO_THROW(DeviceInstance(ctx, p, 1, 1, fits));
}

// n buffers of `bytes` each.
SharedBuffers buffers(int n, size_t bytes) {
  SharedBuffers out;
  for (int i = 0; i < n; ++i) out.push_back(std::make_unique<FakeBuffer>(bytes));
  return out;
}

TEST(InputCache, KeepsEntriesWithinItsBytesDroppingTheLeastRecentlyUsed) {
  InputCache cache(300);
  int made = 0;
  auto get = [&](const std::string& id) {
    return cache.get(id, [&] {
      ++made;
      return buffers(1, 100);
    });
  };
  const auto a = get("a");
  get("b");
  get("c");
  EXPECT_EQ(made, 3);
  EXPECT_EQ(get("a"), a) << "a hit hands back the same buffers";
  EXPECT_EQ(made, 3);
  get("d");  // 400 bytes: b, the least recently used, goes
  EXPECT_EQ(cache.entries(), 3u);
  EXPECT_EQ(cache.bytes(), 300u);
  get("a");
  get("c");
  EXPECT_EQ(made, 4) << "a, c and d stayed";
  get("b");
  EXPECT_EQ(made, 5) << "b was dropped";
}

TEST(InputCache, AnEntryLargerThanTheBudgetIsStillHandedOutAndOutlivesItsEviction) {
  InputCache cache(100);
  const auto big = cache.get("big", [] { return buffers(2, 150); });
  EXPECT_EQ(big->size(), 2u);
  EXPECT_EQ(cache.entries(), 1u) << "kept: the instance that asked needs it now";
  const auto next = cache.get("next", [] { return buffers(1, 50); });
  EXPECT_EQ(cache.entries(), 1u);
  EXPECT_EQ(cache.bytes(), 50u);
  EXPECT_EQ(big.use_count(), 1) << "dropped by the cache, alive in its holder";
  EXPECT_EQ((*big)[1]->size(), 150u);
}

}  // namespace
}  // namespace ktune::mla
