#include "kernels/kernel_resources.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backend/amdgpu_metadata.hpp"
#include "common/error.hpp"

namespace ktune {
namespace {

int64_t round_up(int64_t v, int64_t granule) { return (v + granule - 1) / granule * granule; }

}  // namespace

int64_t waves_per_simd(const backend::TargetFacts& f, int64_t vgprs, int64_t sgprs, int64_t lds_bytes,
                       int64_t threads) {
  int64_t waves = f.max_waves_per_simd;
  waves = std::min(waves, f.vgprs_per_simd / round_up(std::max<int64_t>(vgprs, 1), f.vgpr_granule));
  waves = std::min(waves, f.sgprs_per_simd / round_up(std::max<int64_t>(sgprs, 1), f.sgpr_granule));
  if (lds_bytes > 0) {
    // The waves of a workgroup spread over the CU's SIMDs; as many workgroups as the LDS holds.
    const int64_t groups = f.lds_per_cu_bytes / lds_bytes;
    const int64_t waves_per_group = (std::max<int64_t>(threads, 1) + f.wave_size - 1) / f.wave_size;
    waves = std::min(waves, groups * ((waves_per_group + f.simds_per_cu - 1) / f.simds_per_cu));
  }
  return std::max<int64_t>(waves, 0);
}

CandidateResources read_resources(const TargetLimits& target, const std::vector<std::string>& name_expressions,
                                  const backend::CompileResult& code, const LaunchInfo& main_launch) {
  CandidateResources out;
  for (size_t i = 0; i < name_expressions.size(); ++i)
    out.kernels.push_back({name_expressions[i], i < code.lowered_names.size() ? code.lowered_names[i] : "", {}});
  const backend::TargetFacts* facts = backend::target_facts(target.arch);
  if (facts == nullptr) return out;  // not an AMD target: its code objects are not read
  backend::AmdgpuMetadata md;
  try {
    md = backend::read_amdgpu_metadata(code.code);
  } catch (const Error& e) {
    out.unread = e.what();
    return out;
  }
  std::vector<std::string> missing;
  for (size_t i = 0; i < out.kernels.size(); ++i) {
    auto& k = out.kernels[i];
    const backend::AmdgpuKernelMetadata* m = md.find(k.symbol);
    if (m == nullptr) {
      missing.push_back(k.symbol);
      continue;
    }
    auto& r = k.resources;
    r.vgprs = m->vgpr_count;
    r.agprs = m->agpr_count;
    r.sgprs = m->sgpr_count;
    r.scratch_bytes = m->private_segment_fixed_size;
    if (m->group_segment_fixed_size)
      r.lds_bytes = *m->group_segment_fixed_size + (i == 0 ? main_launch.shared_bytes : 0);
    const int64_t threads = i == 0 && main_launch.threads_per_block > 0 ? main_launch.threads_per_block
                                                                        : m->max_flat_workgroup_size.value_or(0);
    if (r.vgprs && r.sgprs && r.lds_bytes && threads > 0)
      r.waves_per_simd = waves_per_simd(*facts, *r.vgprs, *r.sgprs, *r.lds_bytes, threads);
  }
  if (!missing.empty())
    out.unread =
        fmt::format("the code object's metadata ({}) describes no kernel {}", md.target, fmt::join(missing, ", "));
  return out;
}

std::optional<std::string> resource_infeasible(const std::vector<KernelUse>& kernels) {
  for (const auto& k : kernels) {
    const auto& r = k.resources;
    if (r.scratch_bytes && *r.scratch_bytes > 0)
      return fmt::format("spills: {} uses {} bytes of scratch per lane", k.kernel, *r.scratch_bytes);
    if (r.waves_per_simd && *r.waves_per_simd < 1)
      return fmt::format("occupancy: {} fits not one wave per SIMD ({} VGPRs, {} SGPRs, {} bytes of LDS)", k.kernel,
                         r.vgprs.value_or(0), r.sgprs.value_or(0), r.lds_bytes.value_or(0));
  }
  return std::nullopt;
}

}  // namespace ktune
