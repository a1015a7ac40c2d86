#pragma once
// Published facts of AMD targets that a device does not report, or that ktune needs without a
// device: the register file a wave's occupancy is computed from, the LDS per CU, the compute units,
// the caches and the memory bandwidth of the part a target names. MI300 and MI350 keep data between
// launches in a 256 MiB Infinity Cache (a memory-side cache, AMD's "MALL") that hipDeviceProp_t does
// not describe: timing rotates its inputs past it (DeviceInfo::last_level_cache_bytes). Data with
// its sources (target_facts.cpp); nothing in it was measured by ktune.
#include <cstdint>
#include <string_view>

namespace ktune::backend {

struct TargetFacts {
  std::string_view arch;     // compile target, "gfx942"
  std::string_view product;  // the part the figures are of, "AMD Instinct MI300X"
  int compute_units = 0;
  int wave_size = 0;
  int64_t lds_per_cu_bytes = 0;
  int simds_per_cu = 0;
  // Per lane of one SIMD: the unified file of architectural and accumulation VGPRs, allocated
  // to a wave in granules; the scalar file, allocated in granules too.
  int vgprs_per_simd = 0;
  int vgpr_granule = 0;
  int sgprs_per_simd = 0;
  int sgpr_granule = 0;
  int max_waves_per_simd = 0;
  int64_t l2_bytes = 0;                // all XCDs together
  int64_t last_level_cache_bytes = 0;  // the Infinity Cache where there is one, else the L2
  double peak_hbm_gbps = 0;            // GB/s, 10^9 bytes
  std::string_view sources;            // titles and URLs of AMD's specifications
};

// The facts of `arch`, or nullptr for a target ktune has none of (NVIDIA devices report theirs).
const TargetFacts* target_facts(std::string_view arch) noexcept;

}  // namespace ktune::backend
