// `ktune compile` end to end with the real compilers (hipRTC for gfx90a, NVRTC for sm_90a), no
// device needed.
#include <filesystem>
#include <fstream>
#include <regex>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "cli_run.hpp"

namespace ktune::testing {
namespace {
namespace fs = std::filesystem;

TEST(CompileCli, SmokeSpaceCompilesForGfx90aAndThenComesFromTheCache) {
  CliTempDir cache;
  const std::string env = "KTUNE_CACHE_DIR=" + cache.path();
  auto first = run_ktune("compile --kernel mla_decode --space smoke --arch gfx90a", env);
  SKIP_WITHOUT_COMPILER(first, "gfx90a");
  ASSERT_EQ(first.status, 0) << first.output;
  EXPECT_TRUE(contains(first.output, " 0 from the cache")) << first.output;
  EXPECT_TRUE(contains(first.output, " 0 failed")) << first.output;
  // The counts the space files leave to the tool: keys and candidates, programs and their time.
  EXPECT_TRUE(std::regex_search(first.output, std::regex(R"(; [1-9]\d* keys, [1-9]\d* candidates, \d+ infeasible\n)")))
      << first.output;
  EXPECT_TRUE(
      std::regex_search(first.output, std::regex(R"(compile: [1-9]\d* programs: .*; (\d+h\d+m|\d+m\d+s|\d+s)\n)")))
      << first.output;

  auto second = run_ktune("compile --kernel mla_decode --space smoke --arch gfx90a", env);
  ASSERT_EQ(second.status, 0) << second.output;
  EXPECT_TRUE(contains(second.output, " 0 compiled")) << "every program must come from the cache: " << second.output;
}

// A cache that cannot store (files where its shard directories go) costs the next run its
// compiles, never this one its results: the command succeeds and says so.
TEST(CompileCli, ACacheThatCannotStoreIsAWarning) {
  CliTempDir cache;
  for (int shard = 0; shard < 256; ++shard) std::ofstream(fmt::format("{}/{:02x}", cache.path(), shard)) << "";
  auto r = run_ktune("compile --kernel qk_rope_cache --space smoke --arch gfx90a --heads 16",
                     "KTUNE_CACHE_DIR=" + cache.path());
  SKIP_WITHOUT_COMPILER(r, "gfx90a");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, " 0 failed")) << r.output;
  EXPECT_TRUE(contains(r.output, "could not be stored in the cache " + cache.path() + " (the first: cannot create "))
      << r.output;
}

TEST(CompileCli, FilteredSpaceCompilesForSm90a) {
  CliTempDir cache;
  auto r = run_ktune(
      "compile --kernel mla_decode --space smoke --arch sm_90a --heads 16 --block-len 2 --kv-dtype fp8_e4m3fn",
      "KTUNE_CACHE_DIR=" + cache.path());
  SKIP_WITHOUT_COMPILER(r, "sm_90a");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, " 0 failed")) << r.output;
}

TEST(CompileCli, CompilerErrorsFailTheCommandWithTheirLog) {
  CliTempDir tmp;
  fs::copy(fs::path(KTUNE_SOURCE_DIR) / "templates", tmp.path() + "/templates", fs::copy_options::recursive);
  std::ofstream(tmp.path() + "/templates/mla_decode/mla_decode.hip", std::ios::app)
      << "\n#error planted by the cli test\n";
  auto r = run_ktune("--templates " + tmp.path() +
                         "/templates compile --kernel mla_decode --space smoke --arch gfx90a --no-cache --heads 16 "
                         "--block-len 1 --causal 0 --kv-dtype bf16",
                     "");
  SKIP_WITHOUT_COMPILER(r, "gfx90a");
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "FAILED: heads=16 block_len=1 causal=0 kv_dtype=bf16")) << r.output;
  EXPECT_TRUE(contains(r.output, "planted by the cli test")) << "the compiler log must be shown: " << r.output;
  EXPECT_TRUE(contains(r.output, "failed to compile for gfx90a")) << r.output;

  // The global option also works after the verb.
  auto after = run_ktune("compile --kernel mla_decode --space smoke --arch gfx90a --no-cache --heads 16 --block-len 1 "
                         "--causal 0 --kv-dtype bf16 --templates " +
                             tmp.path() + "/templates",
                         "");
  EXPECT_NE(after.status, 0) << after.output;
  EXPECT_TRUE(contains(after.output, "planted by the cli test")) << after.output;
}

TEST(CompileCli, BadSpacesAndFiltersAreNamed) {
  CliTempDir tmp;
  // The smoke space with one head count out of range.
  std::ifstream smoke(fs::path(KTUNE_SOURCE_DIR) / "tuner/kernels/mla_decode/spaces/smoke.toml");
  std::string text((std::istreambuf_iterator<char>(smoke)), std::istreambuf_iterator<char>());
  auto heads = text.find("\nheads = [");
  ASSERT_NE(heads, std::string::npos) << "the smoke space lists head counts";
  text.insert(text.find(']', heads), ", 0");
  const std::string space = tmp.path() + "/bad.toml";
  std::ofstream(space) << text;
  auto bad_file = run_ktune("compile --kernel mla_decode --arch gfx90a --space " + space);
  EXPECT_EQ(bad_file.status, 1);
  EXPECT_TRUE(contains(bad_file.output, space + ":")) << bad_file.output;
  EXPECT_TRUE(contains(bad_file.output, "[keys] heads: '0'")) << bad_file.output;

  auto bad_filter = run_ktune("compile --kernel mla_decode --arch gfx90a --space smoke --heads 12");
  EXPECT_EQ(bad_filter.status, 1);
  EXPECT_TRUE(contains(bad_filter.output, "--heads heads=12 leaves nothing to sweep")) << bad_filter.output;

  auto bad_arch = run_ktune("compile --kernel mla_decode --arch gfx000 --space smoke");
  EXPECT_EQ(bad_arch.status, 1);
  EXPECT_TRUE(contains(bad_arch.output, "gfx000")) << bad_arch.output;

  auto unknown = run_ktune("compile --kernel mla_decode --arch gfx90a --space nosuchspace");
  EXPECT_EQ(unknown.status, 1);
  EXPECT_TRUE(contains(unknown.output, "neither a built-in space of mla_decode (")) << unknown.output;
}

}  // namespace
}  // namespace ktune::testing
