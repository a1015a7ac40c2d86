// The kernel families are named in three places that cannot share one list: the registry compiled
// into ktune (tuner/kernels/registry.cpp), scripts/families.sh (run.sh and sweep_results.sh walk
// it) and the runtime's build (dispatch/runtime/CMakeLists.txt, which packages each family's
// results). A family added to one and not the others would be swept but never shipped, or the
// reverse; these tests hold the three to the same names in the same order.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_run.hpp"
#include "kernels/family.hpp"

namespace ktune::testing {
namespace {

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  return {std::istream_iterator<std::string>(in), std::istream_iterator<std::string>()};
}

std::vector<std::string> registry_names() {
  std::vector<std::string> names;
  for (const Family* f : families()) names.emplace_back(f->name());
  return names;
}

// What scripts/families.sh sets, sourced by bash as the scripts do; `env` may set KTUNE_FAMILIES.
std::vector<std::string> script_names(const std::string& env = "") {
  const auto r = run_command("cd '" KTUNE_SOURCE_DIR "' && env -u KTUNE_FAMILIES " + env +
                             " bash -c 'source scripts/families.sh && echo \"${families[*]}\"'");
  EXPECT_EQ(r.status, 0) << r.output;
  return words(r.output);
}

std::vector<std::string> runtime_build_names() {
  std::ifstream in(KTUNE_SOURCE_DIR "/dispatch/runtime/CMakeLists.txt");
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(R"(set\(families ([^)]*)\))"))) {
    ADD_FAILURE() << "dispatch/runtime/CMakeLists.txt has no set(families ...)";
    return {};
  }
  return words(m[1].str());
}

TEST(FamilyLists, TheScriptsNameTheRegistrysFamiliesInItsOrder) {
  ASSERT_GE(registry_names().size(), 2u);
  EXPECT_EQ(script_names(), registry_names());
}

TEST(FamilyLists, TheRuntimeBuildPackagesTheRegistrysFamilies) { EXPECT_EQ(runtime_build_names(), registry_names()); }

// The script's list is read from what it sets, not assumed: KTUNE_FAMILIES narrows it, and the
// narrowed list no longer matches the registry.
TEST(FamilyLists, KtuneFamiliesNarrowsTheScriptsList) {
  const auto narrowed = script_names("KTUNE_FAMILIES=qk_rope_cache");
  EXPECT_EQ(narrowed, std::vector<std::string>{"qk_rope_cache"});
  EXPECT_NE(narrowed, registry_names());
}

}  // namespace
}  // namespace ktune::testing
