// Every feasible kernel instance of qk_rope_cache's default space (the fused variants and the
// kernels of the unfused baseline) compiles with hipRTC for gfx90a, the offline clang for gfx942
// and gfx950 and NVRTC for sm_90a; and
// the check can fail: a planted error is rejected with the compiler's log.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "family_compile_support.hpp"
#include "kernels/qk_rope_cache/family.hpp"
#include "kernels/qk_rope_cache/problem.hpp"

namespace ktune {
namespace {

const Family& family() { return rope::qk_rope_cache_family(); }

// Programs of this many instances: one template parse serves many, and a failure is still cheap
// to narrow down.
constexpr size_t kInstancesPerProgram = 48;

class QkRopeCacheCompile : public testing::TestWithParam<std::string> {};

TEST_P(QkRopeCacheCompile, EveryFeasibleInstanceOfTheDefaultSpace) {
  const auto names = compile_test::feasible_instances(family(), "default", GetParam());
  // Both kinds of candidate are in the space: the fused kernel and the unfused sequence.
  ASSERT_GT(std::count_if(names.begin(), names.end(),
                          [](const std::string& n) { return n.find("ktune::qk_rope_cache<") == 0; }),
            0);
  ASSERT_GT(std::count_if(names.begin(), names.end(),
                          [](const std::string& n) { return n.find("ktune::unfused_quantise<") == 0; }),
            0);
  compile_test::compile_all(family(), names, GetParam(), kInstancesPerProgram);
}

INSTANTIATE_TEST_SUITE_P(Targets, QkRopeCacheCompile, testing::Values("gfx90a", "gfx942", "gfx950", "sm_90a"),
                         [](const auto& info) { return info.param; });

// vec = 2 (4-byte accesses) is outside the default space but run by the GPU tests: its fused
// kernel and unfused sequence compile for every dtype pair (NVRTC once rejected an array of size
// N / 4 = 0 that only an untaken branch of vec = 2 instantiates).
TEST_P(QkRopeCacheCompile, TwoElementVectorsForEveryDtypePair) {
  std::set<std::string> names;
  for (int kv = 0; kv < 3; ++kv)
    for (int q = 0; q < 3; ++q)
      for (bool fused : {true, false})
        for (const std::string& n :
             rope::kernel_names({rope::Layout::token, 2, 2, 256, false, fused}, num::KvDtype(kv), num::KvDtype(q)))
          names.insert(n);
  compile_test::compile_all(family(), names, GetParam(), kInstancesPerProgram);
}

class QkRopeCacheCompileNegative : public testing::TestWithParam<std::string> {};

TEST_P(QkRopeCacheCompileNegative, BrokenSourceFailsWithTheCompilerLog) {
  const rope::Config config{rope::Layout::token, 8, 1, 128, true, true};
  compile_test::expect_planted_error_rejected(
      family(), rope::kernel_names(config, num::KvDtype::fp8_e4m3fn, num::KvDtype::fp8_e4m3fnuz),
      "namespace rope_detail {", GetParam());
}

INSTANTIATE_TEST_SUITE_P(Targets, QkRopeCacheCompileNegative, testing::Values("gfx90a", "gfx942", "gfx950", "sm_90a"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ktune
