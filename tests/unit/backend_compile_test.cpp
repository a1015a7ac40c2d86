// Compilation through the Backend interface, which needs only hipRTC / NVRTC (no device):
// template instances by name expression, code objects, lowered names, and compile errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "backend/backend.hpp"
#include "common/error.hpp"

namespace ktune::backend {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

struct Target {
  const char* backend;
  const char* arch;
};

// Plain kernel code that both HIP and CUDA accept without includes.
const char* const kScaleSource = R"(
namespace ktune_test {
template <int Factor>
__global__ void scale(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= Factor;
}
}  // namespace ktune_test
)";

class BackendCompile : public ::testing::TestWithParam<Target> {
 protected:
  // The backend for the parameter's arch, or nullptr with `skip_reason` set.
  Backend* backend() {
    for (Backend* b : all()) {
      if (b->name() != GetParam().backend) continue;
      if (b->compiler_available(GetParam().arch)) return b;
      skip_reason =
          std::string(b->name()) + " compiler unavailable: " + b->compiler_unavailable_reason(GetParam().arch);
      return nullptr;
    }
    skip_reason = std::string(GetParam().backend) + " backend not built: its headers were not found at configure time";
    return nullptr;
  }
  CompileRequest request(std::string source) const { return {std::move(source), "scale.cu", {}, GetParam().arch, {}}; }
  std::string skip_reason;
};

TEST_P(BackendCompile, CompilesTemplateInstancesByNameExpression) {
  Backend* b = backend();
  if (!b) GTEST_SKIP() << skip_reason;
  CompileRequest req = request(kScaleSource);
  req.name_expressions = {"ktune_test::scale<2>", "ktune_test::scale<3>"};
  const CompileResult r = b->compile(req);
  ASSERT_GE(r.code.size(), 4u);
  EXPECT_EQ(std::string(r.code.data(), 4), "\x7f"
                                           "ELF")
      << "hsaco and cubin are ELF files";
  ASSERT_EQ(r.lowered_names.size(), 2u);
  EXPECT_THAT(r.lowered_names[0], AllOf(StartsWith("_Z"), HasSubstr("scale")));
  EXPECT_THAT(r.lowered_names[1], AllOf(StartsWith("_Z"), HasSubstr("scale")));
  EXPECT_NE(r.lowered_names[0], r.lowered_names[1]) << "each expression has its own symbol, in request order";
}

TEST_P(BackendCompile, SyntaxErrorIsCompileErrorWhoseLogNamesTheLine) {
  Backend* b = backend();
  if (!b) GTEST_SKIP() << skip_reason;
  // Line 3 uses an undeclared name.
  const CompileRequest req =
      request("__global__ void broken(int* x) {\n  int y = 1;\n  x[0] = y + undeclared_name;\n}\n");
  try {
    b->compile(req);
    FAIL() << "a source with a syntax error compiled";
  } catch (const CompileError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("scale.cu"), HasSubstr(GetParam().arch)));
    EXPECT_THAT(e.log(), HasSubstr("scale.cu"));
    EXPECT_THAT(e.log(), testing::ContainsRegex("scale\\.cu(:|\\()3")) << e.log();
  }
}

TEST_P(BackendCompile, ForeignArchIsRejectedBeforeCompiling) {
  Backend* b = backend();
  if (!b) GTEST_SKIP() << skip_reason;
  CompileRequest req = request(kScaleSource);
  req.arch = b->handles_arch("gfx90a") ? "sm_90a" : "gfx90a";
  EXPECT_THROW(b->compile(req), Error);
}

TEST_P(BackendCompile, ConcurrentCompilesAgreeWithASequentialOne) {
  // Callers may compile from several threads through one Backend (hipRTC serialises inside).
  Backend* b = backend();
  if (!b) GTEST_SKIP() << skip_reason;
  CompileRequest req = request(kScaleSource);
  req.name_expressions = {"ktune_test::scale<5>"};
  const CompileResult sequential = b->compile(req);
  std::vector<CompileResult> results(4);
  std::vector<std::thread> threads;
  for (CompileResult& r : results) threads.emplace_back([&] { r = b->compile(req); });
  for (std::thread& t : threads) t.join();
  for (const CompileResult& r : results) {
    EXPECT_EQ(r.lowered_names, sequential.lowered_names);
    EXPECT_EQ(r.code, sequential.code);
  }
}

TEST_P(BackendCompile, ReportsTheCompilerVersion) {
  Backend* b = backend();
  if (!b) GTEST_SKIP() << skip_reason;
  const std::string arch = GetParam().arch;
  const std::string version = b->compiler_version(arch);
  if (version.starts_with("clang ")) {
    // The offline compiler's identity: clang's version line and path, the options of every
    // compile, ld.lld's version and path, the device libraries' and HIP headers' hashes.
    EXPECT_THAT(version, testing::MatchesRegex("clang [0-9]+\\.[0-9]+.*"));
    EXPECT_THAT(b->compiler_identity(arch),
                testing::MatchesRegex(".*clang version [0-9.]+.* \\(/[^ ]*clang[^ ]*\\) \\[.*-std=c\\+\\+17.*\\] .*LLD "
                                      "[0-9.]+.* device libraries [0-9a-f]{16} .* hip headers [0-9a-f]{16}"));
    return;
  }
  const std::string prefix = std::string(b->name()) == "hip" ? "hiprtc " : "nvrtc ";
  EXPECT_THAT(version, testing::MatchesRegex(prefix + "[0-9]+\\.[0-9]+.*"));
  // The cache key's identity: the version, the options of every compile, the library's hash.
  EXPECT_THAT(b->compiler_identity(arch),
              testing::MatchesRegex(version + " \\[.*-std=c\\+\\+17.*\\] library [0-9a-f]{16}"));
}

// gfx90a: hipRTC where it loads; gfx942 and gfx950: the offline clang (Debian's hipRTC predates them).
INSTANTIATE_TEST_SUITE_P(Targets, BackendCompile,
                         ::testing::Values(Target{"hip", "gfx90a"}, Target{"hip", "gfx942"}, Target{"hip", "gfx950"},
                                           Target{"cuda", "sm_90a"}),
                         [](const auto& info) { return std::string(info.param.backend) + "_" + info.param.arch; });

}  // namespace
}  // namespace ktune::backend
