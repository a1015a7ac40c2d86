// `ktune package` end to end: the verb writes the package of a database, and refuses an unknown
// arch before it opens anything.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "backend/backend.hpp"
#include "unit/package_support.hpp"

namespace ktune {
namespace {

using ::testing::HasSubstr;
using namespace package_test;

TEST(PackageCli, WritesThePackageOrRefusesTheArch) {
  if (!std::filesystem::exists(KTUNE_EXE)) GTEST_SKIP() << KTUNE_EXE << " is not on this machine (the build tree's ktune)";
  if (!backend::for_arch("sm_90a").compiler_available())
    GTEST_SKIP() << "no NVRTC: " << backend::for_arch("sm_90a").compiler_unavailable_reason();
  MlaDb m;
  fill_two_programs(m, "sm_90a", "NVIDIA H200");
  TempDir dir;
  const auto command = [&](const std::string& arch, const std::string& out) {
    return shell(fmt::format("'{}' package --db '{}' --kernel mla_decode --arch {} --no-cache --out '{}'", KTUNE_EXE,
                             m.path(), arch, out),
                 dir.file("log"));
  };
  const auto ok = command("sm_90a", dir.file("pkg"));
  ASSERT_EQ(ok.status, 0) << ok.output;
  EXPECT_THAT(ok.output, HasSubstr("2 code object(s), 4 file(s) + manifest.json"));
  EXPECT_TRUE(std::filesystem::exists(dir.file("pkg/manifest.json")));
  EXPECT_TRUE(std::filesystem::exists(dir.file("pkg/mla_decode_package.hpp")));

  const auto refused = command("sm_12x", dir.file("refused"));
  EXPECT_NE(refused.status, 0);
  EXPECT_THAT(refused.output, HasSubstr("unknown target 'sm_12x'"));
  EXPECT_FALSE(std::filesystem::exists(dir.file("refused")));
}

}  // namespace
}  // namespace ktune
