#pragma once
// splitmix64 as a counter-based generator: draw i is a pure function of (seed, i), the same
// value a sequential splitmix64 stream gives as its i-th output, so test inputs of hundreds of
// MB fill in parallel (common/parallel.hpp) and stay identical for a seed.
#include <cstdint>

namespace ktune {

class SplitMix {
 public:
  explicit constexpr SplitMix(uint64_t seed) noexcept : seed_(seed) {}

  constexpr uint64_t bits(uint64_t i) const noexcept {
    uint64_t z = seed_ + (i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi), from the top 24 bits (every value exact in float).
  constexpr float uniform(uint64_t i, float lo, float hi) const noexcept {
    return lo + (hi - lo) * static_cast<float>(bits(i) >> 40) * 0x1p-24f;
  }

 private:
  uint64_t seed_;
};

}  // namespace ktune
