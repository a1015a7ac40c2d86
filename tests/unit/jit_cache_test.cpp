#include <chrono>
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "jit/cache.hpp"
#include "support/env_var.hpp"
#include "sweep_test_support.hpp"

namespace ktune::jit {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::TempDir;

backend::CompileRequest request() {
  return {"__global__ void k() {}", "toy.hip", {"toy<16, 2>", "toy<32, 1>"}, "gfx90a", {"-DX=1"}};
}

backend::CompileResult result() {
  return {{'\x7f', 'E', 'L', 'F', '\0', '\x01'}, {"_Z3toyILi16ELi2EEvv", "_Z3toyILi32ELi1EEvv"}, "warning: x"};
}

size_t files_in(const std::string& dir) {
  size_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) n += e.is_regular_file();
  return n;
}

TEST(JitCache, StoredEntryLoadsBackIdentical) {
  TempDir tmp;
  CodeCache cache(tmp.path());
  auto key = CodeCache::key(request(), "hiprtc 5.2");
  EXPECT_FALSE(cache.load(key));
  ASSERT_EQ(cache.store(key, result()), "");
  auto hit = cache.load(key);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->code, result().code);
  EXPECT_EQ(hit->lowered_names, result().lowered_names);
  EXPECT_EQ(hit->log, result().log);
  EXPECT_EQ(files_in(tmp.path()), 1u) << "no temporary file may be left behind";
}

TEST(JitCache, KeyChangesWithEveryComponent) {
  const auto base = CodeCache::key(request(), "hiprtc 5.2");
  EXPECT_EQ(base.size(), 32u);
  EXPECT_EQ(base, CodeCache::key(request(), "hiprtc 5.2")) << "the key must be deterministic";
  EXPECT_NE(base, CodeCache::key(request(), "hiprtc 5.3"));
  auto changed = [&](auto mutate) {
    auto r = request();
    mutate(r);
    return CodeCache::key(r, "hiprtc 5.2") != base;
  };
  EXPECT_TRUE(changed([](auto& r) { r.source += " "; }));
  EXPECT_TRUE(changed([](auto& r) { r.source_name = "other.hip"; }));
  EXPECT_TRUE(changed([](auto& r) { r.name_expressions[1] = "toy<32, 2>"; }));
  EXPECT_TRUE(changed([](auto& r) { std::swap(r.name_expressions[0], r.name_expressions[1]); }));
  EXPECT_TRUE(changed([](auto& r) { r.name_expressions.pop_back(); }));
  EXPECT_TRUE(changed([](auto& r) { r.arch = "gfx942"; }));
  EXPECT_TRUE(changed([](auto& r) { r.options.push_back("-O0"); }));
  EXPECT_TRUE(changed([](auto& r) { r.options = {"-DX=", "1"}; })) << "length prefixes keep fields apart";
  EXPECT_FALSE(changed([](auto&) {}));
}

// Every way an entry can be damaged reads as a miss, and the damaged file is removed.
TEST(JitCache, CorruptEntryIsAMissAndIsRemoved) {
  TempDir tmp;
  CodeCache cache(tmp.path());
  auto key = CodeCache::key(request(), "v");
  auto damage = [&](auto how) {
    ASSERT_EQ(cache.store(key, result()), "");
    std::string bytes;
    {
      std::ifstream f(cache.path_of(key), std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(f), {});
    }
    how(bytes);
    std::ofstream(cache.path_of(key), std::ios::binary | std::ios::trunc) << bytes;
  };
  auto expect_miss = [&](const char* what) {
    EXPECT_FALSE(cache.load(key)) << what;
    EXPECT_FALSE(fs::exists(cache.path_of(key))) << what;
  };
  damage([](std::string& b) { b.back() ^= 1; });
  expect_miss("flipped bit in the payload");
  damage([](std::string& b) { b.resize(b.size() - 3); });
  expect_miss("truncated");
  damage([](std::string& b) { b[0] = 'X'; });
  expect_miss("bad magic");
  damage([](std::string& b) { b.clear(); });
  expect_miss("empty file");
  damage([](std::string& b) { b += "tail"; });
  expect_miss("trailing bytes");
  damage([](std::string&) {});
  EXPECT_TRUE(cache.load(key)) << "an undamaged entry must still load";
}

TEST(JitCache, EntryUnderAnotherKeysNameIsAMiss) {
  TempDir tmp;
  CodeCache cache(tmp.path());
  auto a = CodeCache::key(request(), "v1"), b = CodeCache::key(request(), "v2");
  ASSERT_EQ(cache.store(a, result()), "");
  fs::create_directories(fs::path(cache.path_of(b)).parent_path());
  fs::copy_file(cache.path_of(a), cache.path_of(b));
  EXPECT_FALSE(cache.load(b));
  EXPECT_TRUE(cache.load(a));
}

// Whatever sits at an entry's path, a load is a miss (the program is compiled), never an error.
TEST(JitCache, ADirectoryAtAnEntrysPathIsAMiss) {
  TempDir tmp;
  CodeCache cache(tmp.path());
  const auto key = CodeCache::key(request(), "v1");
  fs::create_directories(cache.path_of(key));  // reading it failed: "Is a directory"
  EXPECT_FALSE(cache.load(key));
  EXPECT_THAT(cache.store(key, result()), HasSubstr("cannot rename")) << "a directory cannot be replaced by an entry";
  fs::remove(cache.path_of(key));
  ASSERT_EQ(cache.store(key, result()), "");
  EXPECT_TRUE(cache.load(key));
}

// A process killed while writing leaves its temporary file; storing in that shard directory
// removes those a day old, and never one that may be in progress.
TEST(JitCache, AbandonedTemporaryFilesGoWhenTheirShardIsWrittenTo) {
  TempDir tmp;
  CodeCache cache(tmp.path());
  const auto key = CodeCache::key(request(), "v1");
  const auto shard = fs::path(cache.path_of(key)).parent_path();
  fs::create_directories(shard);
  const auto old = shard / "0123.kco.tmp.host.42.0", fresh = shard / "0123.kco.tmp.host.43.0";
  std::ofstream(old) << "half an entry";
  std::ofstream(fresh) << "an entry being written";
  fs::last_write_time(old, fs::file_time_type::clock::now() - std::chrono::hours(25));
  ASSERT_EQ(cache.store(key, result()), "");
  EXPECT_FALSE(fs::exists(old));
  EXPECT_TRUE(fs::exists(fresh));
  EXPECT_TRUE(cache.load(key));
}

TEST(JitCache, DefaultDirectoryFollowsTheEnvironment) {
  const test_support::EnvVar home("HOME", "/h"), xdg("XDG_CACHE_HOME", "/x"), own("KTUNE_CACHE_DIR", "/k");
  EXPECT_EQ(CodeCache::default_dir(), "/k");
  ::unsetenv("KTUNE_CACHE_DIR");
  EXPECT_EQ(CodeCache::default_dir(), "/x/ktune");
  ::unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(CodeCache::default_dir(), "/h/.cache/ktune");
  ::unsetenv("HOME");
  EXPECT_THROW(CodeCache::default_dir(), Error);
}

TEST(JitCache, UnwritableDirectoryIsAClearError) {
  TempDir tmp;
  auto file = tmp.write("plain-file", "x");
  try {
    CodeCache cache(file + "/cache");
    FAIL() << "a cache under a plain file must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(file), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ktune::jit
