// scripts/code_objects_diff.py over real code-object caches: qk_rope_cache programs compiled by
// `ktune compile` (NVRTC for sm_90a, hipRTC for gfx90a) from the embedded templates and from a
// copy of them changed in a comment (the code must be identical) or in one comparison (the
// kernels that use it must differ); unreadable caches and entries are refused.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "cli/cli_run.hpp"

namespace ktune::testing {
namespace {
namespace fs = std::filesystem;

constexpr const char* kRope = "/templates/qk_rope_cache/qk_rope_cache.hip";
constexpr const char* kLine = "    const bool first = j0 < kHalf;";

class CodeObjectsDiff : public ScriptTest {
 protected:
  // A copy of the templates with `from` replaced by `to` in qk_rope_cache's (which must hold it).
  std::string templates_with(const std::string& name, const std::string& from, const std::string& to) {
    const std::string root = dir.path() + "/" + name;
    fs::create_directories(root);
    fs::copy(fs::path(KTUNE_SOURCE_DIR) / "templates", root + "/templates", fs::copy_options::recursive);
    std::ifstream in(root + kRope);
    std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << "the template no longer has: " << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    std::ofstream(root + kRope, std::ios::trunc) << text;
    return root + "/templates";
  }
  // A few programs of qk_rope_cache's smoke space for `arch` into cache `name` (from `templates`,
  // or the embedded copy when empty).
  CliResult compile(const std::string& arch, const std::string& name, const std::string& templates = "") {
    return run_ktune((templates.empty() ? "" : "--templates '" + templates + "' ") +
                     "compile --kernel qk_rope_cache --space smoke --arch " + arch +
                     " --heads 16 --where q_dtype=bf16 --where rope=full --where threads=128 --cache-dir '" +
                     dir.path() + "/" + name + "'");
  }
  CliResult diff(const std::string& a, const std::string& b) {
    return run_command(python_script("code_objects_diff.py") + " '" + dir.path() + "/" + a + "' '" + dir.path() + "/" +
                       b + "'");
  }
  // Compiles the three caches for `arch`: embedded, a comment added, the comparison changed.
  void compile_three(const std::string& arch) {
    for (const auto& [name, templates] :
         {std::pair<std::string, std::string>{"main", ""},
          {"comment", templates_with("c", kLine, std::string(kLine) + "  // (a comment)")},
          {"changed", templates_with("x", "j0 < kHalf;", "j0 <= kHalf;")}}) {
      const auto r = compile(arch, name, templates);
      ASSERT_EQ(r.status, 0) << r.output;
    }
  }
  void expect_verdicts(const std::string& target) {
    const auto same = diff("main", "comment");
    EXPECT_EQ(same.status, 0) << same.output;
    EXPECT_TRUE(contains(same.output, " differ, 0 only in the old cache, 0 only in the new")) << same.output;
    EXPECT_TRUE(contains(same.output, "kernels identical, 0 differ")) << same.output;
    const auto changed = diff("main", "changed");
    EXPECT_EQ(changed.status, 1) << changed.output;
    EXPECT_TRUE(contains(changed.output, "differs: " + target)) << changed.output;
    EXPECT_TRUE(contains(changed.output, " _ZN5ktune13qk_rope_cacheI")) << changed.output;
  }
};

TEST_F(CodeObjectsDiff, NvrtcCubinsAreIdenticalUnderACommentAndDifferUnderACodeChange) {
  const auto probe = compile("sm_90a", "probe");
  SKIP_WITHOUT_COMPILER(probe, "sm_90a");
  compile_three("sm_90a");
  expect_verdicts("cuda e_flags");
}

TEST_F(CodeObjectsDiff, HiprtcCodeObjectsAreIdenticalUnderACommentAndDifferUnderACodeChange) {
  const auto probe = compile("gfx90a", "probe");
  SKIP_WITHOUT_COMPILER(probe, "gfx90a");
  compile_three("gfx90a");
  expect_verdicts("amdgpu e_flags");
}

TEST_F(CodeObjectsDiff, KernelsOfOneCacheOnlyAreReported) {
  const auto probe = compile("sm_90a", "main");
  SKIP_WITHOUT_COMPILER(probe, "sm_90a");
  ASSERT_EQ(run_ktune("compile --kernel qk_rope_cache --space smoke --arch sm_90a --heads 16 --where q_dtype=bf16 "
                      "--where rope=full --where threads=128,256 --cache-dir '" +
                      dir.path() + "/more'")
                .status,
            0);
  const auto r = diff("main", "more");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "only in " + dir.path() + "/more: cuda e_flags")) << r.output;
  EXPECT_TRUE(contains(r.output, "0 differ, 0 only in the old cache")) << r.output;
}

TEST_F(CodeObjectsDiff, WhatIsNoCacheIsRefused) {
  fs::create_directories(dir.path() + "/empty");
  const auto empty = diff("empty", "empty");
  EXPECT_EQ(empty.status, 2) << empty.output;
  EXPECT_TRUE(contains(empty.output, "holds no code objects")) << empty.output;
  const auto missing = diff("nowhere", "empty");
  EXPECT_EQ(missing.status, 2) << missing.output;
  EXPECT_TRUE(contains(missing.output, "is no directory")) << missing.output;
  fs::create_directories(dir.path() + "/text/ab");
  dir.write("text/ab/abcd.kco", "KTCOBJ01 not an ELF at all");
  const auto text = diff("text", "text");
  EXPECT_EQ(text.status, 2) << text.output;
  EXPECT_TRUE(contains(text.output, "holds no 64-bit little-endian ELF code object")) << text.output;
  dir.write("text/ab/abcd.kco", std::string("KTCOBJ01\x7f"
                                            "ELF\x02\x01",
                                            14) +
                                    "truncated");
  const auto truncated = diff("text", "text");
  EXPECT_EQ(truncated.status, 2) << truncated.output;
  EXPECT_TRUE(contains(truncated.output, "malformed ELF code object")) << truncated.output;
  fs::create_directories(dir.path() + "/folder/cd/cdef.kco");
  const auto folder = diff("folder", "folder");
  EXPECT_EQ(folder.status, 2) << folder.output;
  EXPECT_TRUE(contains(folder.output, "cannot read " + dir.path() + "/folder/cd/cdef.kco")) << folder.output;
}

}  // namespace
}  // namespace ktune::testing
