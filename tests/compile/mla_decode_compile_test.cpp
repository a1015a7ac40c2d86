// Every feasible kernel instance of mla_decode (tests/compile/mla_decode_instances.toml, which
// covers the default space) compiles with hipRTC for gfx90a, with the offline clang for gfx942 and
// gfx950 and with NVRTC for sm_90a: the proof, without a GPU, that each template instance of every
// math path (SIMT and matrix cores: MFMA on CDNA, mma.sync and wgmma on sm_90a) generates code for
// both vendors
// (tests/compile/family_compile_support.hpp).
#include <algorithm>
#include <cctype>
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

INSTANTIATE_TEST_SUITE_P(Targets, MlaDecodeCompile, testing::Values("gfx90a", "gfx942", "gfx950", "sm_90a"),
                         [](const auto& info) { return info.param; });

// The check above can fail: a source with an error is rejected, and the error carries the log
// that names the offending identifier.
class MlaDecodeCompileNegative : public testing::TestWithParam<std::string> {};

TEST_P(MlaDecodeCompileNegative, BrokenSourceFailsWithTheCompilerLog) {
  const mla::Config config{16, 16, 256, 1, 0, 0};
  compile_test::expect_planted_error_rejected(family(), {mla::main_kernel_name(config, num::KvDtype::bf16, true)},
                                              "namespace mla_detail {", GetParam());
}

