// Every feasible kernel instance of mla_decode's default space compiles with hipRTC for gfx90a
// and with NVRTC for sm_90a: the proof, without a GPU, that each template instance generates
// code for both vendors. Instances of one (kv_dtype, causal) share one program (one parse of the
// template, many name expressions); when a program fails, its instances are compiled one by one
// so that the failure names the config and carries the compiler's log.
#include <chrono>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "backend/backend.hpp"
#include "common/error.hpp"
#include "jit/templates.hpp"
#include "kernels/family.hpp"
#include "kernels/mla_decode/family.hpp"
#include "kernels/mla_decode/problem.hpp"
#include "sweep/space.hpp"

namespace ktune {
namespace {

const Family& family() { return mla::mla_decode_family(); }

// Distinct main-kernel name expressions of the default space that are feasible on `arch`,
// grouped by (kv_dtype, causal): split is a host knob and H, L, batch are run-time arguments,
// so many candidates share an instance.
std::map<std::pair<int64_t, int64_t>, std::set<std::string>> default_space_instances(const std::string& arch) {
  const sweep::Space space = sweep::load_space("default", family());
  const TargetLimits& target = target_limits(arch);
  std::map<std::pair<int64_t, int64_t>, std::set<std::string>> groups;
  for (const Params& key : sweep::combinations(family().key_fields(), space.key_values))
    for (const Params& config : sweep::combinations(family().config_fields(), space.config_values))
      if (!family().infeasible(key, config, target))
        groups[{key.at("kv_dtype"), key.at("causal")}].insert(family().name_expressions(key, config).front());
  return groups;
}

backend::CompileRequest request(const std::string& source, const std::string& arch, std::vector<std::string> names) {
  return {source, "mla_decode.hip", std::move(names), arch, {}};
}

class MlaDecodeCompile : public testing::TestWithParam<std::string> {};

TEST_P(MlaDecodeCompile, EveryFeasibleInstanceOfTheDefaultSpace) {
  const std::string arch = GetParam();
  const backend::Backend& compiler = backend::for_arch(arch);
  if (!compiler.compiler_available())
    GTEST_SKIP() << compiler.name() << " compiler unavailable: " << compiler.compiler_unavailable_reason();

  const std::string source = jit::render(family().template_file());
  const auto groups = default_space_instances(arch);
  ASSERT_FALSE(groups.empty()) << "no instance of the default space is feasible on " << arch;
  size_t instances = 0;
  const auto start = std::chrono::steady_clock::now();
  for (const auto& [variant, name_set] : groups) {
    std::vector<std::string> names(name_set.begin(), name_set.end());
    names.push_back(mla::combine_kernel_name());
    instances += name_set.size();
    try {
      const backend::CompileResult result = compiler.compile(request(source, arch, names));
      EXPECT_FALSE(result.code.empty());
      ASSERT_EQ(result.lowered_names.size(), names.size());
      for (size_t i = 0; i < names.size(); ++i)
        EXPECT_FALSE(result.lowered_names[i].empty()) << names[i] << " has no symbol";
    } catch (const CompileError& program_error) {
      ADD_FAILURE() << "the program of kv_dtype=" << variant.first << " causal=" << variant.second
                    << " failed: " << program_error.what() << "; compiling its instances one by one";
      for (const std::string& name : names) {
        try {
          compiler.compile(request(source, arch, {name}));
        } catch (const CompileError& e) {
          ADD_FAILURE() << name << " does not compile for " << arch << ": " << e.what() << "\n" << e.log();
        }
      }
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << fmt::format("[ mla_decode ] {}: {} instances in {} programs, {:.1f} s ({:.2f} s per instance) with {}\n",
                           arch, instances, groups.size(), seconds, seconds / instances, compiler.compiler_version());
}

INSTANTIATE_TEST_SUITE_P(Targets, MlaDecodeCompile, testing::Values("gfx90a", "sm_90a"),
                         [](const auto& info) { return info.param; });

// The check above can fail: a source with an error is rejected, and the error carries the log
// that names the offending identifier.
class MlaDecodeCompileNegative : public testing::TestWithParam<std::string> {};

TEST_P(MlaDecodeCompileNegative, BrokenSourceFailsWithTheCompilerLog) {
  const std::string arch = GetParam();
  const backend::Backend& compiler = backend::for_arch(arch);
  if (!compiler.compiler_available())
    GTEST_SKIP() << compiler.name() << " compiler unavailable: " << compiler.compiler_unavailable_reason();

  const mla::Config config{16, 16, 256, 1, 0, 0};
  const std::string name = mla::main_kernel_name(config, num::KvDtype::bf16, true);
  const std::string good = jit::render(family().template_file());
  EXPECT_NO_THROW(compiler.compile(request(good, arch, {name})));  // the control

  std::string broken = good;
  const std::string anchor = "namespace mla_detail {";
  const size_t at = broken.find(anchor);
  ASSERT_NE(at, std::string::npos) << "the template no longer has '" << anchor << "'";
  broken.insert(at + anchor.size(), "\nconstexpr int planted = ktune_planted_syntax_error + ;\n");
  try {
    compiler.compile(request(broken, arch, {name}));
    ADD_FAILURE() << "a source with a planted error compiled for " << arch;
  } catch (const CompileError& e) {
    EXPECT_NE(e.log().find("ktune_planted_syntax_error"), std::string::npos) << "log:\n" << e.log();
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, MlaDecodeCompileNegative, testing::Values("gfx90a", "sm_90a"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ktune
