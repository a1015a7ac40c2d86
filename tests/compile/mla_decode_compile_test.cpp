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
  // H, L, batch and split are run-time arguments: many candidates share one instance. Both math
  // paths must keep at least one feasible instance, or this test would prove nothing about one.
  for (const char* kernel : {"ktune::mla_decode<", "ktune::mla_decode_mma<"})
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

}  // namespace
}  // namespace ktune