INSTANTIATE_TEST_SUITE_P(Targets, MlaDecodeCompileNegative, testing::Values("gfx90a", "gfx942", "gfx950", "sm_90a"),
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
// h128_l1_bf16 in 1172 us against 902 (experiments/2026-12-02-mla-decode-wgmma-pv-stalls).
// Every wgmma, wgmma_ss and wgmma_t instance of the default space is checked; the check fails on a
// planted read of the Q K^T accumulators before their wait.
// ptxas's verbose report of `names` compiled for sm_90a from `source`.
std::string ptxas_report(const std::string& source, const std::vector<std::string>& names) {
  return backend::for_arch("sm_90a")
      .compile({source, std::string(family().template_file()), names, "sm_90a", {"--ptxas-options=-v"}})
      .log;
}

// The default space's instances for sm_90a whose names `keep` accepts.
template <class Keep>
std::vector<std::string> default_instances(Keep keep) {
  std::vector<std::string> kept;
  for (const std::string& n : compile_test::feasible_instances(family(), "default", "sm_90a"))
    if (keep(n)) kept.push_back(n);
  return kept;
}

std::string ptxas_performance_notes(const std::string& source, const std::vector<std::string>& names) {
  const std::string log = ptxas_report(source, names);
  std::string notes;
  for (size_t at = log.find("(C75"); at != std::string::npos; at = log.find("(C75", at + 1))
    notes += log.substr(at, log.find('\n', at) - at) + "\n";
  return notes;
}

TEST(MlaDecodeWgmma, ProductsStayAsynchronous) {
  const backend::Backend& compiler = backend::for_arch("sm_90a");
  if (!compiler.compiler_available("sm_90a"))
    GTEST_SKIP() << compiler.name() << " compiler unavailable: " << compiler.compiler_unavailable_reason("sm_90a");
  const std::vector<std::string> wgmma = default_instances([](const std::string& n) {
    return math_argument(n) == "2" || math_argument(n) == "3" || math_argument(n) == "4";
  });
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

// math=wgmma and math=wgmma_t at 384 threads launch with 168 registers a thread (65536 / 384) and
// move them from the producer warpgroup to the math warpgroups with setmaxnreg (40 against 232; a
// producer that decodes an fp8 cache 56 against 224), which ptxas allocates their code within: no
// instance spills. Without the move, the math warpgroups keep 168 and spill. (math=wgmma at 512
// threads launches with 128 and gives its softmax and P V warpgroups their own counts,
// MmaGeometry::value_registers: no spills either.)
int spill_store_bytes(const std::string& source, const std::vector<std::string>& names) {
  const std::string log = ptxas_report(source, names);
  int bytes = 0, reports = 0;
  const std::string tag = " bytes spill stores";
  for (size_t at = log.find(tag); at != std::string::npos; at = log.find(tag, at + 1), ++reports) {
    size_t start = at;
    while (start > 0 && std::isdigit(static_cast<unsigned char>(log[start - 1]))) --start;
    bytes += std::stoi(log.substr(start, at - start));
  }
  EXPECT_GE(reports, static_cast<int>(names.size())) << "ptxas reported no spills for some kernels:\n" << log;
  return bytes;
}

TEST(MlaDecodeWgmma, TheProducersRegistersGoToTheMathWarpgroups) {
  const backend::Backend& compiler = backend::for_arch("sm_90a");
  if (!compiler.compiler_available("sm_90a"))
    GTEST_SKIP() << compiler.name() << " compiler unavailable: " << compiler.compiler_unavailable_reason("sm_90a");
  const std::vector<std::string> producer = default_instances([](const std::string& n) {
    const bool softmax_warpgroup = n.find(", 512, ") != std::string::npos && math_argument(n) == "2";
    return n.find(", 384, ") != std::string::npos || softmax_warpgroup;
  });
  ASSERT_FALSE(producer.empty()) << "the default space has no instance with a producer warpgroup";
  const std::string source = jit::render(family().template_file());
  EXPECT_EQ(spill_store_bytes(source, producer), 0);

  // Both kernels that have a producer (math=wgmma's and math=wgmma_t's) lose the moves up: the
  // transposed kernel's math warpgroups', the matrix-core kernel's P V warpgroups' (with and
  // without a softmax warpgroup).
  std::string planted = source;
  int moves = 0;
  for (const std::string move : {"ws::grow_registers<kMathRegisters>();", "ws::grow_registers<G.value_registers()>();"})
    for (size_t at = planted.find(move); at != std::string::npos; at = planted.find(move, at), ++moves)
      planted.erase(at, move.size());
  EXPECT_EQ(moves, 3) << "the templates no longer have their three moves up";
  for (const char* kernel : {"ktune::mla_decode_mma<", "ktune::mla_decode_transposed<"}) {
    const auto one =
        std::find_if(producer.begin(), producer.end(), [&](const std::string& n) { return n.rfind(kernel, 0) == 0; });
    ASSERT_NE(one, producer.end()) << "no " << kernel << " instance with a producer";
    EXPECT_GT(spill_store_bytes(planted, {*one}), 0) << *one;
  }
}

// math=wgmma_t at 32 rows holds 128 O^T accumulators a thread, which leaves room for two groups
// of a quarter of a P V step's A registers (PV_PARTS = 4): its instances of the default space
// spill at most 4 bytes each (fp8_e4m3fnuz causal; CUDA 13.0: 255 registers). With whole steps
// in flight (PV_PARTS = 1, the 16-row kernel's) they spill far more.
TEST(MlaDecodeWgmma, ThirtyTwoRowTransposedKernelsKeepTheirAccumulatorsInRegisters) {
  const backend::Backend& compiler = backend::for_arch("sm_90a");
  if (!compiler.compiler_available("sm_90a"))
    GTEST_SKIP() << compiler.name() << " compiler unavailable: " << compiler.compiler_unavailable_reason("sm_90a");
  const std::vector<std::string> rows32 =
      default_instances([](const std::string& n) { return n.rfind("ktune::mla_decode_transposed<32, ", 0) == 0; });
  ASSERT_FALSE(rows32.empty()) << "the default space has no 32-row wgmma_t instance";
  const std::string source = jit::render(family().template_file());
  EXPECT_LE(spill_store_bytes(source, rows32), 4 * static_cast<int>(rows32.size()));

  const std::string parts = "constexpr int PV_PARTS = NB == 1 ? 1 : 4;";
  std::string planted = source;
  const size_t at = planted.find(parts);
  ASSERT_NE(at, std::string::npos) << "the template no longer has '" << parts << "'";
  planted.replace(at, parts.size(), "constexpr int PV_PARTS = 1;");
  EXPECT_GT(spill_store_bytes(planted, {rows32.front()}), 4) << rows32.front();
}

}  // namespace
}  // namespace ktune
