// Compile-target limits, known without a device, so that the sweep can prune configs before it
// compiles anything (and CI can prune for GPUs it does not have).
#include <algorithm>
#include <array>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backend/target_facts.hpp"
#include "common/error.hpp"
#include "kernels/family.hpp"

namespace ktune {
namespace {

constexpr int64_t KiB = 1024;

// CDNA (gfx9), from AMD's published facts (backend/target_facts.hpp): the wave size; a workgroup may
// use the whole LDS of its CU (64 KiB on gfx90a and gfx942, 160 KiB on gfx950) and spreads over the
// CU's SIMDs of 512 VGPRs x 64 lanes each. SIMT code computes in the 256 architectural VGPRs (the
// accumulation VGPRs only serve matrix cores and spills).
TargetLimits cdna(const char* arch) {
  const backend::TargetFacts& f = *backend::target_facts(arch);
  return {arch, f.wave_size, f.lds_per_cu_bytes, 1024, 256, int64_t{f.simds_per_cu} * f.vgprs_per_simd * f.wave_size};
}

// NVIDIA: warp 32; the largest opt-in shared memory per block, and 1 KiB more per SM, which the
// runtime reserves per resident block; 255 registers per thread, 64 Ki per block and per SM. wgmma
// exists only where the arch-specific features are compiled in (sm_90a, not sm_90).
TargetLimits nvidia(const char* arch, int64_t shared_optin, bool warpgroup_mma = false) {
  return {arch, 32, shared_optin, 1024, 255, 64 * KiB, warpgroup_mma, KiB};
}

const std::array<TargetLimits, 7>& known_targets() {
  static const std::array<TargetLimits, 7> targets = {
      cdna("gfx90a"),
      cdna("gfx942"),
      cdna("gfx950"),
      nvidia("sm_80", 163 * KiB),
      nvidia("sm_89", 99 * KiB),
      nvidia("sm_90", 227 * KiB),
      nvidia("sm_90a", 227 * KiB, true),
  };
  return targets;
}

}  // namespace

const TargetLimits& target_limits(std::string_view arch) {
  for (const auto& t : known_targets())
    if (t.arch == arch) return t;
  throw Error(fmt::format("unknown target '{}': ktune knows {}", arch, known_target_names()));
}

bool is_known_target(std::string_view arch) noexcept {
  return std::any_of(known_targets().begin(), known_targets().end(), [&](const auto& t) { return t.arch == arch; });
}

std::vector<std::string> known_target_archs() {
  std::vector<std::string> archs;
  for (const auto& t : known_targets()) archs.push_back(t.arch);
  return archs;
}

std::string known_target_names() {
  std::vector<std::string_view> names;
  for (const auto& t : known_targets()) names.push_back(t.arch);
  return fmt::format("{}", fmt::join(names, ", "));
}

int64_t resident_blocks(const TargetLimits& target, int64_t shared_bytes, int threads) {
  const int64_t per_block = shared_bytes + target.shared_reserved_per_block;
  return std::min((target.shared_per_block + target.shared_reserved_per_block) / per_block,
                  target.registers_per_block / (int64_t{threads} * target.registers_per_thread_max));
}

}  // namespace ktune
