#include "kernels/qk_rope_cache/inputs.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/parallel.hpp"
#include "common/splitmix.hpp"

namespace ktune::rope {
namespace {

// bf16 values uniform in [-2, 2) from a splitmix64 stream seeded by `rng`: timing shapes hold
// hundreds of millions, filled on every core.
std::vector<uint16_t> random_bf16(size_t n, std::mt19937_64& rng) {
  const SplitMix values(rng());
  std::vector<uint16_t> out(n);
  parallel_each(n, kFillChunk, [&](size_t i) { out[i] = num::f32_to_bf16(values.uniform(i, -2.f, 2.f)); });
  return out;
}

void fill_tables(HostProblem& p, int64_t rows) {
  p.table_rows = rows;
  p.cos.resize(static_cast<size_t>(rows) * kTableDim);
  p.sin.resize(p.cos.size());
  parallel_each(static_cast<size_t>(rows), 4096, [&](size_t pos) {
    for (int i = 0; i < kTableDim; ++i) {
      const double angle = p.identity ? 0.0 : static_cast<double>(pos) * std::pow(kRopeTheta, -i / 32.0);
      p.cos[pos * kTableDim + i] = static_cast<float>(std::cos(angle));
      p.sin[pos * kTableDim + i] = static_cast<float>(std::sin(angle));
    }
  });
}

}  // namespace

HostProblem make_problem(const Key& key, const Shape& shape, uint64_t seed) {
  HostProblem p;
  p.tokens = shape.tokens > 0 ? shape.tokens : key.tokens;
  p.heads = key.heads;
  p.page_size = shape.page_size;
  if (p.tokens < 1 || p.heads < 1 || p.page_size < 1)
    throw Error(fmt::format("qk_rope_cache shape: tokens {} heads {} page_size {} must be >= 1", p.tokens, p.heads,
                            p.page_size));
  p.identity = key.rope == RopeMode::identity;
  p.is_neox = key.is_neox;
  p.kv_dtype = key.kv_dtype;
  p.q_dtype = key.q_dtype;
  p.k_scale = key.kv_dtype == num::KvDtype::bf16 ? 1.f : kFp8KScale;
  p.q_scale = key.q_dtype == num::KvDtype::bf16 ? 1.f : kFp8QScale;
  std::mt19937_64 rng(seed);

  const size_t T = p.tokens, H = p.heads;
  p.q_nope = random_bf16(T * H * kNopeDim, rng);
  p.q_pe = random_bf16(T * H * kRopeDim, rng);
  p.kv_c = random_bf16(T * kNopeDim, rng);
  p.k_pe = random_bf16(T * kRopeDim, rng);

  fill_tables(p, p.identity ? 1 : shape.table_rows);
  const int64_t max_position = p.identity ? kIdentityMaxPosition : p.table_rows - 1;
  std::uniform_int_distribution<int64_t> position(0, max_position);
  p.positions.resize(T);
  for (size_t t = 0; t < T; ++t) p.positions[t] = t == 0 ? max_position : t == 1 ? 0 : position(rng);

  const int64_t wanted = 2 * static_cast<int64_t>(T) + 7;
  p.num_slots = (wanted + p.page_size - 1) / p.page_size * p.page_size;
  std::vector<int64_t> slots(static_cast<size_t>(p.num_slots));
  std::iota(slots.begin(), slots.end(), 0);
  std::shuffle(slots.begin(), slots.end(), rng);
  p.slot_mapping.assign(slots.begin(), slots.begin() + static_cast<std::ptrdiff_t>(T));
  if (shape.padded_every > 0)
    for (size_t t = 0; t < T; ++t)
      if (t % shape.padded_every == static_cast<size_t>(shape.padded_every) - 1) p.slot_mapping[t] = -1;

  p.kv_cache.resize(static_cast<size_t>(p.num_slots) * kRowDim * num::bytes_of(p.kv_dtype));
  std::uniform_int_distribution<int> byte(0, 255);
  for (auto& b : p.kv_cache) b = static_cast<uint8_t>(byte(rng));
  return p;
}

}  // namespace ktune::rope
