#pragma once
// Caches behind the L2 that a device does not report. MI300 and MI350 keep data between launches
// in a 256 MB Infinity Cache (a memory-side cache, AMD's "MALL"), which hipDeviceProp_t does
// not describe: timing that rotated its inputs past the 4 MB L2 of one XCD alone would read them
// from that cache, and a copy probe of buffers that fit in it would measure it, not HBM.
// The size is AMD's published specification of these parts; no AMD GPU has measured it here.
#include <cstdint>
#include <string_view>

namespace ktune::backend {

// Bytes of the memory-side cache of `arch` (ktune's compile target), 0 where it has none.
constexpr int64_t memory_side_cache_bytes(std::string_view arch) noexcept {
  constexpr int64_t kMiB = int64_t{1} << 20;
  if (arch == "gfx942" || arch == "gfx950") return 256 * kMiB;  // MI300X/A, MI325X; MI350X, MI355X
  return 0;
}

}  // namespace ktune::backend
