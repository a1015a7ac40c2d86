#pragma once
// Random host inputs of one mla_decode problem, in the device layouts (HostProblem of the
// reference), deterministic for a seed.
#include <cstdint>

#include "kernels/mla_decode/problem.hpp"
#include "kernels/mla_decode/reference.hpp"

namespace ktune::mla {

// Kimi-K3's softmax scale, 192^-0.5; every instance uses it.
inline constexpr float kSoftmaxScale = 0.07216878364870322f;
// Dequantisation scale of fp8 caches; deliberately not 1, so that a kernel ignoring it fails.
inline constexpr float kFp8KvScale = 0.3f;

// B = shape.batch, or key.batch when that is 0. Lengths: every request ctx, or (ragged) the first
// ctx, the second block_len, the rest uniform in between. q is bf16 in [-2, 2); the cache holds
// values in [-1, 1) (bf16) or codes of [-3, 3) with kv_scale kFp8KvScale (fp8). Pages are a random
// permutation, so that a request's pages are not contiguous; unused block-table entries are -1.
// Throws Error when shape.ctx < key.block_len.
// CacheContents::none leaves p.kv_cache empty, for a caller that times with a shared device copy
// of a cache of cache_bytes(p) (kernels/input_cache.hpp); everything else is as with random.
enum class CacheContents { random, none };
HostProblem make_problem(const Key& key, const Shape& shape, uint64_t seed,
                         CacheContents contents = CacheContents::random);

// Bytes of p's cache: as many pages as its block table names (each one once).
size_t cache_bytes(const HostProblem& p);

// A cache of `bytes` bytes of kv_dtype elements in make_problem's value ranges, drawn from `seed`.
UninitVector<uint8_t> random_cache(num::KvDtype kv_dtype, size_t bytes, uint64_t seed);

// Element i of p's cache ([slot, 576] elements of p.kv_dtype, raw bytes) set to x in the cache's
// format (bf16 little-endian, or the fp8 code nearest x). x must be within the format's range.
void set_cache_element(HostProblem& p, size_t i, float x);

}  // namespace ktune::mla
