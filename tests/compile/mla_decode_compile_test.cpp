// Every feasible kernel instance of mla_decode (tests/compile/mla_decode_instances.toml, which
// covers the default space) compiles with hipRTC for gfx90a and with NVRTC for sm_90a: the proof,
// without a GPU, that each template instance of every math path (SIMT and matrix cores: MFMA on
// gfx90a, mma.sync and wgmma on sm_90a) generates code for both vendors
// (tests/compile/family_compile_support.hpp).
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backend/backend.hpp"
#include "common/error.hpp"
#include "compile/family_compile_support.hpp"
#include "jit/templates.hpp"
#include "kernels/family.hpp"
#include "kernels/mla_decode/family.hpp"
#include "kernels/mla_decode/problem.hpp"

namespace ktune {
namespace {

const Family& family() { return mla::mla_decode_family(); }

class MlaDecodeCompile : public testing::TestWithParam<std::string> {};

TEST_P(MlaDecodeCompile, EveryFeasibleInstance) {
  const std::string arch = GetParam();
  const auto names =
      compile_test::feasible_instances(family(), KTUNE_SOURCE_DIR "/tests/compile/mla_decode_instances.toml", arch);
  const auto swept = compile_test::feasible_instances(family(), "default", arch);
  EXPECT_TRUE(std::includes(names.begin(), names.end(), swept.begin(), swept.end()))
      << "the default space has instances that mla_decode_instances.toml lacks";
  // H, L, batch and split are run-time arguments: many candidates share one instance. Every kernel
  // template must keep at least one feasible instance, or this test would prove nothing about it
  // (the transposed one is sm_90a's).
  std::vector<const char*> kernels = {"ktune::mla_decode<", "ktune::mla_decode_mma<"};
  if (arch == "sm_90a") kernels.push_back("ktune::mla_decode_transposed<");
  for (const char* kernel : kernels)
    EXPECT_TRUE(std::any_of(names.begin(), names.end(), [&](const std::string& n) { return n.rfind(kernel, 0) == 0; }))
        << "no " << kernel << "...> instance is feasible on " << arch;
  // About 40 instances per program: one parse of the template serves many name expressions.
  compile_test::compile_all(family(), names, arch, 40);
}

INSTANTIATE_TEST_SUITE_P(Targets, MlaDecodeCompile, testing::Values("gfx90a", "sm_90a"),
                         [](const auto& info) { return info.param; });

// The check above can fail: a source with an error is rejected, and the error carries the log
// that names the offending identifier.
class MlaDecodeCompileNegative : public testing::TestWithParam<std::string> {};

TEST_P(MlaDecodeCompileNegative, BrokenSourceFailsWithTheCompilerLog) {
  const mla::Config config{16, 16, 256, 1, 0, 0};
  compile_test::expect_planted_error_rejected(family(), {mla::main_kernel_name(config, num::KvDtype::bf16, true)},
                                              "namespace mla_detail {", GetParam());
}

INSTANTIATE_TEST_SUITE_P(Targets, MlaDecodeCompileNegative, testing::Values("gfx90a", "sm_90a"),
                         [](const auto& info) { return info.param; });

// The fifth template argument (MATH) of a "ktune::mla_decode...<R, K, T, S, M, ...>" name.
std::string math_argument(const std::string& name) {
  size_t at = name.find('<');
  for (int i = 0; i < 4; ++i) at = name.find(", ", at) + 2;
  return name.substr(at, name.find(',', at) - at);
}

// wgmma products run asynchronously only where ptxas can follow their accumulators from issue to
// wait; elsewhere it serializes them or injects waits, and says so in its verbose report (codes
// C75xx, "Potential Performance Loss"). On the H200 a form of the kernel that ptxas serialized ran
// h128_l1_bf16 in 1172 us against 902 (results/nvidia-h200/profiles/mla_decode_wgmma_pv_stalls.md).
// Every wgmma, wgmma_ss and wgmma_t instance of the default space is checked; the check fails on a
// planted read of the Q K^T accumulators before their wait.
std::string ptxas_performance_notes(const std::string& source, const std::vector<std::string>& names) {
  const backend::Backend& compiler = backend::for_arch("sm_90a");
  const backend::CompileResult r =
      compiler.compile({source, std::string(family().template_file()), names, "sm_90a", {"--ptxas-options=-v"}});
  std::string notes;
  for (size_t at = r.log.find("(C75"); at != std::string::npos; at = r.log.find("(C75", at + 1))
    notes += r.log.substr(at, r.log.find('\n', at) - at) + "\n";
  return notes;
}

TEST(MlaDecodeWgmma, ProductsStayAsynchronous) {
  const backend::Backend& compiler = backend::for_arch("sm_90a");
  if (!compiler.compiler_available())
    GTEST_SKIP() << compiler.name() << " compiler unavailable: " << compiler.compiler_unavailable_reason();
  std::vector<std::string> wgmma;
  for (const std::string& n : compile_test::feasible_instances(family(), "default", "sm_90a"))
    if (math_argument(n) == "2" || math_argument(n) == "3" || math_argument(n) == "4") wgmma.push_back(n);
  ASSERT_FALSE(wgmma.empty()) << "the default space has no wgmma instance";
  const std::string source = jit::render(family().template_file());
  EXPECT_EQ(ptxas_performance_notes(source, wgmma), "");

  const std::string anchor = "        queue_copies();\n        wg::finish_product(s[0]);";
  const size_t at = source.find(anchor);
  ASSERT_NE(at, std::string::npos) << "the template no longer has '" << anchor << "'";
  std::string planted = source;
  planted.insert(at + anchor.find('\n'), "\n        if (s[0][0].v[0] == 1.f) __trap();");
  // (On the instance of the h128 target's winner: ptxas notes the planted read there.)
  const auto h128 = std::find_if(wgmma.begin(), wgmma.end(), [](const std::string& n) {
    return n.rfind("ktune::mla_decode_mma<64, 64, 256, 2, 2, 0, ", 0) == 0;
  });
  ASSERT_NE(h128, wgmma.end());
  EXPECT_NE(ptxas_performance_notes(planted, {*h128}), "") << *h128;
}

}  // namespace
}  // namespace ktune
