#include "bench/rotations.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common/error.hpp"

namespace ktune::bench {

int rotations_for(int64_t bytes_per_copy, int64_t l2_bytes) {
  if (bytes_per_copy <= 0)
    throw Error(fmt::format("rotations_for: bytes per copy must be positive, not {}", bytes_per_copy));
  const int64_t target = 3 * std::max<int64_t>(l2_bytes, 0);
  return static_cast<int>(std::max<int64_t>(1, (target + bytes_per_copy - 1) / bytes_per_copy));
}

}  // namespace ktune::bench
