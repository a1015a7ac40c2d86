#include "bench/rotations.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "common/error.hpp"

namespace ktune::bench {

int rotations_for(int64_t bytes_per_copy, int64_t cache_bytes) {
  if (bytes_per_copy <= 0)
    throw Error(fmt::format("rotations_for: bytes per copy must be positive, not {}", bytes_per_copy));
  const int64_t target = 3 * std::max<int64_t>(cache_bytes, 0);
  const int64_t copies = (target + bytes_per_copy - 1) / bytes_per_copy;
  return static_cast<int>(std::clamp<int64_t>(copies, 1, std::numeric_limits<int>::max()));
}

}  // namespace ktune::bench
