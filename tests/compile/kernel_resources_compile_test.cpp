// Resources read from real code objects: a few candidates of each family's smoke space compiled
// for gfx90a (hipRTC), gfx942 and gfx950 (the offline clang), no device, and every kernel of them
// read from the object's metadata note: registers, scratch, LDS (static and the launch's dynamic)
// and waves per SIMD.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "backend/backend.hpp"
#include "jit/compiler.hpp"
#include "kernels/family.hpp"
#include "kernels/kernel_resources.hpp"
#include "sweep/plan.hpp"
#include "sweep/space.hpp"

namespace ktune {
namespace {

// (family, AMD arch): hipRTC's gfx90a objects and the offline clang's gfx942 / gfx950 ones carry the
// same metadata note.
class KernelResourcesCompile : public testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(KernelResourcesCompile, AmdCodeObjectsSayWhatTheirKernelsUse) {
  const auto& [family_name, arch] = GetParam();
  const backend::Backend& b = backend::for_arch(arch);
  if (!b.compiler_available(arch))
    GTEST_SKIP() << "no compiler for " << arch << ": " << b.compiler_unavailable_reason(arch);
  const Family& fam = family(family_name);
  const auto plan = sweep::build_plan(sweep::load_space("smoke", fam), target_limits(arch));
  std::vector<jit::CompileJob> jobs;
  for (const auto& k : plan.keys)
    for (const auto& c : k.configs)
      if (jobs.size() < 3) jobs.push_back({k.key, c});
  ASSERT_FALSE(jobs.empty());
  const jit::BackendCompiler compiler(b, arch);
  jit::CompileSettings settings;
  settings.arch = arch;
  settings.jobs = 1;
  const auto batch = jit::compile_candidates(fam, jobs, compiler, settings);
  for (size_t i = 0; i < jobs.size(); ++i) {
    const auto& out = batch.outcomes[i];
    ASSERT_TRUE(out.ok()) << out.error;
    const LaunchInfo launch = fam.launch_info(jobs[i].key, jobs[i].config);
    const auto used = read_resources(target_limits(arch), out.name_expressions, *out.result, launch);
    ASSERT_EQ(used.unread, "");
    ASSERT_EQ(used.kernels.size(), out.name_expressions.size());
    for (size_t n = 0; n < used.kernels.size(); ++n) {
      const auto& k = used.kernels[n];
      SCOPED_TRACE(k.kernel);
      const auto& r = k.resources;
      ASSERT_TRUE(r.vgprs && r.sgprs && r.scratch_bytes && r.lds_bytes && r.waves_per_simd);
      EXPECT_GT(*r.vgprs, 0);
      EXPECT_LE(*r.vgprs, 512);
      EXPECT_GT(*r.sgprs, 0);
      EXPECT_GE(*r.scratch_bytes, 0);
      if (n == 0) EXPECT_GE(*r.lds_bytes, launch.shared_bytes) << "the main kernel's dynamic LDS counts";
      EXPECT_GE(*r.waves_per_simd, 1);
      EXPECT_LE(*r.waves_per_simd, 8);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(FamiliesAndArches, KernelResourcesCompile,
                         testing::Combine(testing::Values("mla_decode", "qk_rope_cache"),
                                          testing::Values("gfx90a", "gfx942", "gfx950")),
                         [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param); });

}  // namespace
}  // namespace ktune
