#pragma once
// Compiles every feasible kernel instance of a family's space for one arch, without a device: the
// machinery of the per-family compile tests (gfx90a with hipRTC, gfx942 and gfx950 with the
// offline clang, sm_90a with NVRTC). The distinct name expressions of the feasible
// candidates are compiled in programs of a bounded number of instances (one parse of the template,
// many name expressions); when a program fails, its instances are compiled one by one so that the
// failure names the instance and carries the compiler's log.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "backend/backend.hpp"
#include "common/error.hpp"
#include "jit/templates.hpp"
#include "kernels/family.hpp"
#include "sweep/space.hpp"

namespace ktune::compile_test {

// Every name expression a feasible (key, config) of `space` needs on `arch`, sorted.
inline std::set<std::string> feasible_instances(const Family& family, const std::string& space_name,
                                                const std::string& arch) {
  const sweep::Space space = sweep::load_space(space_name, family);
  const TargetLimits& target = target_limits(arch);
  std::set<std::string> names;
  for (const Params& key : sweep::combinations(family.key_fields(), space.key_values))
    for (const Params& config : sweep::space_configs(space))
      if (!family.infeasible(key, config, target))
        for (const std::string& name : family.name_expressions(key, config)) names.insert(name);
  return names;
}

// Compiles `names` in programs of at most `per_program` instances, reporting each failure with the
// compiler's log. Skips (with the reason) where the arch's compiler is unavailable.
inline void compile_all(const Family& family, const std::set<std::string>& names, const std::string& arch,
                        size_t per_program) {
  const backend::Backend& compiler = backend::for_arch(arch);
  if (!compiler.compiler_available(arch))
    GTEST_SKIP() << compiler.name() << " compiler unavailable: " << compiler.compiler_unavailable_reason(arch);
  ASSERT_FALSE(names.empty()) << "no instance of " << family.name() << " is feasible on " << arch;
  const std::string source = jit::render(family.template_file());
  const std::string source_name(family.template_file());
  const std::vector<std::string> all(names.begin(), names.end());
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::vector<std::string>> batches;
  for (size_t first = 0; first < all.size(); first += per_program)
    batches.emplace_back(all.begin() + static_cast<std::ptrdiff_t>(first),
                         all.begin() + static_cast<std::ptrdiff_t>(std::min(all.size(), first + per_program)));
  // What went wrong with each program, reported on the test's thread.
  std::vector<std::vector<std::string>> failures(batches.size());
  const auto build = [&](size_t b) {
    const std::vector<std::string>& batch = batches[b];
    try {
      const backend::CompileResult result = compiler.compile({source, source_name, batch, arch, {}});
      if (result.code.empty()) failures[b].push_back("an empty code object");
      if (result.lowered_names.size() != batch.size())
        failures[b].push_back(
            fmt::format("{} lowered names for {} instances", result.lowered_names.size(), batch.size()));
      for (size_t i = 0; i < batch.size() && i < result.lowered_names.size(); ++i)
        if (result.lowered_names[i].empty()) failures[b].push_back(batch[i] + " has no symbol");
    } catch (const CompileError& program_error) {
      failures[b].push_back(fmt::format("a program of {} instances failed: {}; compiling its instances one by one",
                                        batch.size(), program_error.what()));
      for (const std::string& name : batch) {
        try {
          compiler.compile({source, source_name, {name}, arch, {}});
        } catch (const CompileError& e) {
          failures[b].push_back(fmt::format("{} does not compile for {}: {}\n{}", name, arch, e.what(), e.log()));
        }
      }
    }
  };
  // Programs compile on every core where the compiler may run on several threads (the offline
  // clang, NVRTC); one at a time where it may not (hipRTC).
  const size_t threads =
      compiler.compiles_in_threads(arch) ? std::max<size_t>(1, std::thread::hardware_concurrency()) : size_t{1};
  std::atomic<size_t> next{0};
  {
    std::vector<std::jthread> pool;
    for (size_t t = 0; t < std::min(threads, batches.size()); ++t)
      pool.emplace_back([&] {
        for (size_t b = next++; b < batches.size(); b = next++) build(b);
      });
  }
  for (const auto& program : failures)
    for (const std::string& f : program) ADD_FAILURE() << f;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << fmt::format("[ {} ] {}: {} instances in {} programs on {} threads, {:.1f} s ({:.2f} s per instance) "
                           "with {}\n",
                           family.name(), arch, all.size(), batches.size(), threads, seconds, seconds / all.size(),
                           compiler.compiler_version(arch));
}

// The compile checks can fail: `names` compile from the family's template (the control), and a
// syntax error planted after `anchor` is rejected with a log that names the offending identifier.
inline void expect_planted_error_rejected(const Family& family, const std::vector<std::string>& names,
                                          const std::string& anchor, const std::string& arch) {
  const backend::Backend& compiler = backend::for_arch(arch);
  if (!compiler.compiler_available(arch))
    GTEST_SKIP() << compiler.name() << " compiler unavailable: " << compiler.compiler_unavailable_reason(arch);
  const std::string good = jit::render(family.template_file());
  const std::string source_name(family.template_file());
  EXPECT_NO_THROW(compiler.compile({good, source_name, names, arch, {}}));  // the control

  std::string broken = good;
  const size_t at = broken.find(anchor);
  ASSERT_NE(at, std::string::npos) << "the template no longer has '" << anchor << "'";
  broken.insert(at + anchor.size(), "\nconstexpr int planted = ktune_planted_syntax_error + ;\n");
  try {
    compiler.compile({broken, source_name, names, arch, {}});
    ADD_FAILURE() << "a source with a planted error compiled for " << arch;
  } catch (const CompileError& e) {
    EXPECT_NE(e.log().find("ktune_planted_syntax_error"), std::string::npos) << "log:\n" << e.log();
  }
}

}  // namespace ktune::compile_test
