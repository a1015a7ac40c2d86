#pragma once
// Compiles every feasible kernel instance of a family's space for one arch, without a device: the
// machinery of the per-family compile tests. The distinct name expressions of the feasible
// candidates are compiled in programs of a bounded number of instances (one parse of the template,
// many name expressions); when a program fails, its instances are compiled one by one so that the
// failure names the instance and carries the compiler's log.
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <set>
#include <string>
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
  if (!compiler.compiler_available())
    GTEST_SKIP() << compiler.name() << " compiler unavailable: " << compiler.compiler_unavailable_reason();
  ASSERT_FALSE(names.empty()) << "no instance of " << family.name() << " is feasible on " << arch;
  const std::string source = jit::render(family.template_file());
  const std::string source_name(family.template_file());
  const std::vector<std::string> all(names.begin(), names.end());
  const auto start = std::chrono::steady_clock::now();
  size_t programs = 0;
  for (size_t first = 0; first < all.size(); first += per_program, ++programs) {
    const std::vector<std::string> batch(
        all.begin() + static_cast<std::ptrdiff_t>(first),
        all.begin() + static_cast<std::ptrdiff_t>(std::min(all.size(), first + per_program)));
    try {
      const backend::CompileResult result = compiler.compile({source, source_name, batch, arch, {}});
      EXPECT_FALSE(result.code.empty());
      ASSERT_EQ(result.lowered_names.size(), batch.size());
      for (size_t i = 0; i < batch.size(); ++i)
        EXPECT_FALSE(result.lowered_names[i].empty()) << batch[i] << " has no symbol";
    } catch (const CompileError& program_error) {
      ADD_FAILURE() << "a program of " << batch.size() << " instances failed: " << program_error.what()
                    << "; compiling its instances one by one";
      for (const std::string& name : batch) {
        try {
          compiler.compile({source, source_name, {name}, arch, {}});
        } catch (const CompileError& e) {
          ADD_FAILURE() << name << " does not compile for " << arch << ": " << e.what() << "\n" << e.log();
        }
      }
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << fmt::format("[ {} ] {}: {} instances in {} programs, {:.1f} s ({:.2f} s per instance) with {}\n",
                           family.name(), arch, all.size(), programs, seconds, seconds / all.size(),
                           compiler.compiler_version());
}

// The compile checks can fail: `names` compile from the family's template (the control), and a
// syntax error planted after `anchor` is rejected with a log that names the offending identifier.
inline void expect_planted_error_rejected(const Family& family, const std::vector<std::string>& names,
                                          const std::string& anchor, const std::string& arch) {
  const backend::Backend& compiler = backend::for_arch(arch);
  if (!compiler.compiler_available())
    GTEST_SKIP() << compiler.name() << " compiler unavailable: " << compiler.compiler_unavailable_reason();
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
