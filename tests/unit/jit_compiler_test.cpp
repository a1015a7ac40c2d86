#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "jit/compiler.hpp"
#include "jit/templates.hpp"
#include "sweep_test_support.hpp"

namespace ktune::jit {
namespace {
using ::testing::AllOf;
using ::testing::HasSubstr;
using testing::TempDir;
using testing::FakeCompiler;
using testing::ToyFamily;

CompileSettings settings(std::string arch, int jobs = 0, const CodeCache* cache = nullptr) {
  CompileSettings s;
  s.arch = std::move(arch);
  s.jobs = jobs;
  s.cache = cache;
  return s;
}

struct JitCompiler : ::testing::Test {
  TempDir templates, cache_dir;
  ToyFamily family;
  FakeCompiler compiler;
  JitCompiler() {
    templates.write("toy/toy.hip", "template <int R, int S> __global__ void toy() {}\n");
    set_template_root(templates.path());
  }
  ~JitCompiler() override { set_template_root(""); }

  static std::vector<CompileJob> jobs(std::initializer_list<int> heads,
                                      std::initializer_list<std::pair<int, int>> rows_stages) {
    std::vector<CompileJob> out;
    for (int h : heads)
      for (auto [r, s] : rows_stages)
        out.push_back({Params{{"heads", h}, {"kv_dtype", 0}}, Params{{"rows", r}, {"stages", s}}});
    return out;
  }
};

TEST_F(JitCompiler, CandidatesShareProgramsAndKeepTheirOrder) {
  auto js = jobs({8, 16}, {{16, 1}, {32, 1}, {16, 2}});
  auto batch = compile_candidates(family, js, compiler, settings("gfx90a", 2));
  EXPECT_EQ(compiler.calls, 3) << "6 candidates need 3 distinct programs";
  EXPECT_EQ(batch.stats.programs, 3u);
  ASSERT_EQ(batch.outcomes.size(), js.size());
  for (size_t i = 0; i < js.size(); ++i) {
    ASSERT_TRUE(batch.outcomes[i].ok()) << batch.outcomes[i].error;
    auto want = fmt::format("lowered toy<{}, {}>", js[i].config.at("rows"), js[i].config.at("stages"));
    EXPECT_EQ(batch.outcomes[i].result->lowered_names, std::vector<std::string>{want});
    std::string code(batch.outcomes[i].result->code.begin(), batch.outcomes[i].result->code.end());
    EXPECT_TRUE(code.ends_with("|gfx90a")) << "the arch must reach the compiler";
    EXPECT_NE(code.find("__global__ void toy"), std::string::npos) << "the rendered template must reach the compiler";
  }
}

TEST_F(JitCompiler, OneFailingProgramDoesNotStopTheOthers) {
  auto js = jobs({8}, {{16, 1}, {99, 1}, {98, 1}, {32, 1}});
  auto batch = compile_candidates(family, js, compiler, settings("gfx90a", 2));
  EXPECT_TRUE(batch.outcomes[0].ok());
  EXPECT_TRUE(batch.outcomes[3].ok());
  ASSERT_FALSE(batch.outcomes[1].ok());
  EXPECT_NE(batch.outcomes[1].error.find("toy.hip:3: error: bad tile"), std::string::npos)
      << "the compiler log must be kept: " << batch.outcomes[1].error;
  ASSERT_FALSE(batch.outcomes[2].ok());
  EXPECT_NE(batch.outcomes[2].error.find("internal compiler error"), std::string::npos) << batch.outcomes[2].error;
  EXPECT_EQ(batch.stats.failed_programs, 2u);
}

TEST_F(JitCompiler, ResultWithMissingLoweredNamesIsAFailure) {
  compiler.drop_a_name = true;
  auto batch = compile_candidates(family, jobs({8}, {{16, 1}}), compiler, settings("gfx90a"));
  ASSERT_FALSE(batch.outcomes[0].ok());
  EXPECT_NE(batch.outcomes[0].error.find("lowered names"), std::string::npos) << batch.outcomes[0].error;
}

TEST_F(JitCompiler, CacheServesRepeatsAndMissesWhenTheTemplateChanges) {
  CodeCache cache(cache_dir.path());
  auto js = jobs({8}, {{16, 1}, {32, 1}, {99, 1}});
  CompileSettings s = settings("gfx90a", 2, &cache);
  auto first = compile_candidates(family, js, compiler, s);
  EXPECT_EQ(compiler.calls, 3);
  EXPECT_EQ(first.stats.cache_hits, 0u);

  auto second = compile_candidates(family, js, compiler, s);
  EXPECT_EQ(compiler.calls, 4) << "only the failed program is compiled again (errors are not cached)";
  EXPECT_EQ(second.stats.cache_hits, 2u);
  EXPECT_TRUE(second.outcomes[0].cache_hit);
  EXPECT_EQ(second.outcomes[0].result->code, first.outcomes[0].result->code);

  templates.write("toy/toy.hip", "template <int R, int S> __global__ void toy() { /* changed */ }\n");
  auto third = compile_candidates(family, js, compiler, s);
  EXPECT_EQ(third.stats.cache_hits, 0u) << "a changed template must never hit the old entries";
  EXPECT_EQ(compiler.calls, 7);

  s.arch = "gfx942";
  compile_candidates(family, js, compiler, s);
  EXPECT_EQ(compiler.calls, 10) << "another arch must never hit";

  compiler.build = "build 2";  // a patch release of the same version
  const auto patched = compile_candidates(family, js, compiler, s);
  EXPECT_EQ(patched.stats.cache_hits, 0u) << "another build of the compiler must never hit";
  EXPECT_EQ(compiler.calls, 13);
}

// The identity exists for cache keys: hashing a compiler's library is not paid without a cache.
TEST_F(JitCompiler, NoCacheAsksNoIdentity) {
  compile_candidates(family, jobs({8}, {{16, 1}}), compiler, settings("gfx90a"));
  EXPECT_EQ(compiler.identity_calls, 0);
  CodeCache cache(cache_dir.path());
  compile_candidates(family, jobs({8}, {{16, 1}}), compiler, settings("gfx90a", 0, &cache));
  EXPECT_EQ(compiler.identity_calls, 1);
}

// A cache that cannot store costs only time: every program compiles, and the batch counts the
// failed writes and keeps the first reason for the commands' warning.
TEST_F(JitCompiler, FailedCacheWritesAreCountedWithTheirReason) {
  CodeCache cache(cache_dir.path());
  for (int shard = 0; shard < 256; ++shard)  // a file where each shard directory would go
    std::ofstream(fmt::format("{}/{:02x}", cache_dir.path(), shard)) << "";
  const auto batch = compile_candidates(family, jobs({8}, {{16, 1}, {32, 1}}), compiler, settings("gfx90a", 2, &cache));
  ASSERT_TRUE(batch.outcomes[0].ok());
  ASSERT_TRUE(batch.outcomes[1].ok());
  const auto& failed = batch.stats.cache_writes_failed;
  EXPECT_EQ(failed.count, 2u);
  EXPECT_THAT(failed.first, HasSubstr("cannot create " + cache_dir.path() + "/"));
  EXPECT_THAT(failed.warning(cache),
              AllOf(HasSubstr("2 code objects could not be stored in the cache " + cache_dir.path()),
                    HasSubstr(failed.first), HasSubstr("compiles them again")));

  const auto clean = compile_candidates(family, jobs({8}, {{16, 1}}), compiler, settings("gfx90a", 2, nullptr));
  EXPECT_EQ(clean.stats.cache_writes_failed.count, 0u);
  EXPECT_EQ(clean.stats.cache_writes_failed.warning(cache), "");
}

TEST(CacheWriteFailures, AddingKeepsTheFirstReason) {
  CacheWriteFailures all;
  all.add({});
  all.add({1, "cannot create a"});
  all.add({2, "cannot create b"});
  EXPECT_EQ(all.count, 3u);
  EXPECT_EQ(all.first, "cannot create a");
  const TempDir dir;
  const CodeCache cache(dir.path());
  EXPECT_EQ(CacheWriteFailures({1, "why"}).warning(cache), "warning: 1 code object could not be stored in the cache " +
                                                               dir.path() + ": why; the next run compiles it again");
}

TEST_F(JitCompiler, CorruptCacheEntryIsRecompiled) {
  CodeCache cache(cache_dir.path());
  auto js = jobs({8}, {{16, 1}});
  CompileSettings s = settings("gfx90a", 0, &cache);
  compile_candidates(family, js, compiler, s);
  for (const auto& e : std::filesystem::recursive_directory_iterator(cache_dir.path()))
    if (e.is_regular_file()) std::ofstream(e.path(), std::ios::binary | std::ios::app) << "garbage";
  auto again = compile_candidates(family, js, compiler, s);
  EXPECT_EQ(compiler.calls, 2);
  ASSERT_TRUE(again.outcomes[0].ok());
  EXPECT_FALSE(again.outcomes[0].cache_hit);
  auto third = compile_candidates(family, js, compiler, s);
  EXPECT_TRUE(third.outcomes[0].cache_hit) << "the recompiled entry replaces the corrupt one";
}

TEST_F(JitCompiler, CompilesInParallelUpToJobs) {
  compiler.delay = std::chrono::milliseconds(40);
  auto js = jobs({8}, {{16, 1}, {16, 2}, {16, 3}, {32, 1}, {32, 2}, {32, 3}});
  compile_candidates(family, js, compiler, settings("gfx90a", 4));
  EXPECT_GT(compiler.max_active, 1) << "several programs must compile at once";
  EXPECT_LE(compiler.max_active, 4);
  compiler.max_active = 0;
  compile_candidates(family, js, compiler, settings("gfx90a", 1));
  EXPECT_EQ(compiler.max_active, 1);
}

TEST_F(JitCompiler, ProgressCountsEveryProgram) {
  std::vector<size_t> seen;
  CompileSettings s = settings("gfx90a", 2);
  s.on_progress = [&](size_t done, size_t total) {
    EXPECT_EQ(total, 3u);
    seen.push_back(done);
  };
  compile_candidates(family, jobs({8, 16}, {{16, 1}, {32, 1}, {99, 1}}), compiler, s);
  EXPECT_EQ(seen, (std::vector<size_t>{1, 2, 3}));
}

TEST_F(JitCompiler, MissingTemplateIsAnError) {
  set_template_root(cache_dir.path());
  EXPECT_THROW(compile_candidates(family, jobs({8}, {{16, 1}}), compiler, settings("gfx90a")), Error);
}

}  // namespace
}  // namespace ktune::jit
