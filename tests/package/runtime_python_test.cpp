// ktune_runtime's C API called from Python with ctypes (tests/package/python/ctypes_runtime_test.py),
// with a KTUNE_DB that declares a gap; needs python3, no GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "dispatch/runtime/compiled_table.hpp"
#include "unit/package_support.hpp"

namespace ktune::runtime {
namespace {

using namespace package_test;

TEST(RuntimePython, CtypesCallsTheCApi) {
  if (std::system("python3 -c pass >/dev/null 2>&1") != 0) GTEST_SKIP() << "python3 is not installed";
  if (!std::filesystem::exists(KTUNE_RUNTIME_LIBRARY))
    GTEST_SKIP() << KTUNE_RUNTIME_LIBRARY << " is not on this machine (the build tree's library)";
  MlaDb m;
  m.run("sm_90a", "NVIDIA H200", std::string(find_table(compiled_tables(), kMlaDecode, "sm_90a")->template_hash));
  m.declared_gap("sm_90a", mla_key(16, 2, false, num::KvDtype::fp8_e4m3fn),
                 mla_key(16, 4, false, num::KvDtype::bf16).canonical());
  TempDir dir;
  const auto script = std::string(KTUNE_SOURCE_DIR) + "/tests/package/python/ctypes_runtime_test.py";
  const auto run = [&](const std::string& db) {
    return shell(fmt::format("python3 '{}' '{}' '{}'", script, KTUNE_RUNTIME_LIBRARY, db), dir.file("python.log"));
  };
  const auto good = run(m.path());
  EXPECT_EQ(good.status, 0) << good.output;
  EXPECT_THAT(good.output, ::testing::HasSubstr("ok    declared gap: status gap with its fallback key"));
  // The script can fail: without the gap's database its gap check must.
  const auto without = run(dir.file("no.db"));
  EXPECT_NE(without.status, 0);
  EXPECT_THAT(without.output, ::testing::HasSubstr("FAIL  declared gap"));
}

}  // namespace
}  // namespace ktune::runtime
