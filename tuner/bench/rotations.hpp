#pragma once
// How many copies of a launch's inputs timing needs so that every launch finds a cold cache.
#include <cstdint>

namespace ktune::bench {

// Copies needed so that cycling through them touches at least 3x `cache_bytes` (the device's
// last-level cache) between two uses of the same copy (at least 1, at most INT_MAX). Throws
// Error unless bytes_per_copy > 0.
int rotations_for(int64_t bytes_per_copy, int64_t cache_bytes);

}  // namespace ktune::bench
