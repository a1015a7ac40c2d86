#include "kernels/mla_decode/inputs.hpp"

#include <algorithm>
#include <numeric>
#include <random>
#include <span>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/parallel.hpp"
#include "common/splitmix.hpp"

namespace ktune::mla {
namespace {

std::vector<int32_t> request_lengths(const Key& key, const Shape& shape, int batch, std::mt19937_64& rng) {
  std::vector<int32_t> lens(batch, shape.ctx);
  if (shape.ragged) {
    std::uniform_int_distribution<int32_t> between(key.block_len, shape.ctx);
    for (int b = 0; b < batch; ++b) lens[b] = b == 0 ? shape.ctx : b == 1 ? key.block_len : between(rng);
  }
  return lens;
}

// The cache from draws first, first + 1, ... of `values` (one per element: a bf16 value takes one
// draw, as does an fp8 code), of [-1, 1) for bf16 and [-3, 3) for the fp8 formats.
void fill_cache(std::span<uint8_t> cache, num::KvDtype kv_dtype, const SplitMix& values, uint64_t first) {
  const float range = kv_dtype == num::KvDtype::bf16 ? 1.f : 3.f;
  uint8_t* const at = cache.data();
  num::with_kv_dtype(kv_dtype, [&](auto dtype) {
    parallel_each(cache.size() / num::bytes_of(dtype.value), kFillChunk,
                  [&](size_t i) { num::store_kv<dtype.value>(at, i, values.uniform(first + i, -range, range)); });
  });
}

// The value stream of a seed: q's draws first, then the cache's.
SplitMix values_of(uint64_t seed) { return SplitMix(seed ^ 0x5DEECE66Dull); }

}  // namespace

void set_cache_element(HostProblem& p, size_t i, float x) { num::store_kv(p.kv_dtype, p.kv_cache.data(), i, x); }

size_t cache_bytes(const HostProblem& p) {
  const auto pages = std::count_if(p.block_table.begin(), p.block_table.end(), [](int32_t page) { return page >= 0; });
  return static_cast<size_t>(pages) * p.page_size * kHeadDim * num::bytes_of(p.kv_dtype);
}

UninitVector<uint8_t> random_cache(num::KvDtype kv_dtype, size_t bytes, uint64_t seed) {
  UninitVector<uint8_t> cache(bytes);
  fill_cache(cache, kv_dtype, values_of(seed), 0);
  return cache;
}

HostProblem make_problem(const Key& key, const Shape& shape, uint64_t seed, CacheContents contents) {
  if (auto why = shape_unfit(key, shape)) throw Error("mla_decode shape: " + *why);
  std::mt19937_64 rng(seed);
  const SplitMix values = values_of(seed);

  HostProblem p;
  p.batch = shape.batch > 0 ? shape.batch : key.batch;
  p.block_len = key.block_len;
  p.heads = key.heads;
  p.page_size = shape.page_size;
  p.causal = key.causal;
  p.kv_dtype = key.kv_dtype;
  p.softmax_scale = kSoftmaxScale;
  p.kv_scale = key.kv_dtype == num::KvDtype::bf16 ? 1.f : kFp8KvScale;
  p.kv_lens = request_lengths(key, shape, p.batch, rng);

  const int max_len = *std::max_element(p.kv_lens.begin(), p.kv_lens.end());
  p.max_pages = (max_len + p.page_size - 1) / p.page_size;
  std::vector<int32_t> pages_of(p.batch);
  for (int b = 0; b < p.batch; ++b) pages_of[b] = (p.kv_lens[b] + p.page_size - 1) / p.page_size;
  const int64_t total_pages = std::accumulate(pages_of.begin(), pages_of.end(), int64_t{0});
  std::vector<int32_t> order(static_cast<size_t>(total_pages));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  p.block_table.assign(static_cast<size_t>(p.batch) * p.max_pages, -1);
  size_t next = 0;
  for (int b = 0; b < p.batch; ++b)
    for (int i = 0; i < pages_of[b]; ++i) p.block_table[static_cast<size_t>(b) * p.max_pages + i] = order[next++];

  p.q.resize(static_cast<size_t>(p.batch) * p.block_len * p.heads * kHeadDim);
  parallel_each(p.q.size(), kFillChunk, [&](size_t i) { p.q[i] = num::f32_to_bf16(values.uniform(i, -2.f, 2.f)); });
  if (contents == CacheContents::random) {
    p.kv_cache.resize(cache_bytes(p));
    fill_cache(p.kv_cache, p.kv_dtype, values, p.q.size());
  }
  return p;
}

}  // namespace ktune::mla
