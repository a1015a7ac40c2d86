#pragma once
// What each kernel of a compiled candidate uses of its target, read from the code object (not
// measured): registers, scratch (spills), LDS, and the waves one SIMD holds at once. AMD code
// objects say it in their metadata note (backend/amdgpu_metadata.hpp); for other targets ktune
// reads nothing and every figure is none.
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "backend/target_facts.hpp"
#include "db/database.hpp"
#include "kernels/family.hpp"

namespace ktune {

struct KernelUse {
  std::string kernel;  // the name expression
  std::string symbol;  // its lowered name
  db::KernelResources resources;
};

struct CandidateResources {
  std::vector<KernelUse> kernels;  // one per name expression, in order
  std::string unread;              // why the code object's resources could not be read; "" when they were
};

// Waves one SIMD of `facts`' target holds at once of a kernel with `vgprs` (architectural and
// accumulation together) and `sgprs` per wave, and workgroups of `threads` threads that use
// `lds_bytes` of LDS: the least of the register files' and the LDS's limits, at most the
// target's maximum; 0 where one workgroup does not fit a CU.
int64_t waves_per_simd(const backend::TargetFacts& facts, int64_t vgprs, int64_t sgprs, int64_t lds_bytes,
                       int64_t threads);

// The resources of each kernel of `code`, compiled for `target` from `name_expressions`. The
// first kernel is the family's main one: `main_launch` gives its threads and dynamic LDS
// (Family::launch_info); the others are taken at their largest workgroup and static LDS.
CandidateResources read_resources(const TargetLimits& target, const std::vector<std::string>& name_expressions,
                                  const backend::CompileResult& code, const LaunchInfo& main_launch);

// Why a candidate whose kernels use `kernels` is not worth running on its target: a kernel that
// spills to scratch, or that not one wave per SIMD fits; nullopt when none does (or nothing is
// known).
std::optional<std::string> resource_infeasible(const std::vector<KernelUse>& kernels);

}  // namespace ktune
