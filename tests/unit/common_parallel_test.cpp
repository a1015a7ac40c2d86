// The host helpers behind the random inputs and the CPU references: every index done exactly
// once whatever the chunking, errors carried out of the workers, and the counter-based
// splitmix64 equal to the sequential stream (so parallel fills change no input).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <vector>

#include "common/parallel.hpp"
#include "common/splitmix.hpp"

namespace ktune {
namespace {

TEST(ParallelEach, VisitsEveryIndexOnceAcrossARaggedLastChunk) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{999}, size_t{1000}, size_t{1001}}) {
    std::vector<std::atomic<int>> hits(n);
    parallel_each(n, 100, [&](size_t i) { ++hits[i]; });
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "n=" << n << " i=" << i;
  }
}

TEST(ParallelFor, RethrowsTheWorkersErrorAfterAllStopped) {
  std::atomic<int> started{0};
  EXPECT_THROW(parallel_for(64,
                            [&](size_t i) {
                              ++started;
                              if (i == 5) throw std::runtime_error("task 5");
                            }),
               std::runtime_error);
  EXPECT_GE(started.load(), 6);
}

// The sequential generator as published (Vigna's splitmix64.c): state advances, then mixes.
uint64_t sequential_next(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

TEST(SplitMix, DrawIIsTheSequentialStreamsIthOutput) {
  // The first output for seed 0 is the published test value.
  EXPECT_EQ(SplitMix(0).bits(0), 0xE220A8397B1DCDAFull);
  for (uint64_t seed : {0ull, 1ull, 0x5DEECE66Dull, ~0ull}) {
    uint64_t state = seed;
    const SplitMix counter(seed);
    for (uint64_t i = 0; i < 1000; ++i) ASSERT_EQ(counter.bits(i), sequential_next(state)) << seed << " " << i;
  }
  EXPECT_NE(SplitMix(1).bits(0), SplitMix(2).bits(0));
}

TEST(SplitMix, UniformStaysInItsHalfOpenRange) {
  const SplitMix g(42);
  float lo = 1, hi = -1;
  for (uint64_t i = 0; i < 100000; ++i) {
    const float x = g.uniform(i, -3.f, 3.f);
    ASSERT_GE(x, -3.f);
    ASSERT_LT(x, 3.f);
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  EXPECT_LT(lo, -2.99f);  // the whole range is reached, not a slice of it
  EXPECT_GT(hi, 2.99f);
}

}  // namespace
}  // namespace ktune
