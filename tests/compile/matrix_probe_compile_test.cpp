// The matrix-core probes compile as the instances bench/matrix_probe.cpp launches: mma_probe.hip
// with hipRTC for gfx90a (MFMA) and with NVRTC for sm_90a (mma.sync, which the GPU tests compare
// with wgmma), wgmma_probe.hip with NVRTC for sm_90a (the roof there). And the checks can fail: a
// planted error is rejected with the compiler's log, and the wgmma probe refuses sm_90, which
// has no warpgroup products.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <string>

#include "backend/backend.hpp"
#include "bench/matrix_probe.hpp"
#include "common/error.hpp"
#include "jit/templates.hpp"

namespace ktune {
namespace {

struct ProbeCase {
  std::string arch;
  bench::MatrixInstruction instruction;
};

backend::CompileRequest request(std::string source, const ProbeCase& c) {
  const auto& i = c.instruction;
  return {
      std::move(source), std::string(i.source), {fmt::format("{}<{}, {}>", i.kernel, i.threads, i.chains)}, c.arch, {}};
}

class MatrixProbeCompile : public testing::TestWithParam<ProbeCase> {
 protected:
  void SetUp() override {
    if (!compiler().compiler_available(GetParam().arch))
      GTEST_SKIP() << compiler().name()
                   << " compiler unavailable: " << compiler().compiler_unavailable_reason(GetParam().arch);
  }
  const backend::Backend& compiler() const { return backend::for_arch(GetParam().arch); }
};

TEST_P(MatrixProbeCompile, TheLaunchedInstanceCompiles) {
  const auto result = compiler().compile(request(jit::render(GetParam().instruction.source), GetParam()));
  EXPECT_FALSE(result.code.empty());
  ASSERT_EQ(result.lowered_names.size(), 1u);
  EXPECT_FALSE(result.lowered_names[0].empty());
}

TEST_P(MatrixProbeCompile, PlantedErrorIsRejectedWithTheCompilerLog) {
  std::string broken = jit::render(GetParam().instruction.source);
  const std::string anchor = "namespace probe_detail {";
  const size_t at = broken.find(anchor);
  ASSERT_NE(at, std::string::npos) << "the template no longer has '" << anchor << "'";
  broken.insert(at + anchor.size(), "\nconstexpr int planted = ktune_planted_syntax_error + ;\n");
  try {
    compiler().compile(request(broken, GetParam()));
    ADD_FAILURE() << "a source with a planted error compiled for " << GetParam().arch;
  } catch (const CompileError& e) {
    EXPECT_NE(e.log().find("ktune_planted_syntax_error"), std::string::npos) << "log:\n" << e.log();
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, MatrixProbeCompile,
                         testing::Values(ProbeCase{"gfx90a", bench::matrix_instruction("gfx90a")},
                                         ProbeCase{"sm_90a", bench::mma_sync_instruction()},
                                         ProbeCase{"sm_90a", bench::matrix_instruction("sm_90a")}),
                         [](const auto& info) {
                           return info.param.arch + "_" +
                                  std::string(info.param.instruction.kernel.substr(7));  // past "ktune::"
                         });

// sm_90 compiles without the arch-specific features, so without wgmma: the probe says so rather
// than compile into something that cannot run there.
TEST(WgmmaProbeCompile, Sm90WithoutItsArchFeaturesIsRefused) {
  const ProbeCase c{"sm_90", bench::matrix_instruction("sm_90a")};
  const auto& compiler = backend::for_arch(c.arch);
  if (!compiler.compiler_available(c.arch)) GTEST_SKIP() << compiler.compiler_unavailable_reason(c.arch);
  try {
    compiler.compile(request(jit::render(c.instruction.source), c));
    ADD_FAILURE() << "the wgmma probe compiled for sm_90";
  } catch (const CompileError& e) {
    EXPECT_NE(e.log().find("wgmma_probe is sm_90a's"), std::string::npos) << "log:\n" << e.log();
  }
}

}  // namespace
}  // namespace ktune
