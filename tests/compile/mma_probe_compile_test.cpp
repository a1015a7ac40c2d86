// The matrix-core probe (templates/probe/mma_probe.hip) compiles with hipRTC for gfx90a (MFMA) and
// with NVRTC for sm_90a (mma.sync), as the instance the probe launches; and the check can fail: a
// planted error is rejected with the compiler's log.
#include <gtest/gtest.h>

#include <string>

#include "backend/backend.hpp"
#include "common/error.hpp"
#include "jit/templates.hpp"

namespace ktune {
namespace {

// The instance bench/matrix_probe.cpp launches.
const std::string kInstance = "ktune::mma_probe<256, 8>";

backend::CompileRequest request(std::string source, const std::string& arch) {
  return {std::move(source), "mma_probe.hip", {kInstance}, arch, {}};
}

class MmaProbeCompile : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!compiler().compiler_available())
      GTEST_SKIP() << compiler().name() << " compiler unavailable: " << compiler().compiler_unavailable_reason();
  }
  const backend::Backend& compiler() const { return backend::for_arch(GetParam()); }
};

TEST_P(MmaProbeCompile, TheLaunchedInstanceCompiles) {
  const auto result = compiler().compile(request(jit::render("probe/mma_probe.hip"), GetParam()));
  EXPECT_FALSE(result.code.empty());
  ASSERT_EQ(result.lowered_names.size(), 1u);
  EXPECT_FALSE(result.lowered_names[0].empty());
}

TEST_P(MmaProbeCompile, PlantedErrorIsRejectedWithTheCompilerLog) {
  std::string broken = jit::render("probe/mma_probe.hip");
  const std::string anchor = "namespace probe_detail {";
  const size_t at = broken.find(anchor);
  ASSERT_NE(at, std::string::npos) << "the template no longer has '" << anchor << "'";
  broken.insert(at + anchor.size(), "\nconstexpr int planted = ktune_planted_syntax_error + ;\n");
  try {
    compiler().compile(request(broken, GetParam()));
    ADD_FAILURE() << "a source with a planted error compiled for " << GetParam();
  } catch (const CompileError& e) {
    EXPECT_NE(e.log().find("ktune_planted_syntax_error"), std::string::npos) << "log:\n" << e.log();
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, MmaProbeCompile, testing::Values("gfx90a", "sm_90a"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ktune
